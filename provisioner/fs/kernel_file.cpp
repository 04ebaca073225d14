// SPDX-License-Identifier: Apache-2.0
#include "provisioner/fs/kernel_file.hpp"

#include "provisioner/core/error.hpp"
#include "provisioner/fs/root.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace rtprov::fs {

namespace {

// What a refused write leaves: the file's value, as much of it as a message holds
// (debugfs's sched/features is a line of 60 words).
constexpr std::size_t k_shown_bytes = 160;

std::string without_last_newline(std::string text) {
    if (text.ends_with('\n'))
        text.pop_back();
    return text;
}

struct Attempt {
    bool opened = false;
    int error = 0;
};

Attempt attempt(const char* path, const char* value, std::size_t size,
                KernelFileOpen how) noexcept {
    int flags = O_WRONLY | O_TRUNC | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC;
    if (how == KernelFileOpen::create)
        flags |= O_CREAT;
    const int fd = ::open(path, flags, 0644);
    if (fd < 0)
        return {false, errno};
    // one write(2), not retried on a short count: the kernel's store handler saw one call
    // and took what it took (a retry would be a second value)
    ssize_t n = 0;
    while ((n = ::write(fd, value, size)) < 0 && errno == EINTR) {
    }
    const int error = n < 0 ? errno : std::size_t(n) == size ? 0 : EIO;
    ::close(fd);
    return {true, error};
}

} // namespace

int write_kernel_value(const char* path, const char* value, std::size_t size,
                       KernelFileOpen how) noexcept {
    return attempt(path, value, size, how).error;
}

KernelWrite write_kernel_file(const std::string& path, const std::string& value,
                              KernelFileOpen how) {
    KernelWrite result;
    const Attempt done = attempt(path.c_str(), value.data(), value.size(), how);
    result.error = done.error;
    result.opened = done.opened;
    if (result.error == 0)
        return result;
    // a file that could not be opened was not changed: only one that was may hold
    // something other than before
    if (result.opened) {
        core::Result<std::string> after = read_kernel_file(path);
        if (!after)
            result.holding = "; it cannot be read back: " + after.problem;
        else {
            std::string held = without_last_newline(*after);
            if (held.size() > k_shown_bytes)
                held = held.substr(0, k_shown_bytes) + "...";
            result.holding = "; it holds " + quoted(held);
        }
    }
    result.message = "cannot write " + quoted(without_last_newline(value)) + " to " + quoted(path) +
                     ": " + std::strerror(result.error) + result.holding;
    return result;
}

core::Result<std::string> read_kernel_file(const std::string& path, const std::string& shown) {
    return try_read_host_file(path, caps::k_system, shown.empty() ? path : shown);
}

core::Result<std::string> read_kernel_value(const std::string& path, const std::string& shown) {
    core::Result<std::string> read = read_kernel_file(path, shown);
    if (read)
        read.value = value_of(std::move(*read.value));
    return read;
}

std::string value_of(std::string text) {
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ' || text.back() == '\0'))
        text.pop_back();
    return text;
}

} // namespace rtprov::fs
