// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/core/cpu_list.hpp"
#include "provisioner/core/result.hpp"
#include "provisioner/fs/root.hpp"

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

// The one reader of a running system's files: the machine's '/', or a copied tree given
// with --sysroot. Every fact the audit, the self-test, first boot and board detection use
// is read through it.
namespace rtprov::system {

// A value read from the system, or why it could not be read ('absent': only that there
// is no such file).
template <typename T> using Fact = core::Result<T>;

// Files below a system root, read-only; messages name them as if the root were '/'.
// There is one reader underneath: '/' is read by fs::read_kernel_file, a copied tree by
// fs::Root::try_read (display name "": its files named as on the running system), and
// both by fs' read_capped: regular files only, size capped (a sysroot is any folder, and
// a FIFO or device node there must not block or start anything). In a copied tree every
// symlink is resolved inside the tree (fs::Root::try_resolve), as it was on the machine
// it was copied from: an absolute link names a file of the tree, never of the host, and
// '..' cannot climb out. Never throws for a missing or unreadable file: the fact says why.
class SysRoot {
  public:
    explicit SysRoot(const std::string& root = "/");

    // The host path of 'path' (absolute, as on the running system), its symlinks
    // resolved inside the tree, or why it cannot be.
    Fact<std::filesystem::path> host(const std::string& path) const;
    // The file's bytes, at most 'cap' (a file of /proc or /sys: 16 MiB; a configuration
    // file such as /etc/passwd: fs::caps::k_config).
    Fact<std::string> text(const std::string& path,
                           const fs::SizeCap& cap = fs::caps::k_system) const;
    // The file's first line, without its newline and trailing blanks (a sysfs or procfs
    // value).
    Fact<std::string> value(const std::string& path) const;
    Fact<long long> integer(const std::string& path) const;
    // A kernel CPU list (cpuset(7) "List format"); '(null)' reads as empty, as nohz_full
    // shows it on a kernel without nohz_full CPUs.
    Fact<core::CpuList> cpu_list(const std::string& path) const;
    // The numbered entries of a folder, ascending, or why it cannot be listed.
    Fact<std::vector<int>> numbered(const std::string& path) const;
    // The names in a folder, sorted, or why it cannot be listed.
    Fact<std::vector<std::string>> names(const std::string& path) const;
    // 'path' as on the running system with its symlinks resolved (a sysfs device's
    // place in /sys/devices), or why it cannot be.
    Fact<std::string> resolve(const std::string& path) const;
    // The target of the symbolic link 'path' as it is written (readlink(2)), not followed:
    // a process's /proc/PID/fd/N names the file it has open ('/dev/snd/pcmC0D0p',
    // 'socket:[123]'). The folders above it are resolved as host() resolves them.
    Fact<std::string> link(const std::string& path) const;
    bool exists(const std::string& path) const;
    bool has_write_bit(const std::string& path) const;

  private:
    std::filesystem::path m_root;
    std::shared_ptr<const fs::Root> m_tree; // a --sysroot tree; null for '/'
};

} // namespace rtprov::system
