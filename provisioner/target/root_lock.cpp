// SPDX-License-Identifier: Apache-2.0
#include "provisioner/target/root_lock.hpp"

#include "provisioner/core/error.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sstream>

namespace rtprov::target {

namespace {

bool same_file(int fd, const struct stat& st) {
    struct stat other {};
    return ::fstat(fd, &other) == 0 && other.st_dev == st.st_dev && other.st_ino == st.st_ino;
}

// Who holds the lock, and whether the process /proc/locks names has ended (then the lock
// may be free by now, or held by a child it handed its descriptor to); nullopt when
// /proc/locks does not list the file (any more).
struct Holder {
    std::string text;
    bool ended = false;
};
std::optional<Holder> holder_text(const struct stat& st) {
    auto locks = read_host_file("/proc/locks", caps::k_system);
    std::optional<LockHolder> holder =
        locks ? lock_holder(*locks, major(st.st_dev), minor(st.st_dev), st.st_ino) : std::nullopt;
    if (!holder)
        return std::nullopt;
    std::string comm;
    try {
        comm = read_host_file("/proc/" + std::to_string(holder->pid) + "/comm", caps::k_system)
                   .value_or("");
    } catch (const Error&) {
    }
    if (!comm.empty() && comm.back() == '\n')
        comm.pop_back(); // the kernel's; a name of its own may end in one too
    const std::string pid = "pid " + std::to_string(holder->pid);
    if (comm == "rtprov")
        return Holder{"another rtprov (" + pid + ")"};
    // /proc/locks names the process that took the lock; one it handed its descriptor to
    // (a child) may hold it after it ended.
    if (comm.empty())
        return Holder{"another process (the lock was taken by " + pid + ")", true};
    // A process names itself: quoted() shows the name on one line, its control
    // characters escaped.
    return Holder{"another process (" + quoted(comm) + ", " + pid + ")"};
}

} // namespace

std::optional<LockHolder> lock_holder(const std::string& locks, unsigned long long dev_major,
                                      unsigned long long dev_minor, unsigned long long ino) {
    // "1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF": the device in hex, the inode in
    // decimal (fs/locks.c, lock_get_status). Blocked waiters ("1: -> FLOCK ...") are not
    // holders.
    std::istringstream in(locks);
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream words(line);
        std::string index, type, mode, access, id;
        long pid = 0;
        if (!(words >> index >> type) || type == "->" || type != "FLOCK")
            continue;
        if (!(words >> mode >> access >> pid >> id))
            continue;
        unsigned long long major_number = 0, minor_number = 0, inode = 0;
        if (std::sscanf(id.c_str(), "%llx:%llx:%llu", &major_number, &minor_number, &inode) != 3)
            continue;
        if (major_number == dev_major && minor_number == dev_minor && inode == ino && pid > 0)
            return LockHolder{int(pid), ""};
    }
    return std::nullopt;
}

namespace {

// The lock file for the root folder 'st' in 'lock_dir', opened; -1 when the folder cannot
// be used (no /run, not root): then the root folder itself is locked. The folder must be
// ours and closed to others, and the file a regular file of ours, never a link.
core::Fd open_lock_file(const std::string& lock_dir, const struct stat& st) {
    if (::mkdir(lock_dir.c_str(), 0700) != 0 && errno != EEXIST)
        return {};
    struct stat dir {};
    if (::lstat(lock_dir.c_str(), &dir) != 0 || !S_ISDIR(dir.st_mode) ||
        dir.st_uid != ::geteuid() || (dir.st_mode & 0077) != 0)
        return {};
    const std::string path =
        lock_dir + "/lock-" + std::to_string(st.st_dev) + "-" + std::to_string(st.st_ino);
    core::Fd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
    struct stat file {};
    if (fd &&
        (::fstat(fd.get(), &file) != 0 || !S_ISREG(file.st_mode) || file.st_uid != ::geteuid()))
        return {};
    return fd;
}

} // namespace

RootLock::RootLock(const Root& root, std::optional<int> inherited_fd, const std::string& lock_dir) {
    core::Fd folder = root.open_folder();
    struct stat root_st {};
    if (::fstat(folder.get(), &root_st) != 0)
        throw Error("cannot look up the target root " + quoted(root.path()) + ": " +
                    std::strerror(errno));
    core::Fd own = open_lock_file(lock_dir, root_st);
    if (!own)
        own = std::move(folder); // no lock file: the root folder itself is locked
    struct stat st {};
    if (::fstat(own.get(), &st) != 0)
        throw Error("cannot look up the lock of " + quoted(root.path()) + ": " +
                    std::strerror(errno));
    // The parent's descriptor shares its open file, and so its lock: flock() on it
    // succeeds where a descriptor of our own would conflict.
    if (inherited_fd && same_file(*inherited_fd, st) &&
        ::flock(*inherited_fd, LOCK_EX | LOCK_NB) == 0) {
        m_inherited = *inherited_fd;
        return;
    }
    // A holder that ends between our try and our look at /proc/locks (or at its name) has
    // freed the lock: try again rather than refuse for a run that is over.
    for (int attempt = 0;; ++attempt) {
        if (::flock(own.get(), LOCK_EX | LOCK_NB) == 0)
            break;
        int err = errno;
        std::optional<Holder> who;
        if (err == EWOULDBLOCK) {
            who = holder_text(st);
            if ((!who || who->ended) && attempt < 3)
                continue;
        }
        if (err == EWOULDBLOCK)
            throw Error((who ? who->text : "another rtprov") + " is working on " +
                        quoted(root.path()) +
                        "; wait for it to finish, then run this again (nothing was changed)");
        throw Error("cannot lock the target root " + quoted(root.path()) + ": " +
                    std::strerror(err));
    }
    m_own = std::move(own);
}

} // namespace rtprov::target
