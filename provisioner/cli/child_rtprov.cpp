// SPDX-License-Identifier: Apache-2.0
#include "provisioner/cli/child_rtprov.hpp"

#include "provisioner/cli/environment.hpp"
#include "provisioner/core/error.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <iostream>

namespace rtprov::cli {

namespace {

using Clock = std::chrono::steady_clock;

// How long a child stopped at its deadline has after SIGTERM before SIGKILL: the
// self-test ends within a second of it and then starts a player it stopped again.
constexpr std::chrono::seconds k_term_grace{10};

// A descriptor that becomes readable when 'pid' ends (pidfd_open(2), Linux 5.3), -1
// where it cannot be had (then the wait polls).
int pidfd_of(pid_t pid) {
#ifdef SYS_pidfd_open
    return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
#else
    (void)pid;
    return -1;
#endif
}

// True when 'pid' has ended; it stays a zombie, unreaped, so its id is not reused yet.
bool ended(pid_t pid) {
    siginfo_t info{};
    return ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
           info.si_pid == pid;
}

// How a child with a deadline ended.
enum class Wait {
    ended,     // by itself
    stopped,   // at the deadline, by SIGTERM or SIGKILL
    abandoned, // not even by SIGKILL (a process stuck in the kernel): left behind, unreaped
};

// Waits until 'pid' ends, or until 'deadline', when it is sent SIGTERM, SIGKILL
// k_term_grace later, and when that has not ended it k_term_grace later still, it is
// left behind: the flow goes on and says the time ran out rather than hang with it. The
// clock is the steady one, and so is poll(2)'s timeout (CLOCK_MONOTONIC): setting the
// wall clock moves neither.
Wait wait_for(pid_t pid, const pipeline::Deadline& deadline) {
    const int pidfd = pidfd_of(pid);
    bool terminated = false, killed = false;
    Clock::time_point next{}; // SIGKILL, then giving up
    Wait how = Wait::ended;
    while (!ended(pid)) {
        const Clock::time_point now = Clock::now();
        if (deadline && !terminated && now >= *deadline) {
            ::kill(pid, SIGTERM);
            terminated = true;
            next = now + k_term_grace;
        } else if (terminated && !killed && now >= next) {
            ::kill(pid, SIGKILL);
            killed = true;
            next = now + k_term_grace;
        } else if (killed && now >= next) {
            how = Wait::abandoned;
            break;
        }
        // until the next step, at most 100 ms without a pidfd to wake on
        long long wait_ms = pidfd >= 0 ? -1 : 100;
        auto until = [&](Clock::time_point when) {
            const long long ms =
                std::chrono::ceil<std::chrono::milliseconds>(when - now).count() + 1;
            wait_ms = wait_ms < 0 ? ms : std::min(wait_ms, ms);
        };
        if (deadline && !terminated)
            until(*deadline);
        else if (terminated)
            until(next);
        pollfd fd{pidfd, POLLIN, 0};
        ::poll(&fd, pidfd >= 0 ? 1 : 0, static_cast<int>(std::min(wait_ms, 60'000LL)));
    }
    if (pidfd >= 0)
        ::close(pidfd);
    return how == Wait::abandoned ? how : terminated ? Wait::stopped : Wait::ended;
}

} // namespace

int run_rtprov(int lock_fd, const std::vector<std::string>& args, const std::string& stdout_path,
               const pipeline::Deadline& deadline) {
    std::cout.flush();
    const pid_t parent = ::getpid();
    pid_t pid = fork();
    if (pid < 0)
        throw Error(std::string("cannot start rtprov ") + args.front() + ": fork failed");
    if (pid == 0) {
        // A child with a deadline ends with the flow that started it (SIGTERM, as systemd
        // stops a unit): a gate killed midway leaves no self-test running on, holding the
        // lock and a stopped player. Its process group stays the flow's, so that Ctrl-C
        // reaches both.
        if (deadline) {
            ::prctl(PR_SET_PDEATHSIG, SIGTERM);
            if (::getppid() != parent)
                _exit(127);
        }
        ::fcntl(lock_fd, F_SETFD, 0);
        setenv(k_lock_fd_variable, std::to_string(lock_fd).c_str(), 1);
        if (!stdout_path.empty()) {
            int fd = open(stdout_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
            if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0)
                _exit(127);
        }
        std::vector<char*> argv;
        std::string self = "rtprov";
        argv.push_back(self.data());
        std::vector<std::string> copy = args;
        for (std::string& arg : copy)
            argv.push_back(arg.data());
        argv.push_back(nullptr);
        execv("/proc/self/exe", argv.data());
        _exit(127);
    }
    const Wait how = wait_for(pid, deadline);
    if (how == Wait::abandoned)
        return pipeline::k_child_timed_out;
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            throw Error("lost track of rtprov " + args.front());
    if (how == Wait::stopped)
        return pipeline::k_child_timed_out;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

} // namespace rtprov::cli
