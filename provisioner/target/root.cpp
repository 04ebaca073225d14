#include "provisioner/target/root.hpp"

#include "provisioner/core/error.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <deque>
#include <random>

namespace rtprov::target {

namespace {

constexpr int k_max_symlinks = 40; // the kernel's MAXSYMLINKS

std::string errno_text(int err) {
    return std::strerror(err);
}

// "/etc/x" -> "etc/x"; "/" -> ".": a path relative to the root's descriptor.
std::string relative(const std::string& resolved) {
    std::string rel = resolved.substr(resolved.find_first_not_of('/') == std::string::npos
                                          ? resolved.size()
                                          : resolved.find_first_not_of('/'));
    return rel.empty() ? "." : rel;
}

std::deque<std::string> components(const std::string& path) {
    std::deque<std::string> parts;
    std::size_t start = 0;
    while (start <= path.size()) {
        std::size_t slash = path.find('/', start);
        if (slash == std::string::npos)
            slash = path.size();
        if (slash > start)
            parts.push_back(path.substr(start, slash - start));
        start = slash + 1;
    }
    return parts;
}

std::string join(const std::vector<std::string>& parts) {
    std::string out;
    for (const std::string& part : parts)
        out += "/" + part;
    return out.empty() ? "/" : out;
}

} // namespace

int open_beneath_walk(int root_fd, const std::string& resolved, int flags) {
    std::deque<std::string> parts = components(resolved);
    if (parts.empty())
        return ::openat(root_fd, ".", flags | O_CLOEXEC);
    int dir = root_fd;
    for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
        if (parts[i] == "..") { // resolved paths have none; refuse rather than climb
            errno = EXDEV;
            return -1;
        }
        int next = ::openat(dir, parts[i].c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        int err = errno;
        if (dir != root_fd)
            ::close(dir);
        if (next < 0) {
            errno = err;
            return -1;
        }
        dir = next;
    }
    int fd = ::openat(dir, parts.back().c_str(), flags | O_NOFOLLOW | O_CLOEXEC);
    int err = errno;
    if (dir != root_fd)
        ::close(dir);
    errno = err;
    return fd;
}

namespace {

// openat2() beneath the root, refusing every symlink: the path was resolved already,
// so a link found now means the tree changed under us. Where there is no openat2 —
// qemu-user, which runs an arm64 rtprov in an x86 image build's chroot (pi-gen's
// on_chroot), or a kernel before 5.6 — the same walk by hand (open_beneath_walk).
int open_beneath(int root_fd, const std::string& resolved, std::uint64_t flags) {
    static bool have_openat2 = true;
    if (have_openat2) {
        open_how how{};
        how.flags = flags | O_CLOEXEC;
        how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
        std::string rel = relative(resolved);
        int fd = int(syscall(SYS_openat2, root_fd, rel.c_str(), &how, sizeof how));
        if (fd >= 0 || errno != ENOSYS)
            return fd;
        have_openat2 = false;
    }
    return open_beneath_walk(root_fd, resolved, int(flags));
}

void write_all(int fd, const std::string& bytes, const std::string& what) {
    std::size_t done = 0;
    while (done < bytes.size()) {
        ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            throw Error("cannot write " + quoted(what) + ": " + errno_text(errno));
        done += std::size_t(n);
    }
}

} // namespace

std::pair<std::string, std::string> split_parent(const std::string& path) {
    auto slash = path.find_last_of('/');
    if (slash == std::string::npos)
        return {"/", path};
    return {slash == 0 ? "/" : path.substr(0, slash), path.substr(slash + 1)};
}

Root::Root(const std::string& host_path) : m_path(host_path) {
    m_fd = ::open(host_path.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (m_fd < 0)
        throw Error("target root " + quoted(host_path) +
                    " is not a directory: " + errno_text(errno));
}

Root::~Root() {
    if (m_fd >= 0)
        ::close(m_fd);
}

std::string Root::host_path(const std::string& path) const {
    if (m_path == "/")
        return path;
    std::string base = m_path;
    while (base.size() > 1 && base.back() == '/')
        base.pop_back();
    return base + (path == "/" ? "" : path);
}

std::string Root::resolve(const std::string& path) const {
    if (path.empty() || path.front() != '/')
        throw Error("path " + quoted(path) + " must be absolute inside the target root");
    std::deque<std::string> todo = components(path);
    std::vector<std::string> done;
    int links = 0;
    bool missing = false; // once a component is missing, the rest cannot be links
    std::string via;      // the last symlink followed, for messages
    while (!todo.empty()) {
        std::string part = std::move(todo.front());
        todo.pop_front();
        if (part == ".")
            continue;
        if (part == "..") {
            if (done.empty())
                throw Error("path " + quoted(path) + " escapes the target root " + quoted(m_path) +
                            (via.empty() ? " through '..'" : " through symlink " + via));
            done.pop_back();
            continue;
        }
        done.push_back(part);
        if (missing)
            continue;
        std::string rel = relative(join(done));
        struct stat st {};
        if (::fstatat(m_fd, rel.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
            if (errno == ENOENT) {
                missing = true;
                continue;
            }
            if (errno == ENOTDIR)
                throw Error(quoted(join(done)) + " in the target root " + quoted(m_path) +
                            " has a parent that is not a directory");
            throw Error("cannot look up " + quoted(host_path(join(done))) + ": " +
                        errno_text(errno));
        }
        if (!S_ISLNK(st.st_mode))
            continue;
        if (++links > k_max_symlinks)
            throw Error("path " + quoted(path) + " in the target root " + quoted(m_path) +
                        " has too many levels of symbolic links (a link loop?)");
        std::string target(std::size_t(st.st_size) + 256, '\0');
        ssize_t n = ::readlinkat(m_fd, rel.c_str(), target.data(), target.size());
        if (n < 0)
            throw Error("cannot read symlink " + quoted(host_path(join(done))) + ": " +
                        errno_text(errno));
        target.resize(std::size_t(n));
        via = quoted(join(done)) + " -> " + quoted(target);
        done.pop_back();
        // An absolute link is absolute inside the image, as it is when the image boots.
        if (!target.empty() && target.front() == '/')
            done.clear();
        std::deque<std::string> spliced = components(target);
        todo.insert(todo.begin(), spliced.begin(), spliced.end());
    }
    return join(done);
}

std::string Root::resolve_parent(const std::string& path) const {
    auto [parent, name] = split_parent(path);
    if (name.empty() || name == "." || name == "..")
        throw Error("path " + quoted(path) + " does not name an entry");
    std::string dir = resolve(parent);
    return (dir == "/" ? "" : dir) + "/" + name;
}

int Root::open_directory(const std::string& resolved) const {
    int fd = open_beneath(m_fd, resolved, O_DIRECTORY | O_RDONLY);
    if (fd < 0)
        throw Error("cannot open folder " + quoted(host_path(resolved)) + ": " + errno_text(errno));
    return fd;
}

std::optional<core::FileState> Root::read(const std::string& path) const {
    std::string resolved = resolve(path);
    int fd = open_beneath(m_fd, resolved, O_RDONLY | O_NOCTTY | O_NONBLOCK);
    if (fd < 0) {
        if (errno == ENOENT)
            return std::nullopt;
        throw Error("cannot read " + quoted(host_path(resolved)) + ": " + errno_text(errno));
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        throw Error(quoted(host_path(resolved)) + " is not a regular file");
    }
    core::FileState state;
    state.mode = st.st_mode & 07777;
    state.uid = st.st_uid;
    state.gid = st.st_gid;
    state.mtime = st.st_mtim.tv_sec;
    char buffer[65536];
    while (true) {
        ssize_t n = ::read(fd, buffer, sizeof buffer);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int err = errno;
            ::close(fd);
            throw Error("cannot read " + quoted(host_path(resolved)) + ": " + errno_text(err));
        }
        if (n == 0)
            break;
        state.content.append(buffer, std::size_t(n));
    }
    ::close(fd);
    return state;
}

std::optional<core::FileState> Root::read_entry(const std::string& path) const {
    std::string resolved = resolve_parent(path);
    struct stat st {};
    if (::fstatat(m_fd, relative(resolved).c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
        if (errno == ENOENT || errno == ENOTDIR)
            return std::nullopt;
        throw Error("cannot look up " + quoted(host_path(resolved)) + ": " + errno_text(errno));
    }
    if (S_ISLNK(st.st_mode)) {
        std::string target(std::size_t(st.st_size) + 256, '\0');
        ssize_t n = ::readlinkat(m_fd, relative(resolved).c_str(), target.data(), target.size());
        if (n < 0)
            throw Error("cannot read symlink " + quoted(host_path(resolved)) + ": " +
                        errno_text(errno));
        target.resize(std::size_t(n));
        core::FileState state = core::symlink_to(target);
        state.uid = st.st_uid;
        state.gid = st.st_gid;
        return state;
    }
    return read(resolved);
}

bool Root::exists(const std::string& path) const {
    std::string rel = relative(resolve(path));
    struct stat st {};
    return ::fstatat(m_fd, rel.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0;
}

bool Root::is_directory(const std::string& path) const {
    std::string rel = relative(resolve(path));
    struct stat st {};
    return ::fstatat(m_fd, rel.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
}

std::vector<std::string> Root::list(const std::string& path) const {
    std::vector<std::string> names;
    std::string resolved = resolve(path);
    int fd = open_beneath(m_fd, resolved, O_DIRECTORY | O_RDONLY);
    if (fd < 0)
        return names;
    DIR* dir = ::fdopendir(fd);
    if (!dir) {
        ::close(fd);
        return names;
    }
    while (dirent* entry = ::readdir(dir)) {
        std::string name = entry->d_name;
        if (name != "." && name != "..")
            names.push_back(name);
    }
    ::closedir(dir);
    return names;
}

std::string Root::temporary_name(const std::string& dir) const {
    static std::mt19937_64 random{std::random_device{}()};
    static const char k_chars[] = "abcdefghijklmnopqrstuvwxyz0123456789";
    while (true) {
        std::string name = k_temp_prefix;
        for (int i = 0; i < 10; ++i)
            name += k_chars[random() % (sizeof k_chars - 1)];
        std::string path = (dir == "/" ? "" : dir) + "/" + name;
        if (!exists(path))
            return path;
    }
}

void Root::write(const std::string& path, const core::FileState& state) {
    std::string resolved = resolve_parent(path);
    struct stat st {};
    bool entry = ::fstatat(m_fd, relative(resolved).c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                 (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode));
    if (auto current = entry ? read_entry(resolved) : std::nullopt;
        current && current->same_as(state))
        return;
    auto [parent, name] = split_parent(resolved);
    int dir_fd = open_directory(parent);
    std::string temp = split_parent(temporary_name(parent)).second;
    if (state.symlink) {
        // A link is made under a temporary name and renamed over the old entry: atomic.
        step();
        int made = ::symlinkat(state.content.c_str(), dir_fd, temp.c_str());
        int err = errno;
        if (made == 0) {
            ::fchownat(dir_fd, temp.c_str(), state.uid, state.gid, AT_SYMLINK_NOFOLLOW);
            step();
            made = ::renameat(dir_fd, temp.c_str(), dir_fd, name.c_str());
            err = errno;
            if (made != 0)
                ::unlinkat(dir_fd, temp.c_str(), 0);
        }
        if (made == 0) {
            step();
            ::fsync(dir_fd);
        }
        ::close(dir_fd);
        if (made != 0)
            throw Error("cannot make symlink " + quoted(host_path(resolved)) + ": " +
                        errno_text(err));
        return;
    }
    int fd =
        ::openat(dir_fd, temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) {
        int err = errno;
        ::close(dir_fd);
        throw Error("cannot create a file in " + quoted(host_path(parent)) + ": " +
                    errno_text(err));
    }
    try {
        write_all(fd, state.content, host_path(resolved));
        // chown before chmod: chown clears set-user-ID bits.
        if (::fchown(fd, state.uid, state.gid) != 0)
            throw Error("cannot set owner of " + quoted(host_path(resolved)) + ": " +
                        errno_text(errno));
        if (::fchmod(fd, state.mode) != 0)
            throw Error("cannot set mode of " + quoted(host_path(resolved)) + ": " +
                        errno_text(errno));
        if (state.mtime != 0) {
            timespec times[2] = {{0, UTIME_OMIT}, {state.mtime, 0}};
            ::futimens(fd, times);
        }
        step();
        if (::fsync(fd) != 0)
            throw Error("cannot sync " + quoted(host_path(resolved)) + ": " + errno_text(errno));
        step();
        if (::renameat(dir_fd, temp.c_str(), dir_fd, name.c_str()) != 0)
            throw Error("cannot replace " + quoted(host_path(resolved)) + ": " + errno_text(errno));
        step();
        ::fsync(dir_fd);
    } catch (...) {
        ::close(fd);
        ::unlinkat(dir_fd, temp.c_str(), 0);
        ::close(dir_fd);
        throw;
    }
    ::close(fd);
    ::close(dir_fd);
}

std::vector<std::string> Root::missing_directories(const std::string& path) const {
    std::string resolved = resolve(path);
    std::vector<std::string> missing;
    std::string current = resolved;
    while (current != "/" && !exists(current)) {
        missing.insert(missing.begin(), current);
        current = split_parent(current).first;
    }
    if (!is_directory(current))
        throw Error(quoted(host_path(current)) + " is not a folder");
    return missing;
}

std::vector<std::string> Root::make_directories(const std::string& path) {
    std::vector<std::string> created = missing_directories(path);
    for (const std::string& dir : created) {
        auto [parent, name] = split_parent(dir);
        int dir_fd = open_directory(parent);
        step();
        if (::mkdirat(dir_fd, name.c_str(), 0755) != 0 && errno != EEXIST) {
            int err = errno;
            ::close(dir_fd);
            throw Error("cannot create folder " + quoted(host_path(dir)) + ": " + errno_text(err));
        }
        ::fsync(dir_fd);
        ::close(dir_fd);
    }
    return created;
}

bool Root::remove_file(const std::string& path) {
    std::string resolved = resolve_parent(path);
    auto [parent, name] = split_parent(resolved);
    if (!is_directory(parent))
        return false;
    int dir_fd = open_directory(parent);
    step();
    if (::unlinkat(dir_fd, name.c_str(), 0) != 0) {
        int err = errno;
        ::close(dir_fd);
        if (err == ENOENT)
            return false;
        throw Error("cannot remove " + quoted(host_path(resolved)) + ": " + errno_text(err));
    }
    ::fsync(dir_fd);
    ::close(dir_fd);
    return true;
}

bool Root::remove_directory(const std::string& path) {
    std::string resolved = resolve_parent(path);
    auto [parent, name] = split_parent(resolved);
    if (!is_directory(parent))
        return false;
    int dir_fd = open_directory(parent);
    step();
    bool removed = ::unlinkat(dir_fd, name.c_str(), AT_REMOVEDIR) == 0;
    if (removed)
        ::fsync(dir_fd);
    ::close(dir_fd);
    return removed;
}

void Root::rename(const std::string& from, const std::string& to) {
    std::string resolved_from = resolve_parent(from), resolved_to = resolve_parent(to);
    int from_fd = open_directory(split_parent(resolved_from).first);
    int to_fd = open_directory(split_parent(resolved_to).first);
    step();
    int result = ::renameat(from_fd, split_parent(resolved_from).second.c_str(), to_fd,
                            split_parent(resolved_to).second.c_str());
    int err = errno;
    if (result == 0) {
        ::fsync(from_fd);
        ::fsync(to_fd);
    }
    ::close(from_fd);
    ::close(to_fd);
    if (result != 0)
        throw Error("cannot rename " + quoted(host_path(resolved_from)) + " to " +
                    quoted(host_path(resolved_to)) + ": " + errno_text(err));
}

void Root::remove_tree(const std::string& path) {
    // Resolve once; below it, links are removed as links and never followed.
    auto remove = [this](auto& self, const std::string& resolved) -> void {
        struct stat st {};
        if (::fstatat(m_fd, relative(resolved).c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
            return;
        auto [parent, name] = split_parent(resolved);
        if (S_ISDIR(st.st_mode))
            for (const std::string& child : list(resolved))
                self(self, resolved + "/" + child);
        int dir_fd = open_directory(parent);
        step();
        int result = ::unlinkat(dir_fd, name.c_str(), S_ISDIR(st.st_mode) ? AT_REMOVEDIR : 0);
        int err = errno;
        if (result == 0)
            ::fsync(dir_fd);
        ::close(dir_fd);
        if (result != 0 && err != ENOENT)
            throw Error("cannot remove " + quoted(host_path(resolved)) + ": " + errno_text(err));
    };
    remove(remove, resolve_parent(path));
}

int Root::remove_stale_temporaries(const std::string& dir) {
    int removed = 0;
    for (const std::string& name : list(dir))
        if (name.starts_with(k_temp_prefix)) {
            remove_tree((dir == "/" ? "" : dir) + "/" + name);
            ++removed;
        }
    return removed;
}

} // namespace rtprov::target
