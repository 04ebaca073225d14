// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

// A whole disk image (--image FILE) opened as a target root: its partition table read with
// libblkid (util-linux, as libmount), its partitions attached to loop devices at their
// offsets (this works where the running kernel does not scan loop partitions), and the
// root and boot partitions mounted where the image's own fstab says, in a mount namespace
// of rtprov's own.
namespace rtprov::target {

// One partition of the image, as its table and its file system say.
struct ImagePartition {
    unsigned number = 0;      // 1, 2, ... as the table numbers it
    std::uint64_t offset = 0; // bytes from the start of the image
    std::uint64_t size = 0;   // bytes
    std::string partuuid;     // GPT's partition GUID, MBR's '<disk id>-<NN>'
    std::string partlabel;    // GPT's partition name
    std::string fstype;       // the file system blkid found ('vfat', 'ext4'); "" none
    std::string label;        // the file system's label
    std::string uuid;         // the file system's UUID
};

struct ImageLayout {
    std::string table; // "dos" (MBR) or "gpt"
    std::vector<ImagePartition> partitions;
};

// What 'head', the first bytes of 'file', says it is when not a raw disk: compressed
// ("xz", "zstd", "gzip", "bzip2") or a virtual machine's disk format ("qcow2", "vmdk",
// "vhdx", "vdi"), with the shell command (quoted) that makes the raw image and the file it
// makes; nullopt for anything else. Pure.
struct Compression {
    std::string format;
    bool disk_format = false; // qemu-img converts it, rather than a decompressor
    std::string command;
    std::string output;
};
std::optional<Compression> compression_of(const std::string& head, const std::string& file);

// The partition an fstab source names by an identifier (PARTUUID=, UUID=, LABEL=,
// PARTLABEL=, or the same under /dev/disk/by-*/), compared as blkid does (PARTUUID and
// UUID without case); nullopt when 'source' names none by identifier (a device name
// such as /dev/mmcblk0p1, or pi-gen's BOOTDEV placeholder). 'by_id' is set to whether
// the source is an identifier at all. Pure.
std::optional<std::size_t> partition_named(const ImageLayout& layout, const std::string& source,
                                           bool& by_id);

// The root partition: the only one holding a Linux root file system (ext2/3/4, btrfs,
// xfs, f2fs), or among several the one labelled 'rootfs' or 'root'. Throws rtprov::Error
// naming the partitions when there is none or no way to choose. Pure.
std::size_t root_partition(const ImageLayout& layout, const std::string& image);

// "partition 2 (ext4 'rootfs', 1.9 GiB)". Pure.
std::string describe(const ImagePartition& partition);

// Reads the image's partition table and each partition's file system. Throws
// rtprov::Error: not a regular file, compressed, no partition table.
ImageLayout read_image_layout(const std::string& image);

// The image opened, attached and mounted; undone by the destructor (unmounted, and the
// loop devices, attached with autoclear, go with the last reference). A kill ends the
// mount namespace and with it the mounts and the loop devices: nothing is left attached.
// Read-only sessions (plan, status) attach the loop devices read-only and mount without
// replaying a journal, so no byte of the image changes.
class ImageSession {
  public:
    // Throws rtprov::Error, having undone whatever it did: the image in use (another
    // rtprov holds it, or a loop device has it attached), compressed, without a
    // partition table or a root, a boot partition its fstab names that it lacks, a file
    // system the running kernel cannot mount, not root. Everything is mounted read-only;
    // 'writable' opens the image for make_writable() and holds it (one rtprov per image)
    // from the first read to the last write.
    ImageSession(const std::string& image, bool writable);
    ~ImageSession();
    ImageSession(const ImageSession&) = delete;
    ImageSession& operator=(const ImageSession&) = delete;

    // The folder this process mounts an image's root on: /run/rtprov/image/PID, in a
    // tmpfs its mount namespace alone sees (none of it is left on the host).
    static std::string mount_folder();
    // Where the image's root is mounted (the --root the commands work on).
    const std::string& root() const { return m_root; }
    const std::string& image() const { return m_image; }
    // The image as the command line named it ('pi.img'): the display name of its root
    // (fs::Root), whose mount folder no one else can see: 'pi.img:/etc/fstab'.
    const std::string& name() const { return m_name; }
    // One line per mounted partition: "partition 2 (ext4 'rootfs', 1.9 GiB) on /".
    const std::vector<std::string>& mounted() const { return m_described; }
    // What the read-only look may miss: "partition 2 (...) was not cleanly unmounted: ...".
    const std::vector<std::string>& warnings() const { return m_warnings; }
    // What is free on the file system that holds the in-root path 'path': bytes, and
    // inodes (files that can still be made; the largest number on a file system that
    // does not count them, FAT); 0 and 0 when it cannot be read.
    struct Room {
        std::uint64_t bytes = 0;
        std::uint64_t inodes = 0;
    };
    Room room(const std::string& path) const;
    // The mount (in-root path) holding 'path': "/", "/boot/firmware".
    std::string mount_of(const std::string& path) const;

    // Mounts the same partitions again read-write (only a session opened 'writable'),
    // with the same checks; throws rtprov::Error having mounted nothing. The root()
    // path stays; what was opened through it before must be let go first.
    void make_writable();
    bool writable() const { return m_writable; }

    // Ends what commands run in the image left running there, writes everything back and
    // unmounts; throws rtprov::Error when the image could not
    // be written (the destructor, on the error paths, only tries).
    void close();

  private:
    // Mounts the root and the boot partitions; throws having mounted nothing.
    void mount_all(const struct ImageLayout& layout, bool writable);
    void unmount_all(std::string* failed);

    std::string m_image; // absolute
    std::string m_name;  // as given
    ImageLayout m_layout;
    bool m_writable = false;      // mounted read-write
    std::vector<dev_t> m_devices; // the mounted partitions' devices (for holders at the end)
    int m_image_fd = -1;
    std::string m_read_only_why; // why an image opened for apply or rollback cannot be written
    std::string m_root;          // host path of the mounted root
    std::vector<std::string> m_mount_points; // in-root paths, in mount order ("/" first)
    std::vector<std::string> m_described;
    std::vector<std::string> m_warnings;
};

} // namespace rtprov::target
