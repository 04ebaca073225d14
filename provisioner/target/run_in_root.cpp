// SPDX-License-Identifier: Apache-2.0
#include "provisioner/target/run_in_root.hpp"

#include "provisioner/core/error.hpp"
#include "provisioner/core/fd.hpp"

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>

namespace rtprov::target {

namespace {

[[noreturn]] void child_fail(const char* what, const std::string& path) {
    std::fprintf(stderr, "rtprov: error: %s %s: %s\n", what, path.c_str(), std::strerror(errno));
    _exit(127);
}

// Waits for 'pid' and exits with its status (128 + the signal that ended it); as a PID
// namespace's init it also reaps the orphans it inherits.
[[noreturn]] void exit_with(pid_t pid) {
    int status = 0;
    for (;;) {
        const pid_t ended = ::waitpid(-1, &status, 0);
        if (ended == pid)
            _exit(WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status));
        if (ended < 0 && errno != EINTR)
            _exit(127);
    }
}

// In the child, before anything else in chroot mode: the command runs in a PID namespace
// of its own (pid_namespaces(7)) whose init is rtprov's code, not the command: a process
// outside waits for the init, the init (left in the host's root, so in the target
// /proc/1/root is not '/' and the command still knows it runs in a chroot, as ischroot
// and systemd check) waits for the command. Both die with their parent
// (PR_SET_PDEATHSIG, prctl(2)), which the command cannot clear for them, and when a
// namespace's init ends the kernel ends every process in it: whatever the command starts
// (a daemon an install script or update-grub leaves) ends with it, and all of it ends if
// rtprov is killed, so nothing keeps the target's mounts, and a disk image's loop
// devices, alive after rtprov. Returns in the command's process.
void own_pid_namespace(pid_t rtprov, const std::string& root_path) {
    if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != rtprov)
        _exit(127); // rtprov has already ended
    if (::unshare(CLONE_NEWPID) != 0)
        child_fail("cannot make a PID namespace to run a command in", root_path);
    // The init cannot see its parent outside the namespace (getppid() is 0 there): a pipe
    // whose write end only the waiting process holds tells it that one still lives.
    int alive[2];
    if (::pipe2(alive, O_CLOEXEC | O_NONBLOCK) != 0)
        child_fail("cannot make a pipe to run a command in", root_path);
    const pid_t init = ::fork();
    if (init < 0)
        child_fail("cannot fork to run a command in", root_path);
    if (init > 0) {
        ::close(alive[0]);
        exit_with(init);
    }
    ::close(alive[1]);
    char byte = 0;
    if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::read(alive[0], &byte, 1) == 0)
        _exit(127); // the waiting process has already ended (end of file)
    ::close(alive[0]);
    const pid_t command = ::fork();
    if (command < 0)
        child_fail("cannot fork to run a command in", root_path);
    if (command > 0)
        exit_with(command);
    // the command: ends if the init does (a kill of the init ends the namespace anyway)
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
}

} // namespace

int run_in_root(const fs::Root& root, const std::vector<std::string>& argv, RunMode mode) {
    if (argv.empty())
        throw Error("empty command");
    std::vector<std::string> binds;
    std::string proc;
    if (mode == RunMode::chroot) {
        for (const char* dir : {"/dev", "/sys", "/proc"})
            if (!root.is_directory(dir))
                throw Error("cannot run " + quoted(argv[0]) + " in the target: it has no " +
                            quoted(dir) + " folder to mount on");
        // Relative to the root folder: the child mounts and chroots from the folder this
        // process opened, never by its path, which could be made to name another tree
        // (a symlink swapped) between the checks and the chroot.
        binds = {root.resolve("/dev").substr(1), root.resolve("/sys").substr(1)};
        proc = root.resolve("/proc").substr(1);
    }
    std::string root_path = root.host_path("/");
    struct stat root_st {};
    if (mode == RunMode::chroot && ::fstat(root.open_folder().get(), &root_st) != 0)
        throw Error("cannot look up the target root " + quoted(root.shown("/")) + ": " +
                    std::strerror(errno));
    std::fflush(nullptr);
    const pid_t self = ::getpid();
    pid_t pid = fork();
    if (pid < 0)
        throw Error(std::string("cannot fork: ") + std::strerror(errno));
    if (pid == 0) {
        dup2(STDERR_FILENO, STDOUT_FILENO);
        if (mode == RunMode::chroot) {
            own_pid_namespace(self, root_path);
            if (unshare(CLONE_NEWNS) != 0)
                child_fail("cannot make a mount namespace for", root_path);
            if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
                // EINVAL: '/' is not a mount point, so rtprov itself runs in a chroot (as
                // unshare(1) says: "cannot change root filesystem propagation")
                if (errno == EINVAL) {
                    std::fprintf(stderr,
                                 "rtprov: error: cannot make mounts private for %s: rtprov "
                                 "runs in a chroot whose root is not a mount point; run it "
                                 "outside the chroot, or bind-mount that root on itself "
                                 "before chrooting ('mount --bind DIR DIR')\n",
                                 root_path.c_str());
                    _exit(127);
                }
                child_fail("cannot make mounts private for", root_path);
            }
            // Opened again in this mount namespace (a folder opened before it belongs to
            // the old one, where nothing may be mounted), and proved to be the same one.
            const core::Fd here(::open(root_path.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
            struct stat st {};
            if (!here || ::fstat(here.get(), &st) != 0)
                child_fail("cannot open the target root", root_path);
            if (st.st_dev != root_st.st_dev || st.st_ino != root_st.st_ino) {
                errno = ESTALE;
                child_fail("the target root changed under rtprov (a symlink or mount swapped?):",
                           root_path);
            }
            if (fchdir(here.get()) != 0)
                child_fail("cannot enter", root_path);
            if (mount("/dev", binds[0].c_str(), nullptr, MS_BIND | MS_REC, nullptr) != 0)
                child_fail("cannot bind-mount /dev on", root.host_path("/" + binds[0]));
            if (mount("/sys", binds[1].c_str(), nullptr, MS_BIND | MS_REC, nullptr) != 0)
                child_fail("cannot bind-mount /sys on", root.host_path("/" + binds[1]));
            if (mount("proc", proc.c_str(), "proc", 0, nullptr) != 0)
                child_fail("cannot mount /proc on", root.host_path("/" + proc));
            if (chroot(".") != 0 || chdir("/") != 0)
                child_fail("cannot chroot into", root_path);
        }
        // A clean environment: the host's TMPDIR, LD_PRELOAD or locale mean nothing in
        // the target (a host TMPDIR breaks apt-get in an image).
        clearenv();
        setenv("PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", 1);
        setenv("LANG", "C.UTF-8", 1);
        setenv("DEBIAN_FRONTEND", "noninteractive", 1);
        std::vector<char*> args;
        for (const std::string& arg : argv)
            args.push_back(const_cast<char*>(arg.c_str()));
        args.push_back(nullptr);
        execvp(args[0], args.data());
        child_fail("cannot run", argv[0]);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            throw Error(std::string("cannot wait for ") + quoted(argv[0]) + ": " +
                        std::strerror(errno));
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return WEXITSTATUS(status);
}

} // namespace rtprov::target
