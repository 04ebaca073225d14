#include "provisioner/target/root_lock.hpp"

#include "provisioner/core/error.hpp"

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

// Who holds the lock; nullopt when /proc/locks does not list the file (any more).
std::optional<std::string> holder_text(const struct stat& st) {
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
    while (!comm.empty() && comm.back() == '\n')
        comm.pop_back();
    const std::string pid = "pid " + std::to_string(holder->pid);
    if (comm == "rtprov" || comm.empty())
        return "another rtprov (" + pid + ")";
    return "another process ('" + comm + "', " + pid + ")";
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

RootLock::RootLock(const Root& root, std::optional<int> inherited_fd) {
    int own = root.open_folder();
    struct stat st {};
    if (::fstat(own, &st) != 0) {
        int err = errno;
        ::close(own);
        throw Error("cannot look up the target root " + quoted(root.path()) + ": " +
                    std::strerror(err));
    }
    // The parent's descriptor shares its open file, and so its lock: flock() on it
    // succeeds where a descriptor of our own would conflict.
    if (inherited_fd && same_file(*inherited_fd, st) &&
        ::flock(*inherited_fd, LOCK_EX | LOCK_NB) == 0) {
        ::close(own);
        m_fd = *inherited_fd;
        m_inherited = true;
        return;
    }
    // A holder that ends between our try and our look at /proc/locks has freed the lock:
    // try again rather than refuse for a run that is over.
    for (int attempt = 0;; ++attempt) {
        if (::flock(own, LOCK_EX | LOCK_NB) == 0)
            break;
        int err = errno;
        std::optional<std::string> who;
        if (err == EWOULDBLOCK) {
            who = holder_text(st);
            if (!who && attempt < 3)
                continue;
        }
        ::close(own);
        if (err == EWOULDBLOCK)
            throw Error(who.value_or("another rtprov") + " is working on " + quoted(root.path()) +
                        "; wait for it to finish, then run this again (nothing was changed)");
        throw Error("cannot lock the target root " + quoted(root.path()) + ": " +
                    std::strerror(err));
    }
    m_fd = own;
}

RootLock::~RootLock() {
    if (m_fd >= 0 && !m_inherited)
        ::close(m_fd); // the last descriptor of the open file: the lock goes with it
}

} // namespace rtprov::target
