// SPDX-License-Identifier: Apache-2.0
#include "provisioner/fs/root_lock.hpp"

#include "provisioner/core/error.hpp"
#include "provisioner/fs/kernel_file.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <string_view>
#include <vector>

namespace rtprov::fs {

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
    std::string comm =
        read_kernel_file("/proc/" + std::to_string(holder->pid) + "/comm").value.value_or("");
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

std::vector<LockEntry> lock_entries(const std::string& locks) {
    // the device in hex, the inode in decimal
    std::vector<LockEntry> entries;
    std::istringstream in(locks);
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream words(line);
        std::string index, mode, access, id;
        LockEntry entry;
        if (!(words >> index >> entry.kind))
            continue;
        if (entry.kind == "->") {
            entry.waiter = true;
            if (!(words >> entry.kind))
                continue;
        }
        if (!(words >> mode >> access >> entry.pid >> id))
            continue;
        if (std::sscanf(id.c_str(), "%llx:%llx:%llu", &entry.dev_major, &entry.dev_minor,
                        &entry.inode) != 3)
            continue;
        entries.push_back(std::move(entry));
    }
    return entries;
}

std::optional<LockHolder> lock_holder(const std::string& locks, unsigned long long dev_major,
                                      unsigned long long dev_minor, unsigned long long ino) {
    // Blocked waiters are not holders.
    for (const LockEntry& e : lock_entries(locks))
        if (!e.waiter && e.kind == "FLOCK" && e.dev_major == dev_major &&
            e.dev_minor == dev_minor && e.inode == ino && e.pid > 0)
            return LockHolder{int(e.pid), ""};
    return std::nullopt;
}

namespace {

constexpr const char* k_lock_prefix = "lock-";

// The lock file's path for the root folder 'st' in 'lock_dir': lock-DEVICE-INODE.
std::string lock_path(const std::string& lock_dir, const struct stat& st) {
    return lock_dir + "/" + k_lock_prefix + std::to_string(st.st_dev) + "-" +
           std::to_string(st.st_ino);
}

// True when 'path' still names the regular file 'st' (not followed if it is a link).
bool names(const std::string& path, const struct stat& st) {
    struct stat now {};
    return ::lstat(path.c_str(), &now) == 0 && S_ISREG(now.st_mode) && now.st_dev == st.st_dev &&
           now.st_ino == st.st_ino;
}

// The folder 'lock_dir', made if missing; false when it cannot be used (no /run, not
// root): then the root folder itself is locked. It must be ours and closed to others.
bool usable_lock_dir(const std::string& lock_dir) {
    if (::mkdir(lock_dir.c_str(), 0700) != 0 && errno != EEXIST)
        return false;
    struct stat dir {};
    return ::lstat(lock_dir.c_str(), &dir) == 0 && S_ISDIR(dir.st_mode) &&
           dir.st_uid == ::geteuid() && (dir.st_mode & 0077) == 0;
}

// 'path' opened (created with 'flags' O_CREAT): a regular file of ours, never a link.
core::Fd open_lock_file(const std::string& path, int flags) {
    core::Fd fd(::open(path.c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC | flags, 0600));
    struct stat file {};
    if (fd &&
        (::fstat(fd.get(), &file) != 0 || !S_ISREG(file.st_mode) || file.st_uid != ::geteuid()))
        return {};
    return fd;
}

// Lock files in 'lock_dir' that no one holds, left by an rtprov that was killed (a holder
// removes its own): each is removed the one safe way, by taking its lock first and
// checking that the path still names it, so that one who opened it meanwhile finds it
// gone once it gets the lock, and opens the file that replaced it. Files /proc/locks says
// are held are not tried: trying would hold one for a moment. 'own' is skipped.
void remove_unheld_lock_files(const std::string& lock_dir, const std::string& own) {
    DIR* dir = ::opendir(lock_dir.c_str());
    if (!dir)
        return;
    std::vector<std::string> paths;
    while (const dirent* entry = ::readdir(dir))
        if (std::string_view(entry->d_name).starts_with(k_lock_prefix))
            paths.push_back(lock_dir + "/" + entry->d_name);
    ::closedir(dir);
    if (paths.empty())
        return;
    auto locks = read_host_file("/proc/locks", caps::k_system);
    if (!locks)
        return;
    for (const std::string& path : paths) {
        if (path == own)
            continue;
        core::Fd fd = open_lock_file(path, O_NONBLOCK);
        struct stat st {};
        if (!fd || ::fstat(fd.get(), &st) != 0 ||
            lock_holder(*locks, major(st.st_dev), minor(st.st_dev), st.st_ino))
            continue;
        if (::flock(fd.get(), LOCK_EX | LOCK_NB) == 0 && names(path, st))
            ::unlink(path.c_str());
    }
}

} // namespace

RootLock::RootLock(const Root& root, std::optional<int> inherited_fd, const std::string& lock_dir) {
    struct stat root_st {};
    if (core::Fd folder = root.open_folder(); ::fstat(folder.get(), &root_st) != 0)
        throw Error("cannot look up the target root " + quoted(root.name()) + ": " +
                    std::strerror(errno));
    const std::string path = usable_lock_dir(lock_dir) ? lock_path(lock_dir, root_st) : "";
    // Each try opens the file the path names now: a holder removes its lock file as it
    // lets go, so the one opened may be gone by the time its lock is ours (then it is no
    // one's lock, and the next try opens the new one). Without a lock file, the root
    // folder itself is locked.
    int waits = 0;
    for (int attempt = 0;; ++attempt) {
        if (attempt == 100)
            throw Error("cannot lock the target root " + quoted(root.name()) + ": its lock file " +
                        quoted(path) + " kept being replaced; run this again");
        core::Fd own = path.empty() ? core::Fd() : open_lock_file(path, O_CREAT);
        const bool file = bool(own);
        if (!file)
            own = root.open_folder();
        struct stat st {};
        if (::fstat(own.get(), &st) != 0)
            throw Error("cannot look up the lock of " + quoted(root.name()) + ": " +
                        std::strerror(errno));
        // The parent's descriptor shares its open file, and so its lock: flock() on it
        // succeeds where a descriptor of our own would conflict.
        if (inherited_fd && same_file(*inherited_fd, st) &&
            ::flock(*inherited_fd, LOCK_EX | LOCK_NB) == 0) {
            m_inherited = *inherited_fd;
            return;
        }
        if (::flock(own.get(), LOCK_EX | LOCK_NB) == 0) {
            if (file && !names(path, st))
                continue; // its holder removed it as it let go
            m_own = std::move(own);
            if (file) {
                m_path = path;
                m_pid = ::getpid();
                remove_unheld_lock_files(lock_dir, path);
            }
            return;
        }
        const int err = errno;
        if (err != EWOULDBLOCK)
            throw Error("cannot lock the target root " + quoted(root.name()) + ": " +
                        std::strerror(err));
        if (file && !names(path, st))
            continue; // held by one that has let go and removed it since
        // A holder that ends between our try and our look at /proc/locks (or at its name)
        // has freed the lock: try again rather than refuse for a run that is over. And
        // another rtprov removing a killed run's lock file holds it for a moment.
        const std::optional<Holder> who = holder_text(st);
        if ((!who || who->ended) && attempt < 3)
            continue;
        if (file && waits < 3) {
            ++waits;
            ::usleep(10'000);
            continue;
        }
        throw Error((who ? who->text : "another rtprov") + " is working on " + quoted(root.name()) +
                    "; wait for it to finish, then run this again (nothing was changed)");
    }
}

RootLock::~RootLock() {
    // The holder removes its lock file while it still holds it: one who opened it and
    // waits for it finds it gone once the lock is theirs, and opens the new one. Only the
    // process that took it: a forked child (a command run in the root) unwinding with a
    // copy of this object must not remove the file its parent still holds.
    if (m_own && !m_path.empty() && ::getpid() == m_pid) {
        struct stat st {};
        if (::fstat(m_own.get(), &st) == 0 && names(m_path, st))
            ::unlink(m_path.c_str());
    }
}

} // namespace rtprov::fs
