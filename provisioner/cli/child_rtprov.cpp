// SPDX-License-Identifier: Apache-2.0
#include "provisioner/cli/child_rtprov.hpp"

#include "provisioner/cli/environment.hpp"
#include "provisioner/core/error.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <iostream>

namespace rtprov::cli {

int run_rtprov(int lock_fd, const std::vector<std::string>& args, const std::string& stdout_path) {
    std::cout.flush();
    pid_t pid = fork();
    if (pid < 0)
        throw Error(std::string("cannot start rtprov ") + args.front() + ": fork failed");
    if (pid == 0) {
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
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            throw Error("lost track of rtprov " + args.front());
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

} // namespace rtprov::cli
