// SPDX-License-Identifier: Apache-2.0
#include "provisioner/target/disk_image.hpp"

#include "provisioner/core/error.hpp"
#include "provisioner/core/shared_library.hpp"
#include "provisioner/core/text.hpp"
#include "provisioner/fs/root.hpp"
#include "provisioner/system/processes.hpp"
#include "provisioner/target/loop_users.hpp"
#include "provisioner/target/mounts.hpp"

#include <blkid/blkid.h>
#include <fcntl.h>
#include <linux/loop.h>
#include <sched.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>

namespace stdfs = std::filesystem;

namespace rtprov::target {

namespace {

// The libblkid functions used here, loaded when an image is first opened
// (core::SharedLibrary says why it is not linked).
#define RTPROV_LIBBLKID_FUNCTIONS(X)                                                               \
    X(blkid_do_safeprobe)                                                                          \
    X(blkid_free_probe)                                                                            \
    X(blkid_new_probe)                                                                             \
    X(blkid_partition_get_name)                                                                    \
    X(blkid_partition_get_partno)                                                                  \
    X(blkid_partition_get_size)                                                                    \
    X(blkid_partition_get_start)                                                                   \
    X(blkid_partition_get_uuid)                                                                    \
    X(blkid_partition_is_extended)                                                                 \
    X(blkid_partlist_get_partition)                                                                \
    X(blkid_partlist_get_table)                                                                    \
    X(blkid_partlist_numof_partitions)                                                             \
    X(blkid_parttable_get_type)                                                                    \
    X(blkid_probe_enable_partitions)                                                               \
    X(blkid_probe_enable_superblocks)                                                              \
    X(blkid_probe_get_partitions)                                                                  \
    X(blkid_probe_lookup_value)                                                                    \
    X(blkid_probe_set_device)                                                                      \
    X(blkid_probe_set_partitions_flags)                                                            \
    X(blkid_probe_set_superblocks_flags)

RTPROV_DL_STRUCT(LibBlkid, RTPROV_LIBBLKID_FUNCTIONS)
RTPROV_DL_LOADER(LibBlkid, libblkid, "libblkid.so.1", RTPROV_PACKAGE_LIBBLKID,
                 RTPROV_LIBBLKID_FUNCTIONS)

using Probe = std::unique_ptr<blkid_struct_probe, void (*)(blkid_probe)>;

constexpr std::uint64_t k_sector = 512; // libblkid's partition start and size unit

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

std::string size_text(std::uint64_t bytes) {
    char buffer[32];
    if (bytes >= (std::uint64_t{1} << 30))
        std::snprintf(buffer, sizeof buffer, "%.1f GiB", double(bytes) / double(1u << 30));
    else
        std::snprintf(buffer, sizeof buffer, "%.0f MiB", double(bytes) / double(1u << 20));
    return buffer;
}

bool is_linux_root_fs(const std::string& fstype) {
    for (const char* t : {"ext4", "ext3", "ext2", "btrfs", "xfs", "f2fs"})
        if (fstype == t)
            return true;
    return false;
}

std::string partitions_text(const ImageLayout& layout) {
    constexpr std::size_t k_shown = 8;
    std::string out;
    for (std::size_t i = 0; i < std::min(layout.partitions.size(), k_shown); ++i)
        out += (out.empty() ? "" : ", ") + describe(layout.partitions[i]);
    if (layout.partitions.size() > k_shown)
        out += " and " + std::to_string(layout.partitions.size() - k_shown) + " more";
    return out.empty() ? std::string("none") : out;
}

// A file system of a partition of the image: TYPE, LABEL, UUID.
void probe_file_system(const LibBlkid& b, int fd, ImagePartition& p) {
    Probe probe(b.blkid_new_probe(), b.blkid_free_probe);
    if (!probe || b.blkid_probe_set_device(probe.get(), fd, static_cast<blkid_loff_t>(p.offset),
                                           static_cast<blkid_loff_t>(p.size)) != 0)
        return;
    b.blkid_probe_enable_superblocks(probe.get(), 1);
    b.blkid_probe_set_superblocks_flags(probe.get(),
                                        BLKID_SUBLKS_TYPE | BLKID_SUBLKS_LABEL | BLKID_SUBLKS_UUID);
    if (b.blkid_do_safeprobe(probe.get()) != 0)
        return;
    auto value = [&](const char* name) {
        const char* data = nullptr;
        return b.blkid_probe_lookup_value(probe.get(), name, &data, nullptr) == 0 && data
                   ? std::string(data)
                   : std::string();
    };
    p.fstype = value("TYPE");
    p.label = value("LABEL");
    p.uuid = value("UUID");
}

// The running system, whose /proc and /sys say what keeps an image in use.
const system::SysRoot& running_system() {
    static const system::SysRoot sys("/");
    return sys;
}

// The folders /run/rtprov/image-PID rtprov made before its sessions mounted a tmpfs of
// their own (ImageSession), whose rtprov is gone (its namespace, and the mounts in it,
// went with it): removed when empty, as they are then.
void remove_stale_mount_folders(const std::string& parent) {
    std::error_code ec;
    for (const auto& entry : stdfs::directory_iterator(parent, ec)) {
        const std::string name = entry.path().filename().string();
        if (name.rfind("image-", 0) != 0)
            continue;
        const std::string pid = name.substr(6);
        if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos)
            continue;
        if (pid.size() > 9)
            continue; // no pid is this long
        if (::kill(std::stoi(pid), 0) != 0 && errno == ESRCH)
            ::rmdir(entry.path().c_str()); // only an empty folder goes
    }
}

// Ends what commands run in the image left running (a daemon an install script started,
// in run_in_root's own mount namespace, where it keeps the image's file systems and with
// them its loop devices): this process's descendants, SIGKILLed (the image is not a
// running system), reaped, waited for up to 5 s. Returns those still there.
std::vector<std::string> end_descendants() {
    std::vector<std::string> left;
    for (int round = 0; round < 50; ++round) {
        left.clear();
        for (int pid : system::descendants(running_system(), ::getpid())) {
            left.push_back(system::process_name(running_system(), pid));
            ::kill(pid, SIGKILL);
        }
        while (::waitpid(-1, nullptr, WNOHANG) > 0) {
        }
        if (left.empty())
            break;
        ::usleep(100'000);
    }
    return left;
}

// Why the image's loop devices stay attached after the unmount, and what frees them: a
// loop device (attached with 'losetup -f FILE') or a swap file ('swapon FILE') a command
// in the image set up on a file in it keeps that file system alive, and with it the loop
// device under it (autoclear frees that only when nothing uses it). 'swaps': those of
// the image that were on before the unmount.
std::string still_attached_why(const std::vector<dev_t>& devices,
                               const std::vector<ImageSwap>& swaps) {
    std::vector<std::string> why;
    if (const auto inner = loops_on(running_system(), devices); !inner.empty())
        why.push_back(inner_loops_text(inner));
    for (const ImageSwap& swap : swaps)
        why.push_back(image_swap_text(swap));
    if (why.empty())
        return "in use after the unmount by something other than a loop device or a swap file "
               "on a file in the image; they free themselves once it lets go";
    return core::join(why, "; ");
}

// Whether the ext3/ext4 file system at 'offset' has a journal to replay: the superblock
// (at 1024 bytes) has the RECOVER incompatible feature (0x4 in s_feature_incompat, at
// 0x60 in it; the kernel's Documentation/filesystems/ext4/super.rst).
bool needs_recovery(int fd, std::uint64_t offset) {
    unsigned char incompat[4] = {};
    if (::pread(fd, incompat, sizeof incompat, off_t(offset + 1024 + 0x60)) != sizeof incompat)
        return false;
    return (incompat[0] & 0x4) != 0; // little-endian
}

// Attaches [offset, offset+size) of the image to a free loop device, with autoclear;
// returns the device's descriptor (the caller closes it once mounted) and its path.
std::pair<int, std::string> attach_loop(int image_fd, const std::string& image,
                                        std::uint64_t offset, std::uint64_t size, bool writable) {
    const int control = ::open("/dev/loop-control", O_RDWR | O_CLOEXEC);
    if (control < 0)
        throw Error("cannot open /dev/loop-control: " + std::string(std::strerror(errno)) +
                    "; rtprov needs loop devices to open an image (modprobe loop)");
    for (int attempt = 0; attempt < 16; ++attempt) {
        const int number = ::ioctl(control, LOOP_CTL_GET_FREE);
        if (number < 0) {
            const int error = errno;
            ::close(control);
            throw Error("no free loop device: " + std::string(std::strerror(error)));
        }
        const std::string device = "/dev/loop" + std::to_string(number);
        struct stat st {};
        if (::stat(device.c_str(), &st) != 0) // no devtmpfs or udev made the node
            ::mknod(device.c_str(), S_IFBLK | 0660, makedev(7, unsigned(number)));
        const int fd = ::open(device.c_str(), (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC);
        if (fd < 0)
            continue;
        loop_config config{};
        config.fd = static_cast<__u32>(image_fd);
        config.info.lo_offset = offset;
        config.info.lo_sizelimit = size;
        config.info.lo_flags = LO_FLAGS_AUTOCLEAR | (writable ? 0 : LO_FLAGS_READ_ONLY);
        std::snprintf(reinterpret_cast<char*>(config.info.lo_file_name), LO_NAME_SIZE, "%s",
                      image.c_str());
        if (::ioctl(fd, LOOP_CONFIGURE, &config) == 0) {
            ::close(control);
            return {fd, device};
        }
        const int error = errno;
        ::close(fd);
        if (error != EBUSY) {
            ::close(control);
            throw Error("cannot attach " + rtprov::quoted(image) + " to " + device + ": " +
                        std::strerror(error));
        }
    }
    ::close(control);
    throw Error("cannot attach " + rtprov::quoted(image) +
                " to a loop device: every free one was taken first");
}

} // namespace

std::optional<Compression> compression_of(const std::string& head, const std::string& file) {
    struct Magic {
        const char* bytes;
        std::size_t length;
        const char* format;
        const char* tool; // decompresses: 'tool -dk FILE.suffix', 'tool -dc FILE > OUT'
        const char* suffix;
    };
    static const Magic k_magic[] = {
        {"\xFD\x37\x7A\x58\x5A\x00", 6, "xz", "xz", ".xz"},
        {"\x28\xB5\x2F\xFD", 4, "zstd", "zstd", ".zst"},
        {"\x1F\x8B", 2, "gzip", "gzip", ".gz"},
        {"BZh", 3, "bzip2", "bzip2", ".bz2"},
        // virtual machines' disk formats: qemu-img makes a raw image of them
        {"QFI\xFB", 4, "qcow2", nullptr, nullptr},
        {"KDMV", 4, "vmdk", nullptr, nullptr},
        {"vhdxfile", 8, "vhdx", nullptr, nullptr},
        {"<<< Oracle VM VirtualBox Disk Image >>>", 39, "vdi", nullptr, nullptr}};
    for (const Magic& m : k_magic) {
        if (head.size() < m.length || head.compare(0, m.length, m.bytes, m.length) != 0)
            continue;
        Compression c;
        c.format = m.format;
        c.disk_format = m.tool == nullptr;
        const std::string suffix = m.suffix ? m.suffix : "";
        if (!suffix.empty() && file.size() > suffix.size() && file.ends_with(suffix)) {
            c.output = file.substr(0, file.size() - suffix.size());
            c.command = core::shell_command({m.tool, "-dk", file});
        } else {
            c.output = file + ".raw";
            c.command =
                c.disk_format
                    ? core::shell_command({"qemu-img", "convert", "-O", "raw", file, c.output})
                    : core::shell_command({m.tool, "-dc", file}) + " > " +
                          core::shell_command({c.output});
        }
        return c;
    }
    return std::nullopt;
}

std::optional<std::size_t> partition_named(const ImageLayout& layout, const std::string& source,
                                           bool& by_id) {
    std::string kind, value;
    for (const char* prefix : {"PARTUUID", "UUID", "LABEL", "PARTLABEL"}) {
        const std::string tag = std::string(prefix) + "=";
        const std::string dir = "/dev/disk/by-" + lower(prefix) + "/";
        if (source.rfind(tag, 0) == 0) {
            kind = prefix;
            value = source.substr(tag.size());
        } else if (source.rfind(dir, 0) == 0) {
            kind = prefix;
            value = source.substr(dir.size());
        }
        if (!kind.empty())
            break;
    }
    by_id = !kind.empty();
    if (!by_id)
        return std::nullopt;
    if (value.size() >= 2 && value.front() == '"' && value.back() == '"')
        value = value.substr(1, value.size() - 2);
    std::optional<std::size_t> found;
    for (std::size_t i = 0; i < layout.partitions.size(); ++i) {
        const ImagePartition& p = layout.partitions[i];
        const bool match = kind == "PARTUUID" ? lower(p.partuuid) == lower(value)
                           : kind == "UUID"   ? lower(p.uuid) == lower(value)
                           : kind == "LABEL"  ? p.label == value
                                              : p.partlabel == value;
        if (!match || value.empty())
            continue;
        if (found)
            throw Error(source + " names partitions " +
                        std::to_string(layout.partitions[*found].number) + " and " +
                        std::to_string(p.number) +
                        " alike; rtprov does not guess which one the system mounts");
        found = i;
    }
    return found;
}

std::size_t root_partition(const ImageLayout& layout, const std::string& image) {
    std::vector<std::size_t> candidates;
    for (std::size_t i = 0; i < layout.partitions.size(); ++i)
        if (is_linux_root_fs(layout.partitions[i].fstype))
            candidates.push_back(i);
    if (candidates.size() == 1)
        return candidates.front();
    std::vector<std::size_t> labelled;
    for (std::size_t i : candidates)
        if (layout.partitions[i].label == "rootfs" || layout.partitions[i].label == "root")
            labelled.push_back(i);
    if (labelled.size() == 1)
        return labelled.front();
    throw Error("cannot tell which partition of " + rtprov::quoted(image) + " is the root: " +
                (candidates.empty()
                     ? "none holds a Linux root file system (ext4, ext3, ext2, btrfs, xfs, f2fs)"
                     : std::to_string(candidates.size()) +
                           " do, and not exactly one is labelled 'rootfs' or 'root'") +
                " (its partitions: " + partitions_text(layout) +
                "); mount the root yourself and pass --root DIR");
}

std::string describe(const ImagePartition& p) {
    return "partition " + std::to_string(p.number) + " (" +
           (p.fstype.empty() ? std::string("no file system") : p.fstype) +
           (p.label.empty() ? "" : " " + rtprov::quoted(p.label)) + ", " + size_text(p.size) + ")";
}

ImageLayout read_image_layout(const std::string& image) {
    // The type before opening for reading: a FIFO would block, and a device's driver runs
    // when it is opened (a watchdog starts).
    struct stat kind {};
    if (::stat(image.c_str(), &kind) != 0)
        throw Error("cannot open the image " + rtprov::quoted(image) + ": " + std::strerror(errno));
    if (!S_ISREG(kind.st_mode))
        throw Error(rtprov::quoted(image) +
                    " is not a regular file; --image takes a disk image file (for a block "
                    "device or a mounted tree, mount it and pass --root DIR)");
    const int fd = ::open(image.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        throw Error("cannot open the image " + rtprov::quoted(image) + ": " + std::strerror(errno));
    struct Closer {
        int fd;
        ~Closer() { ::close(fd); }
    } closer{fd};
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        throw Error(rtprov::quoted(image) +
                    " is not a regular file; --image takes a disk image file (for a block "
                    "device or a mounted tree, mount it and pass --root DIR)");
    char head[8] = {};
    const ssize_t n = ::pread(fd, head, sizeof head, 0);
    if (auto c = compression_of(std::string(head, n > 0 ? std::size_t(n) : 0), image))
        throw Error(
            rtprov::quoted(image) + " is " +
            (c->disk_format ? "a " + c->format + " disk image" : c->format + "-compressed") +
            "; rtprov works on the raw image: " + (c->disk_format ? "convert" : "decompress") +
            " it first (" + c->command + ") and pass " + rtprov::quoted(c->output));
    const LibBlkid& b = libblkid();
    Probe probe(b.blkid_new_probe(), b.blkid_free_probe);
    if (!probe || b.blkid_probe_set_device(probe.get(), fd, 0, 0) != 0)
        throw Error("cannot read " + rtprov::quoted(image) + " with libblkid");
    b.blkid_probe_enable_superblocks(probe.get(), 0);
    b.blkid_probe_enable_partitions(probe.get(), 1);
    b.blkid_probe_set_partitions_flags(probe.get(), BLKID_PARTS_ENTRY_DETAILS);
    blkid_partlist list = nullptr;
    if (b.blkid_do_safeprobe(probe.get()) == 0)
        list = b.blkid_probe_get_partitions(probe.get());
    blkid_parttable table = list ? b.blkid_partlist_get_table(list) : nullptr;
    if (!table) {
        // a GPT's header is in the second sector; its table unread: the file is cut short
        // (a download not finished) or damaged
        char gpt[8] = {};
        if (::pread(fd, gpt, sizeof gpt, 512) == sizeof gpt && std::memcmp(gpt, "EFI PART", 8) == 0)
            throw Error(rtprov::quoted(image) + " has a GPT header whose partition table " +
                        "cannot be read (the file has " + std::to_string(st.st_size) +
                        " bytes): is it cut short, a download not finished? Get it again, or "
                        "check it with '" +
                        core::shell_command({"sfdisk", "-V", image}) + "'");
        throw Error(rtprov::quoted(image) +
                    " has no partition table (MBR or GPT) rtprov can read; --image takes a "
                    "whole disk image (for a file system image, mount it and pass --root DIR)");
    }
    ImageLayout layout;
    const char* type = b.blkid_parttable_get_type(table);
    layout.table = type ? type : "";
    const int count = b.blkid_partlist_numof_partitions(list);
    for (int i = 0; i < count; ++i) {
        blkid_partition part = b.blkid_partlist_get_partition(list, i);
        if (!part)
            continue;
        ImagePartition p;
        p.number = unsigned(std::max(0, b.blkid_partition_get_partno(part)));
        const auto start = b.blkid_partition_get_start(part);
        const auto size = b.blkid_partition_get_size(part);
        // an MBR's extended partition holds the logical ones: a container, not a file system
        if (start < 0 || size <= 0 || b.blkid_partition_is_extended(part))
            continue;
        p.offset = std::uint64_t(start) * k_sector;
        p.size = std::uint64_t(size) * k_sector;
        if (p.offset >= std::uint64_t(st.st_size) || p.size > std::uint64_t(st.st_size) - p.offset)
            throw Error(rtprov::quoted(image) + ": partition " + std::to_string(p.number) +
                        " reaches past the end of the file (" + std::to_string(st.st_size) +
                        " bytes); the image is cut short or its table is wrong");
        const char* uuid = b.blkid_partition_get_uuid(part);
        const char* name = b.blkid_partition_get_name(part);
        p.partuuid = uuid ? uuid : "";
        p.partlabel = name ? name : "";
        probe_file_system(b, fd, p);
        layout.partitions.push_back(std::move(p));
    }
    // Two partitions over the same blocks would be two file systems' worth of writes to
    // one: refused.
    for (const ImagePartition& a : layout.partitions)
        for (const ImagePartition& c : layout.partitions)
            if (&a != &c && a.offset < c.offset + c.size && c.offset < a.offset + a.size)
                throw Error(rtprov::quoted(image) + ": partitions " + std::to_string(a.number) +
                            " and " + std::to_string(c.number) +
                            " overlap; its partition table is wrong (check it with '" +
                            core::shell_command({"sfdisk", "-V", image}) + "')");
    return layout;
}

ImageSession::ImageSession(const std::string& image, bool writable)
    : m_image(stdfs::absolute(image).string()), m_name(image) {
    m_layout = read_image_layout(m_image);
    m_image_fd = ::open(m_image.c_str(), (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC);
    // A file that cannot be written (its mode, a read-only file system) is still opened
    // for an apply or rollback that finds nothing to change; make_writable() says why.
    if (m_image_fd < 0 && writable && (errno == EACCES || errno == EROFS || errno == EPERM)) {
        m_read_only_why = std::strerror(errno);
        m_image_fd = ::open(m_image.c_str(), O_RDONLY | O_CLOEXEC);
    }
    if (m_image_fd < 0)
        throw Error("cannot open the image " + rtprov::quoted(m_image) + ": " +
                    std::strerror(errno));
    try {
        // One rtprov per image; and none while something else has it attached.
        struct stat st {};
        ::fstat(m_image_fd, &st);
        const system::FileId file{st.st_dev, st.st_ino};
        const system::SysRoot& sys = running_system();
        // (a loop device attached with rtprov's open file holds its lock too, after rtprov)
        if (::flock(m_image_fd, LOCK_EX | LOCK_NB) != 0) {
            const auto loops = loops_holding(sys, file);
            throw Error("another rtprov is working on " + rtprov::quoted(m_image) +
                        (loops.empty() ? std::string()
                                       : ", or a loop device an earlier run left holds it (" +
                                             core::join(loops, ", ") + ")") +
                        "; wait for it to end" +
                        (loops.empty() ? std::string()
                                       : ", or when no rtprov runs: " + freeing_hint(sys, loops)) +
                        " (nothing was changed)");
        }
        if (auto loops = loops_holding(sys, file); !loops.empty())
            throw Error(rtprov::quoted(m_image) + " is in use: attached to " +
                        core::join(loops, ", ") + " (mounted, or set up by hand); unmount it and " +
                        freeing_hint(sys, loops) + " first (nothing was changed)");
        if (auto who = system::lock_holders(sys, file, ::getpid()); !who.empty())
            throw Error(rtprov::quoted(m_image) + " is in use: " + core::join(who, ", ") +
                        " holds a lock on it (a virtual machine running from it?); stop it "
                        "first (nothing was changed)");
        if (auto who = system::processes_with_open(sys, file, true, ::getpid()); !who.empty())
            throw Error(rtprov::quoted(m_image) + " is in use: " + core::join(who, ", ") +
                        " has it open for writing; let it finish first (nothing was changed)");

        // A mount namespace of its own: the mounts below are seen by no other process and
        // end with this one, however it ends.
        // what commands run in the image leave running becomes this process's to end
        ::prctl(PR_SET_CHILD_SUBREAPER, 1);
        if (::unshare(CLONE_NEWNS) != 0)
            throw Error(std::string("cannot make a mount namespace to open the image in: ") +
                        std::strerror(errno) + "; --image needs root");
        if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
            throw Error(std::string("cannot make the mounts private: ") + std::strerror(errno));
        // The mount folder is in a tmpfs of this namespace's own, on the one folder
        // /run/rtprov/image every session shares: a killed run leaves no folder behind,
        // nothing is ever removed, and each session's paths differ by its pid (a swap
        // file the image's commands turned on is named in /proc/swaps by its path).
        const std::string parent = "/run/rtprov";
        ::mkdir(parent.c_str(), 0700);
        remove_stale_mount_folders(parent);
        const std::string shared = parent + "/image";
        if (::mkdir(shared.c_str(), 0700) != 0 && errno != EEXIST)
            throw Error("cannot make " + rtprov::quoted(shared) + ": " + std::strerror(errno));
        if (::mount("rtprov-image", shared.c_str(), "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
                    "mode=0700,size=64k") != 0)
            throw Error("cannot mount a tmpfs on " + rtprov::quoted(shared) +
                        " to open the image under: " + std::strerror(errno));
        m_root = mount_folder();
        if (::mkdir(m_root.c_str(), 0700) != 0)
            throw Error("cannot make " + rtprov::quoted(m_root) + ": " + std::strerror(errno));

        // Read-only first: every refusal below leaves the image as it was.
        mount_all(m_layout, false);
    } catch (...) {
        if (!m_root.empty())
            ::rmdir(m_root.c_str());
        ::close(m_image_fd);
        throw;
    }
}

std::string ImageSession::mount_folder() {
    return "/run/rtprov/image/" + std::to_string(::getpid());
}

void ImageSession::make_writable() {
    if (m_writable)
        return;
    if (!m_read_only_why.empty())
        throw Error("cannot open the image " + rtprov::quoted(m_image) + " for writing: " +
                    m_read_only_why + " (nothing was changed); make it writable or work on a copy");
    int flags = ::fcntl(m_image_fd, F_GETFL);
    if (flags < 0 || (flags & O_ACCMODE) != O_RDWR)
        throw Error("the image " + rtprov::quoted(m_image) + " was opened read-only");
    unmount_all(nullptr);
    mount_all(m_layout, true);
    m_writable = true;
}

void ImageSession::mount_all(const ImageLayout& layout, bool writable) {
    m_described.clear();
    m_warnings.clear();
    try {
        auto mount_partition = [&](const ImagePartition& p, const std::string& in_root) {
            if (!system::kernel_mounts(running_system(), p.fstype))
                throw Error("the running kernel cannot mount " + p.fstype + " (" + describe(p) +
                            " of " + rtprov::quoted(m_image) +
                            "; /proc/filesystems does not list it): load its module ('" +
                            core::shell_command({"modprobe", p.fstype}) +
                            "') or open the image where the kernel has it");
            const std::string at = in_root == "/" ? m_root : m_root + in_root;
            auto [loop_fd, device] = attach_loop(m_image_fd, m_image, p.offset, p.size, writable);
            // ext4 read-only: no journal replay either, so not a byte is written; what a
            // journal not yet replayed holds is then not seen (said)
            const bool journal = p.fstype == "ext4" || p.fstype == "ext3";
            const std::string data = !writable && journal ? "noload" : "";
            if (!writable && journal && needs_recovery(m_image_fd, p.offset))
                m_warnings.push_back(describe(p) +
                                     " was not cleanly unmounted: its journal holds changes "
                                     "not yet written in place, which a read-only look does "
                                     "not see (apply replays the journal before planning)");
            const int rc = ::mount(device.c_str(), at.c_str(), p.fstype.c_str(),
                                   MS_NOSUID | MS_NODEV | (writable ? 0 : MS_RDONLY),
                                   data.empty() ? nullptr : data.c_str());
            const int error = errno;
            ::close(loop_fd); // autoclear: the device goes with the mount
            if (rc != 0)
                throw Error("cannot mount " + describe(p) + " of " + rtprov::quoted(m_image) +
                            " on " + in_root + ": " + std::strerror(error) +
                            (error == EUCLEAN || error == EINVAL || error == EBADMSG
                                 ? "; check it with fsck first ('fsck' on the partition)"
                                 : ""));
            m_mount_points.push_back(in_root);
            m_described.push_back(describe(p) + " on " + in_root);
            if (struct stat mounted{}; ::stat(at.c_str(), &mounted) == 0)
                m_devices.push_back(mounted.st_dev);
            // the kernel mounts read-only what it cannot write (a read-only feature flag):
            // refused now, before a file is written
            struct statvfs st {};
            if (writable && (::statvfs(at.c_str(), &st) != 0 || (st.f_flag & ST_RDONLY)))
                throw Error("the kernel mounted " + describe(p) + " of " + rtprov::quoted(m_image) +
                            " read-only (its file system asks for that, or is damaged); "
                            "nothing was written");
        };
        std::vector<std::size_t> mounted;

        const std::size_t root_index = root_partition(layout, m_image);
        mount_partition(layout.partitions[root_index], "/");
        mounted.push_back(root_index);

        // The boot partitions, where the image's fstab mounts them.
        const fs::Root root(m_root, m_name);
        const auto fstab = root.read("/etc/fstab", fs::caps::k_config);
        std::vector<FstabEntry> boot;
        for (FstabEntry& e : fstab_entries(fstab ? fstab->content : ""))
            if (e.target == "/boot" || e.target.rfind("/boot/", 0) == 0)
                boot.push_back(std::move(e));
        constexpr std::size_t k_max_boot_mounts = 8;
        if (boot.size() > k_max_boot_mounts)
            throw Error(rtprov::quoted(m_image) + "'s /etc/fstab mounts " +
                        std::to_string(boot.size()) + " file systems under /boot; rtprov mounts " +
                        "at most " + std::to_string(k_max_boot_mounts) +
                        " (is this fstab the image's own?); nothing was changed");
        std::sort(boot.begin(), boot.end(), [](const FstabEntry& a, const FstabEntry& b) {
            return a.target.size() < b.target.size();
        });
        for (const FstabEntry& e : boot) {
            bool by_id = false;
            std::optional<std::size_t> index = partition_named(layout, e.source, by_id);
            if (!index && by_id)
                throw Error(rtprov::quoted(m_image) + "'s /etc/fstab mounts " + e.source + " on " +
                            e.target + ", and the image has no such partition (" +
                            partitions_text(layout) +
                            "); is this fstab the image's own? (nothing was changed)");
            if (!index) {
                // a placeholder (pi-gen's BOOTDEV) or a device name: the one partition of
                // the fstab's type other than the root
                std::vector<std::size_t> of_type;
                for (std::size_t i = 0; i < layout.partitions.size(); ++i)
                    if (i != root_index && layout.partitions[i].fstype == e.fstype)
                        of_type.push_back(i);
                if (of_type.size() != 1)
                    throw Error(rtprov::quoted(m_image) + "'s /etc/fstab mounts " + e.source +
                                " (" + e.fstype + ") on " + e.target + ", and " +
                                (of_type.empty() ? "no" : "more than one") +
                                " partition other than the root holds " + e.fstype + " (" +
                                partitions_text(layout) + "); nothing was changed");
                index = of_type.front();
            }
            if (std::find(mounted.begin(), mounted.end(), *index) != mounted.end())
                throw Error(rtprov::quoted(m_image) + "'s /etc/fstab mounts " + e.source + " on " +
                            e.target + ", and " + describe(layout.partitions[*index]) +
                            " is mounted already: one file system mounted twice would be "
                            "written twice; nothing was changed");
            if (!root.is_directory(e.target))
                throw Error(rtprov::quoted(m_image) + "'s /etc/fstab mounts " + e.source + " on " +
                            e.target + ", which is not a folder in its root");
            const std::string at = root.resolve(e.target);
            if (at != "/boot" && at.rfind("/boot/", 0) != 0)
                throw Error(rtprov::quoted(m_image) + "'s /etc/fstab mounts " + e.source + " on " +
                            e.target + ", which leads to " + at +
                            " in its root, outside /boot; nothing was changed");
            mount_partition(layout.partitions[*index], at);
            mounted.push_back(*index);
        }
    } catch (...) {
        unmount_all(nullptr);
        throw;
    }
}

void ImageSession::unmount_all(std::string* failed) {
    while (!m_mount_points.empty()) {
        const std::string& in_root = m_mount_points.back();
        const std::string at = in_root == "/" ? m_root : m_root + in_root;
        if (::umount(at.c_str()) != 0) {
            if (failed)
                *failed += (failed->empty() ? "" : "; ") + in_root + ": " + std::strerror(errno);
            ::umount2(at.c_str(), MNT_DETACH);
        }
        m_mount_points.pop_back();
    }
    m_devices.clear();
}

void ImageSession::close() {
    std::string failed;
    const std::vector<dev_t> devices = m_devices;
    if (!m_mount_points.empty())
        if (const auto left = end_descendants(); !left.empty())
            failed = "processes started in the image would not end: " + core::join(left, ", ");
    // (while its mounts give the files in it a path)
    const std::vector<ImageSwap> swaps =
        m_mount_points.empty() ? std::vector<ImageSwap>{}
                               : swaps_in_image(running_system(), m_root, m_mount_points, m_name);
    unmount_all(&failed);
    // something else mounted the image's loop devices: they stay attached while it has them
    if (const auto others = devices.empty()
                                ? std::vector<std::string>{}
                                : system::processes_mounting(running_system(), devices, ::getpid());
        !others.empty())
        failed += (failed.empty() ? "" : "; ") + std::string("its loop devices stay attached: ") +
                  core::join(others, ", ") + " has them mounted";
    struct stat image {};
    if (failed.empty() && !devices.empty() && m_image_fd >= 0 && ::fstat(m_image_fd, &image) == 0)
        // the kernel frees an autoclear device after its last close
        if (const auto left = wait_until_detached(
                [&] {
                    return loops_holding(running_system(), {image.st_dev, image.st_ino});
                },
                21, [] { ::usleep(100'000); });
            !left.empty())
            failed = "its loop devices stay attached: " + core::join(left, ", ") + " (" +
                     still_attached_why(devices, swaps) + ")";
    if (!m_root.empty())
        ::rmdir(m_root.c_str());
    if (m_image_fd >= 0) {
        if (m_writable && ::fsync(m_image_fd) != 0 && failed.empty())
            failed = std::string("fsync: ") + std::strerror(errno);
        ::close(m_image_fd);
        m_image_fd = -1;
    }
    if (!failed.empty())
        throw Error("closing the image " + rtprov::quoted(m_image) + " failed (" + failed +
                    "); check it with fsck before using it");
}

ImageSession::~ImageSession() {
    try {
        close();
    } catch (const std::exception&) {
        // the error paths: what could be done was done
    }
}

ImageSession::Room ImageSession::room(const std::string& path) const {
    struct statvfs st {};
    const std::string mount = mount_of(path);
    if (::statvfs((mount == "/" ? m_root : m_root + mount).c_str(), &st) != 0)
        return {};
    // a file system without a count of inodes (FAT makes directory entries as needed)
    // says 0 of 0
    return {std::uint64_t(st.f_bavail) * st.f_frsize,
            st.f_files == 0 ? std::numeric_limits<std::uint64_t>::max()
                            : std::uint64_t(st.f_favail)};
}

std::string ImageSession::mount_of(const std::string& path) const {
    std::string best = "/";
    for (const std::string& m : m_mount_points)
        if (m != "/" && (path == m || path.rfind(m + "/", 0) == 0) && m.size() > best.size())
            best = m;
    return best;
}

} // namespace rtprov::target
