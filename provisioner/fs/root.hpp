// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/core/fd.hpp"
#include "provisioner/core/file_state.hpp"
#include "provisioner/core/result.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace rtprov::fs {

// A kind of file rtprov reads, and the most it reads of one: a larger file is refused,
// named with its size, before a byte of it is read (a sparse 5 GB cmdline.txt costs
// nothing to make and would otherwise cost 5 GB of memory).
struct SizeCap {
    const char* kind; // "kernel command line", for messages
    std::size_t max_bytes;
};

namespace caps {
// cmdline.txt, /etc/kernel/cmdline: the firmware reads at most 1024 characters
// (raspberrypi/linux#140), the kernel COMMAND_LINE_SIZE (2048 on arm64, x86).
inline constexpr SizeCap k_cmdline{"kernel command line", 64u << 10};
// Text configuration: config.txt, os-release, fstab, /etc/default/grub, unit files and
// drop-ins, profiles, first boot's files.
inline constexpr SizeCap k_config{"configuration file", 1u << 20};
// /etc/default/grub and each grub.d drop-in: a few KB of shell assignments.
inline constexpr SizeCap k_grub_defaults{"GRUB defaults file", 64u << 10};
// /boot/config-<version>: Debian 13's is 280 KB.
inline constexpr SizeCap k_kernel_config{"kernel configuration", 8u << 20};
// /var/lib/dpkg/status: 400 KB on a plain Debian 13 root, a few MB on a desktop.
inline constexpr SizeCap k_package_status{"dpkg status file", 32u << 20};
// rtprov's own state file: a line per managed file.
inline constexpr SizeCap k_state{"rtprov state file", 1u << 20};
// rtprov's backup archive: the originals of the files it changed.
inline constexpr SizeCap k_backup{"rtprov backup archive", 256u << 20};
// A file of the running system's /proc or /sys (/proc/interrupts grows with CPUs and IRQs).
inline constexpr SizeCap k_system{"file of /proc or /sys", 16u << 20};
// Any file rtprov writes or checks for drift (grub.cfg is the largest, ~100 KB).
inline constexpr SizeCap k_managed{"file rtprov manages", 4u << 20};
// A self-test's JSON report (a week's run keeps its worst seconds, not every one).
inline constexpr SizeCap k_report{"self-test report", 64u << 20};
} // namespace caps

// The file system rtprov works on: an image root offline, or '/' on the running
// machine. Every path is given as seen inside the target ("/etc/fstab") and resolved as
// if the root were '/': symlinks are followed inside the root (an absolute link points
// into the image), and anything that would leave it — '..' above the root, a link
// pointing out, a link loop — is an error. Writes are atomic and durable.
//
// Messages name the root and its files by its display name, so that no caller rewrites
// paths inside them: none (the default) names the root as given and its files by their
// host paths ('/srv/img/etc/fstab'); an image's mounted root has the image file's name
// ('pi.img': the root 'pi.img:/', its files 'pi.img:/etc/fstab': its mount folder is
// private to rtprov); "" names the files as the running system they were copied from
// names them ('/proc/cmdline', a --sysroot tree), the root as given.
class Root {
  public:
    // Opens 'host_path' as the root. Throws rtprov::Error when it is not a directory.
    explicit Root(const std::string& host_path, std::optional<std::string> display = std::nullopt);
    Root(const Root&) = delete;
    Root& operator=(const Root&) = delete;

    // The root as given, for handing to other programs and for telling roots apart.
    const std::string& path() const { return m_path; }
    // The root as messages name it: its path as given, or 'pi.img:/'.
    std::string name() const;
    // The in-root path 'path' as messages name it: its host path, 'pi.img:/etc/fstab', or
    // '/proc/cmdline' for a --sysroot tree.
    std::string shown(const std::string& path) const;

    // Host path of an in-root path, for handing to other programs (messages: shown()).
    std::string host_path(const std::string& path) const;

    // The canonical in-root path of 'path': symlinks resolved, '.' and '..' applied.
    // Missing components are kept as written, so a file about to be created resolves.
    // Throws rtprov::Error on an escape, a loop, or a relative 'path'.
    std::string resolve(const std::string& path) const;
    // The same as a result: the problem instead of the exception.
    core::Result<std::string> try_resolve(const std::string& path) const;

    // 'path' with its folder resolved as resolve() does but its last name taken as it
    // is: the entry itself, even when it is a symlink. Throws like resolve(), and for a
    // last name of '.' or '..'.
    std::string resolve_parent(const std::string& path) const;

    // Reads a regular file of at most cap.max_bytes. nullopt when it does not exist.
    // The type is checked before the file is opened for reading (an O_PATH descriptor,
    // which runs no driver code), so a device node — a watchdog starts when opened — or
    // a FIFO is refused without side effects. Throws rtprov::Error when the entry is not
    // a regular file, is larger than the cap, or cannot be read.
    std::optional<core::FileState> read(const std::string& path, const SizeCap& cap) const;
    // The same as a result, for a caller to whom a file that cannot be read is a fact,
    // not a failure: its problem says why, 'absent' when only nothing is there
    // ("cannot read '/proc/cmdline': No such file or directory"); a path that escapes
    // the root or cannot be resolved is a problem too. Never throws rtprov::Error.
    core::Result<core::FileState> try_read(const std::string& path, const SizeCap& cap) const;

    // The entry 'path' itself (its folder resolved, its last name not followed): a
    // regular file (as read() reads it), or a symlink with its target, owner and own
    // mtime. nullopt when there is nothing there. Throws rtprov::Error for anything else
    // (a folder, a device).
    std::optional<core::FileState> read_entry(const std::string& path, const SizeCap& cap) const;
    // The same as a result, as try_read gives one. Never throws rtprov::Error.
    core::Result<core::FileState> try_read_entry(const std::string& path, const SizeCap& cap) const;

    bool is_directory(const std::string& path) const;
    bool exists(const std::string& path) const;

    // Names in directory 'path' (no '.' or '..'); empty when it does not exist.
    std::vector<std::string> list(const std::string& path) const;

    // Replaces or creates the entry 'path' (its folder resolved, its last name not
    // followed: a symlink there is replaced, not written through) with 'state' (bytes,
    // mode, owner, mtime when it has one): temp file in the same directory, fsync, rename,
    // fsync of the directory. The parent must exist. A regular file that already holds
    // 'state' is not rewritten. Callers that mean to write through a link resolve()
    // first. Throws rtprov::Error, also when the entry is neither a regular file nor a
    // symlink (a folder, a device node, a FIFO): only those are replaced.
    void write(const std::string& path, const core::FileState& state);

    // Creates the missing directories of 'path' (mode 0755) and returns them, parents
    // first. Throws rtprov::Error.
    std::vector<std::string> make_directories(const std::string& path);

    // The directories of 'path' that do not exist yet, parents first (no change made).
    std::vector<std::string> missing_directories(const std::string& path) const;

    // Removes the entry 'path' — a file, or a symlink itself, never its target — (true)
    // or reports it was not there (false). Durable.
    bool remove_file(const std::string& path);

    // Removes an empty directory (not through a symlink). Returns false, changing
    // nothing, when it is not empty, not a directory, or not there.
    bool remove_directory(const std::string& path);

    // Atomically renames the entry 'from' to 'to' (last names not followed), then fsyncs
    // both parents.
    void rename(const std::string& from, const std::string& to);

    // Removes the entry 'path' and, if it is a real folder, everything below it; symlinks
    // are removed as links, never followed. Used only for rtprov's own folders.
    void remove_tree(const std::string& path);

    // Removes leftovers of interrupted writes (names starting k_temp_prefix) in 'dir'.
    // Returns how many were removed.
    int remove_stale_temporaries(const std::string& dir);

    // A new descriptor of the root folder itself, open for reading (RootLock flocks it).
    // Throws rtprov::Error.
    core::Fd open_folder() const;

    // A fresh, unused name for a temporary in 'dir'.
    std::string temporary_name(const std::string& dir) const;

    // Called before every durable step (fsync, rename, unlink, mkdir). Tests use it to
    // kill rtprov between any two steps; it does nothing otherwise.
    void set_step_hook(std::function<void()> hook) { m_step_hook = std::move(hook); }

    // SOURCE_DATE_EPOCH (reproducible builds): from now on a file or link written with
    // no mtime of its own, a folder created and a folder whose entries change get
    // exactly this time as their mtime, earlier or later than the clock. (Only mtimes:
    // ctimes and atimes stay the clock's.)
    void set_source_date_epoch(std::int64_t seconds) { m_source_date_epoch = seconds; }

    static constexpr const char* k_temp_prefix = ".rtprov-tmp-";

  private:
    core::Fd open_directory(const std::string& resolved) const; // no symlinks, beneath the root
    // fsync of a folder whose entries changed; throws, saying what to do, when it fails.
    void sync_directory(const core::Fd& dir_fd, const std::string& resolved_dir) const;
    core::Result<core::FileState> read_resolved(const std::string& resolved,
                                                const SizeCap& cap) const;
    // nullopt when absent, the value, or throws its problem
    static std::optional<core::FileState> value_or_nullopt(core::Result<core::FileState> read);
    void step() const {
        if (m_step_hook)
            m_step_hook();
    }

    std::string m_path;
    std::optional<std::string> m_display; // see above: nullopt, "", or the image's name
    core::Fd m_fd;                        // O_PATH of the root folder
    std::function<void()> m_step_hook;
    std::optional<std::int64_t> m_source_date_epoch;
};

// True when 'root' is this machine's '/' (the same device and inode as this process's
// root, /proc/self/root), however it was spelled or mounted.
bool is_running_system(const Root& root);

// Reads the host's regular file 'path' (absolute, or relative to the working folder) as
// Root::read reads a file of a root: type checked before opening, size capped. nullopt
// when it does not exist. Errors name it 'shown' (default: 'path'). Throws rtprov::Error.
std::optional<std::string> read_host_file(const std::string& path, const SizeCap& cap,
                                          const std::string& shown = "");
// The same as a result ('absent' when it does not exist); never throws rtprov::Error.
core::Result<std::string> try_read_host_file(const std::string& path, const SizeCap& cap,
                                             const std::string& shown = "");

// "a folder", "a character device", "a FIFO": what a file of mode 'mode' is, for messages.
std::string file_type_name(unsigned mode);

// Splits an absolute in-root path into its parent and last name: "/etc/x" -> "/etc", "x".
std::pair<std::string, std::string> split_parent(const std::string& path);

// Opens RESOLVED (absolute, already resolved inside the root) relative to ROOT_FD one
// component at a time with O_NOFOLLOW: what openat2(RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS)
// does, for where openat2 is missing. -1 and errno on failure (ELOOP/ENOTDIR on a link).
int open_beneath_walk(int root_fd, const std::string& resolved, int flags);

} // namespace rtprov::fs
