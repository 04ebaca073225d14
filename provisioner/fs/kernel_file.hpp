// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/core/result.hpp"

#include <cstddef>
#include <string>

// The one reader and writer of the kernel's files: sysfs, procfs, debugfs, tracefs and
// cgroupfs values (and the few files of /run that systemd reads the same way). Their
// handlers take a value per write(2) call and say no right there, in its result: a value
// cut in two is two values to the kernel (echo's 'RT_PUSH' and 'IPI'), and a buffered
// stream's error only shows at a flush that may never name the write. So a value is
// written whole, in one write(2), and a refusal is told with what the file holds after it
// (as systemd's write_string_file verifies on failure, src/basic/fileio.c).
namespace rtprov::fs {

// How a kernel file is opened for writing: 'existing' (every kernel file: the kernel made
// it, and a missing one is an error, not a file to make), or 'create' (a file of /run a
// program reads, such as /run/systemd/reboot-param, made 0644 when missing).
enum class KernelFileOpen { existing, create };

// One write(2) of 'size' bytes of 'value' to 'path', opened O_WRONLY | O_TRUNC | O_NOFOLLOW
// (the shell's '>': O_TRUNC empties a tracefs buffer and means nothing to sysfs or
// procfs), and closed. 0 when the kernel took all of it, else the errno of open(2) or
// write(2), EIO for a write that took only part. Async-signal-safe (open, write, close
// only): a forked guard puts values back with it.
int write_kernel_value(const char* path, const char* value, std::size_t size,
                       KernelFileOpen how = KernelFileOpen::existing) noexcept;

// What a write of a kernel file came to.
struct [[nodiscard]] KernelWrite {
    int error = 0;       // 0: the kernel took the whole value; else write_kernel_value's errno
    bool opened = false; // the file was opened: 'error' is the write's, not the open's
    // When the write failed on an open file: "; it holds 'member'", what the file holds
    // afterwards (its last newline dropped, cut at 160 characters), or "; it cannot be
    // read back: ...". "" otherwise.
    std::string holding;
    // When it failed: "cannot write 'isolated' to '/sys/fs/cgroup/x/cpuset.cpus.partition':
    // Invalid argument; it holds 'member'" (the value without its last newline).
    std::string message;

    explicit operator bool() const { return error == 0; }
};

// Writes 'value' to the kernel file 'path' (write_kernel_value) and says how it went.
KernelWrite write_kernel_file(const std::string& path, const std::string& value,
                              KernelFileOpen how = KernelFileOpen::existing);

// Reads the kernel file 'path' (absolute): a regular file of at most caps::k_system,
// its type checked before it is opened (read_host_file). 'absent' when it does not
// exist; the problem names it 'shown' (default: 'path'): "cannot read '/proc/cmdline':
// Permission denied". The running system's side of system::SysRoot. Never throws.
core::Result<std::string> read_kernel_file(const std::string& path, const std::string& shown = "");

// The same, as value_of gives it: a one-value file's value ('isolated' of "isolated\n").
core::Result<std::string> read_kernel_value(const std::string& path, const std::string& shown = "");

// 'text' without the newlines, blanks and NULs at its end: a sysfs or procfs value ends
// in a newline, a device-tree string in a NUL. Pure.
std::string value_of(std::string text);

} // namespace rtprov::fs
