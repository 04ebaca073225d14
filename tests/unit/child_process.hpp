// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <grp.h>
#include <linux/capability.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <exception>
#include <functional>
#include <optional>
#include <string>

// Runs 'body' in a forked child and returns the text it returned ("exception: <what>" when
// it threw), so that a test can give up privileges or lower limits without the test
// process losing them. Call it while the test process runs no other thread.
inline std::string run_in_child(const std::function<std::string()>& body) {
    int fds[2];
    if (pipe(fds) != 0)
        return "pipe failed";
    const pid_t pid = fork();
    if (pid < 0)
        return "fork failed";
    if (pid == 0) {
        close(fds[0]);
        std::string out;
        try {
            out = body();
        } catch (const std::exception& e) {
            out = std::string("exception: ") + e.what();
        } catch (...) {
            out = "exception";
        }
        std::size_t done = 0;
        while (done < out.size()) {
            const ssize_t n = write(fds[1], out.data() + done, out.size() - done);
            if (n <= 0)
                break;
            done += static_cast<std::size_t>(n);
        }
        _exit(0);
    }
    close(fds[1]);
    std::string text;
    char buffer[512];
    ssize_t n;
    while ((n = read(fds[0], buffer, sizeof buffer)) > 0)
        text.append(buffer, static_cast<std::size_t>(n));
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    return text;
}

// In a child: sets RLIMIT_RTPRIO and, if given, RLIMIT_MEMLOCK (soft and hard) and, when
// root, becomes 'nobody' (65534) so that the limits apply (root's capabilities go past
// them). Returns "" or what failed.
inline std::string drop_privileges(rlim_t rtprio, std::optional<rlim_t> memlock = {}) {
    const rlimit rt{rtprio, rtprio};
    if (setrlimit(RLIMIT_RTPRIO, &rt) != 0)
        return "setrlimit(RLIMIT_RTPRIO) failed";
    if (memlock) {
        const rlimit mem{*memlock, *memlock};
        if (setrlimit(RLIMIT_MEMLOCK, &mem) != 0)
            return "setrlimit(RLIMIT_MEMLOCK) failed";
    }
    if (geteuid() == 0) {
        if (setgroups(0, nullptr) != 0 || setgid(65534) != 0 || setuid(65534) != 0)
            return "cannot become nobody";
    }
    return "";
}

// In a child: removes capability 'cap' (CAP_IPC_LOCK, ...) from the effective and permitted
// sets, keeping the others. Returns "" or what failed.
inline std::string drop_capability(unsigned cap) {
    __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct data[2] = {};
    if (syscall(SYS_capget, &header, data) != 0)
        return "capget failed";
    const __u32 bit = 1u << (cap % 32);
    data[cap / 32].effective &= ~bit;
    data[cap / 32].permitted &= ~bit;
    if (syscall(SYS_capset, &header, data) != 0)
        return "capset failed";
    return "";
}
