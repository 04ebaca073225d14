// SPDX-License-Identifier: Apache-2.0
#include "provisioner/fs/root.hpp"

#include "provisioner/core/error.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <deque>
#include <random>

namespace rtprov::fs {

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
    core::Fd walked; // the folder reached so far, when it is not the root itself
    for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
        if (parts[i] == "..") { // resolved paths have none; refuse rather than climb
            errno = EXDEV;
            return -1;
        }
        core::Fd next(::openat(walked ? walked.get() : root_fd, parts[i].c_str(),
                               O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (!next)
            return -1; // errno is openat's: nothing was closed since
        walked = std::move(next);
    }
    return ::openat(walked ? walked.get() : root_fd, parts.back().c_str(),
                    flags | O_NOFOLLOW | O_CLOEXEC);
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

Root::Root(const std::string& host_path, std::optional<std::string> display)
    : m_path(host_path), m_display(std::move(display)) {
    m_fd = core::Fd(::open(host_path.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!m_fd)
        throw Error("target root " + quoted(name()) + " is not a directory: " + errno_text(errno));
}

std::string Root::name() const {
    return m_display && !m_display->empty() ? *m_display + ":/" : m_path;
}

std::string Root::shown(const std::string& path) const {
    if (!m_display)
        return host_path(path);
    return m_display->empty() ? path : *m_display + ":" + path;
}

std::string Root::host_path(const std::string& path) const {
    if (m_path == "/")
        return path;
    std::string base = m_path;
    while (base.size() > 1 && base.back() == '/')
        base.pop_back();
    return base + (path == "/" ? "" : path);
}

core::Result<std::string> Root::try_resolve(const std::string& path) const {
    using Resolved = core::Result<std::string>;
    if (path.empty() || path.front() != '/')
        return Resolved::failed("path " + quoted(path) +
                                " must be absolute inside the target root");
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
                return Resolved::failed(
                    "path " + quoted(path) + " escapes the target root " + quoted(name()) +
                    (via.empty() ? " through '..'" : " through symlink " + via));
            done.pop_back();
            continue;
        }
        done.push_back(part);
        if (missing)
            continue;
        std::string rel = relative(join(done));
        struct stat st {};
        if (::fstatat(m_fd.get(), rel.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
            if (errno == ENOENT) {
                missing = true;
                continue;
            }
            if (errno == ENOTDIR)
                return Resolved::failed(quoted(join(done)) + " in the target root " +
                                        quoted(name()) + " has a parent that is not a directory");
            return Resolved::failed("cannot look up " + quoted(shown(join(done))) + ": " +
                                    errno_text(errno));
        }
        if (!S_ISLNK(st.st_mode))
            continue;
        if (++links > k_max_symlinks)
            return Resolved::failed("path " + quoted(path) + " in the target root " +
                                    quoted(name()) +
                                    " has too many levels of symbolic links (a link loop?)");
        std::string target(std::size_t(st.st_size) + 256, '\0');
        ssize_t n = ::readlinkat(m_fd.get(), rel.c_str(), target.data(), target.size());
        if (n < 0)
            return Resolved::failed("cannot read symlink " + quoted(shown(join(done))) + ": " +
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
    return {join(done), {}, false};
}

std::string Root::resolve(const std::string& path) const {
    return core::value_or_throw(try_resolve(path));
}

std::string Root::resolve_parent(const std::string& path) const {
    auto [parent, name] = split_parent(path);
    if (name.empty() || name == "." || name == "..")
        throw Error("path " + quoted(path) + " does not name an entry");
    std::string dir = resolve(parent);
    return (dir == "/" ? "" : dir) + "/" + name;
}

core::Fd Root::open_directory(const std::string& resolved) const {
    core::Fd fd(open_beneath(m_fd.get(), resolved, O_DIRECTORY | O_RDONLY));
    if (!fd)
        throw Error("cannot open folder " + quoted(shown(resolved)) + ": " + errno_text(errno));
    return fd;
}

void Root::sync_directory(const core::Fd& dir_fd, const std::string& resolved_dir) const {
    // a folder whose entries changed: SOURCE_DATE_EPOCH's time, whether the clock is
    // before it or after it (only lowering a later time would leave the clock's where
    // SOURCE_DATE_EPOCH is ahead of it, and two builds would differ)
    if (m_source_date_epoch) {
        const timespec times[2] = {{0, UTIME_OMIT}, {*m_source_date_epoch, 0}};
        if (::futimens(dir_fd.get(), times) != 0)
            throw Error("cannot set the modification time of folder " +
                        quoted(shown(resolved_dir)) + ": " + errno_text(errno));
    }
    // EINVAL: the file system cannot sync a folder at all (fsync(2); VirtualBox shared
    // folders, for one): nothing more is to be had there, as PostgreSQL also decides.
    if (::fsync(dir_fd.get()) != 0 && errno != EINVAL)
        throw Error("cannot sync folder " + quoted(shown(resolved_dir)) + ": " + errno_text(errno) +
                    "; the change in it is made but may not survive a crash: check the disk, "
                    "then run rtprov again (it finishes or undoes what is half done)");
}

std::string file_type_name(unsigned mode) {
    switch (mode & S_IFMT) {
    case S_IFREG:
        return "a regular file";
    case S_IFDIR:
        return "a folder";
    case S_IFLNK:
        return "a symlink";
    case S_IFCHR:
        return "a character device";
    case S_IFBLK:
        return "a block device";
    case S_IFIFO:
        return "a FIFO";
    case S_IFSOCK:
        return "a socket";
    }
    return "a special file";
}

namespace {

std::string size_text(std::uint64_t bytes) {
    return std::to_string(bytes) + (bytes == 1 ? " byte" : " bytes");
}

std::string too_large(const std::string& shown, std::uint64_t size, const SizeCap& cap) {
    return quoted(shown) + " is " + size_text(size) + ", more than the " +
           size_text(cap.max_bytes) + " rtprov reads of a " + cap.kind +
           "; is it the right file? Nothing was changed";
}

std::string not_regular(const std::string& shown, unsigned mode) {
    return quoted(shown) + " is " + file_type_name(mode) +
           ", not a regular file; rtprov reads and replaces only regular files "
           "(nothing was opened or changed)";
}

// Opens for reading the regular file that 'path_fd' (O_PATH) is, without opening any
// other: through /proc/self/fd, which reopens that very file (open(2), O_PATH). Without
// /proc (a bare chroot) 'reopen' opens the path again, and the file is checked to be
// the same one.
core::Fd reopen_for_reading(const core::Fd& path_fd, const struct stat& st,
                            const std::function<int()>& reopen) {
    constexpr int k_flags = O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC;
    std::string self = "/proc/self/fd/" + std::to_string(path_fd.get());
    core::Fd fd(::open(self.c_str(), k_flags));
    if (fd || errno != ENOENT)
        return fd;
    fd = core::Fd(reopen());
    if (!fd)
        return fd;
    struct stat again {};
    if (::fstat(fd.get(), &again) != 0 || again.st_dev != st.st_dev || again.st_ino != st.st_ino) {
        errno = ESTALE;
        return core::Fd();
    }
    return fd;
}

core::Result<std::string> cannot_read(const std::string& shown, int err) {
    return core::Result<std::string>::failed("cannot read " + quoted(shown) + ": " +
                                             errno_text(err));
}

// Reads the regular file behind 'path_fd' (O_PATH), at most cap.max_bytes of it;
// 'shown' names it in problems. The one reader under every read of rtprov's: a file of a
// root (Root::try_read), of the host (read_host_file) and of the kernel (read_kernel_file).
core::Result<std::string> read_capped(core::Fd path_fd, const std::string& shown,
                                      const SizeCap& cap, const std::function<int()>& reopen,
                                      core::FileState* state) {
    using Read = core::Result<std::string>;
    struct stat st {};
    if (::fstat(path_fd.get(), &st) != 0)
        return cannot_read(shown, errno);
    if (!S_ISREG(st.st_mode))
        return Read::failed(not_regular(shown, st.st_mode));
    if (std::uint64_t(st.st_size) > cap.max_bytes)
        return Read::failed(too_large(shown, std::uint64_t(st.st_size), cap));
    core::Fd fd = reopen_for_reading(path_fd, st, reopen);
    int err = errno;
    path_fd.reset();
    if (!fd)
        return cannot_read(shown, err);
    if (state) {
        state->mode = st.st_mode & 07777;
        state->uid = st.st_uid;
        state->gid = st.st_gid;
        state->mtime = st.st_mtim.tv_sec;
    }
    std::string content;
    char buffer[65536];
    while (true) {
        ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return cannot_read(shown, errno);
        if (n == 0)
            break;
        // Files of /proc and /sys say size 0; a file may also grow while it is read.
        if (content.size() + std::size_t(n) > cap.max_bytes)
            return Read::failed(too_large(shown, content.size() + std::size_t(n), cap));
        content.append(buffer, std::size_t(n));
    }
    return {std::move(content), {}, false};
}

} // namespace

core::Result<core::FileState> Root::try_read(const std::string& path, const SizeCap& cap) const {
    core::Result<std::string> resolved = try_resolve(path);
    if (!resolved)
        return core::Result<core::FileState>::failed(resolved.problem);
    return read_resolved(*resolved, cap);
}

std::optional<core::FileState> Root::read(const std::string& path, const SizeCap& cap) const {
    return value_or_nullopt(try_read(path, cap));
}

std::optional<core::FileState> Root::value_or_nullopt(core::Result<core::FileState> read) {
    if (read.absent)
        return std::nullopt;
    return core::value_or_throw(std::move(read));
}

core::Result<core::FileState> Root::read_resolved(const std::string& resolved,
                                                  const SizeCap& cap) const {
    using Read = core::Result<core::FileState>;
    core::Fd path_fd(open_beneath(m_fd.get(), resolved, O_PATH));
    if (!path_fd) {
        const int err = errno;
        if (err == ENOENT)
            return Read::failed(cannot_read(shown(resolved), err).problem, true);
        if (err == ELOOP) { // the last name is a link again: the tree changed under us
            struct stat st {};
            ::fstatat(m_fd.get(), relative(resolved).c_str(), &st, AT_SYMLINK_NOFOLLOW);
            return Read::failed(not_regular(shown(resolved), st.st_mode));
        }
        return Read::failed(cannot_read(shown(resolved), err).problem);
    }
    core::FileState state;
    core::Result<std::string> content = read_capped(
        std::move(path_fd), shown(resolved), cap,
        [&] { return open_beneath(m_fd.get(), resolved, O_RDONLY | O_NOCTTY | O_NONBLOCK); },
        &state);
    if (!content)
        return Read::failed(std::move(content.problem));
    state.content = std::move(*content.value);
    return {std::move(state), {}, false};
}

std::optional<core::FileState> Root::read_entry(const std::string& path, const SizeCap& cap) const {
    return value_or_nullopt(try_read_entry(path, cap));
}

core::Result<core::FileState> Root::try_read_entry(const std::string& path,
                                                   const SizeCap& cap) const {
    using Read = core::Result<core::FileState>;
    auto [parent, last] = split_parent(path);
    if (last.empty() || last == "." || last == "..")
        return Read::failed("path " + quoted(path) + " does not name an entry");
    const core::Result<std::string> dir = try_resolve(parent);
    if (!dir)
        return Read::failed(dir.problem);
    const std::string resolved = (*dir == "/" ? "" : *dir) + "/" + last;
    struct stat st {};
    if (::fstatat(m_fd.get(), relative(resolved).c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
        const int err = errno;
        if (err == ENOENT || err == ENOTDIR)
            return Read::failed(cannot_read(shown(resolved), ENOENT).problem, true);
        return Read::failed("cannot look up " + quoted(shown(resolved)) + ": " + errno_text(err));
    }
    if (S_ISLNK(st.st_mode)) {
        std::string target(std::size_t(st.st_size) + 256, '\0');
        ssize_t n =
            ::readlinkat(m_fd.get(), relative(resolved).c_str(), target.data(), target.size());
        if (n < 0)
            return Read::failed("cannot read symlink " + quoted(shown(resolved)) + ": " +
                                errno_text(errno));
        target.resize(std::size_t(n));
        core::FileState state = core::symlink_to(target);
        state.uid = st.st_uid;
        state.gid = st.st_gid;
        state.mtime = st.st_mtim.tv_sec; // a link's own time, which rollback gives back
        return {std::move(state), {}, false};
    }
    return read_resolved(resolved, cap);
}

core::Result<std::string> try_read_host_file(const std::string& path, const SizeCap& cap,
                                             const std::string& shown) {
    const std::string& name = shown.empty() ? path : shown;
    core::Fd path_fd(::open(path.c_str(), O_PATH | O_CLOEXEC));
    if (!path_fd) {
        const int err = errno;
        return core::Result<std::string>::failed(cannot_read(name, err).problem, err == ENOENT);
    }
    return read_capped(
        std::move(path_fd), name, cap,
        [&] { return ::open(path.c_str(), O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC); },
        nullptr);
}

std::optional<std::string> read_host_file(const std::string& path, const SizeCap& cap,
                                          const std::string& shown) {
    core::Result<std::string> read = try_read_host_file(path, cap, shown);
    if (read.absent)
        return std::nullopt;
    return core::value_or_throw(std::move(read));
}

bool Root::exists(const std::string& path) const {
    std::string rel = relative(resolve(path));
    struct stat st {};
    return ::fstatat(m_fd.get(), rel.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0;
}

bool Root::is_directory(const std::string& path) const {
    std::string rel = relative(resolve(path));
    struct stat st {};
    return ::fstatat(m_fd.get(), rel.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
}

std::vector<std::string> Root::list(const std::string& path) const {
    std::vector<std::string> names;
    std::string resolved = resolve(path);
    core::Fd fd(open_beneath(m_fd.get(), resolved, O_DIRECTORY | O_RDONLY));
    if (!fd)
        return names;
    DIR* dir = ::fdopendir(fd.get());
    if (!dir)
        return names;
    fd.release(); // closedir closes it
    while (dirent* entry = ::readdir(dir)) {
        std::string name = entry->d_name;
        if (name != "." && name != "..")
            names.push_back(name);
    }
    ::closedir(dir);
    return names;
}

core::Fd Root::open_folder() const {
    core::Fd fd(::openat(m_fd.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!fd)
        throw Error("cannot open the target root " + quoted(name()) + ": " + errno_text(errno));
    return fd;
}

bool is_running_system(const Root& root) {
    const core::Fd fd = root.open_folder();
    struct stat st {
    }, system{};
    // The process's root is /proc/self/root; '/' only where /proc is not mounted (a bare
    // chroot). Under qemu-user with -L PREFIX, a path is looked up in PREFIX first, and
    // '/' names PREFIX itself (seen with qemu 7.2): an image's own arm64 rtprov run that
    // way on its root would take the image for this machine.
    bool seen = ::stat("/proc/self/root", &system) == 0 || ::stat("/", &system) == 0;
    return ::fstat(fd.get(), &st) == 0 && seen && st.st_dev == system.st_dev &&
           st.st_ino == system.st_ino;
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
    if (::fstatat(m_fd.get(), relative(resolved).c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
        if (!S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode))
            throw Error(quoted(shown(resolved)) + " is " + file_type_name(st.st_mode) +
                        ", not a regular file or a symlink; rtprov replaces only those "
                        "(nothing was changed)");
        // Same bytes are only possible at the same size; a larger file is never read.
        bool maybe_same = S_ISLNK(st.st_mode) == state.symlink &&
                          (state.symlink || std::size_t(st.st_size) == state.content.size());
        if (maybe_same) {
            if (auto current = read_entry(resolved, {"file", state.content.size()});
                current && current->same_as(state))
                return;
        }
    }
    auto [parent, name] = split_parent(resolved);
    const core::Fd dir_fd = open_directory(parent);
    std::string temp = split_parent(temporary_name(parent)).second;
    // A new entry is made under a temporary name and renamed over the old one: atomic.
    // Until the rename, any failure removes the temporary (its unlink's result is not
    // looked at: a leftover is found by name and removed by the next run,
    // remove_stale_temporaries).
    auto fail = [&](const std::string& what) -> Error {
        const int err = errno;
        Error error(what + " " + quoted(shown(resolved)) + ": " + errno_text(err));
        ::unlinkat(dir_fd.get(), temp.c_str(), 0);
        return error;
    };
    if (state.symlink) {
        step();
        if (::symlinkat(state.content.c_str(), dir_fd.get(), temp.c_str()) != 0)
            throw Error("cannot make symlink " + quoted(shown(resolved)) + ": " +
                        errno_text(errno));
        if (::fchownat(dir_fd.get(), temp.c_str(), state.uid, state.gid, AT_SYMLINK_NOFOLLOW) != 0)
            throw fail("cannot set owner of symlink");
        if (const auto mtime = state.mtime ? state.mtime : m_source_date_epoch) {
            const timespec times[2] = {{0, UTIME_OMIT}, {*mtime, 0}};
            if (::utimensat(dir_fd.get(), temp.c_str(), times, AT_SYMLINK_NOFOLLOW) != 0)
                throw fail("cannot set the modification time of symlink");
        }
        step();
        if (::renameat(dir_fd.get(), temp.c_str(), dir_fd.get(), name.c_str()) != 0)
            throw fail("cannot make symlink");
        step();
        sync_directory(dir_fd, parent);
        return;
    }
    core::Fd fd(::openat(dir_fd.get(), temp.c_str(),
                         O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600));
    if (!fd)
        throw Error("cannot create a file in " + quoted(shown(parent)) + ": " + errno_text(errno));
    try {
        write_all(fd.get(), state.content, shown(resolved));
    } catch (...) {
        ::unlinkat(dir_fd.get(), temp.c_str(), 0);
        throw;
    }
    // chown before chmod: chown clears set-user-ID bits.
    if (::fchown(fd.get(), state.uid, state.gid) != 0)
        throw fail("cannot set owner of");
    if (::fchmod(fd.get(), state.mode) != 0)
        throw fail("cannot set mode of");
    if (const auto mtime = state.mtime ? state.mtime : m_source_date_epoch) {
        const timespec times[2] = {{0, UTIME_OMIT}, {*mtime, 0}};
        if (::futimens(fd.get(), times) != 0)
            throw fail("cannot set the modification time of");
    }
    step();
    if (::fsync(fd.get()) != 0)
        throw fail("cannot sync");
    step();
    if (::renameat(dir_fd.get(), temp.c_str(), dir_fd.get(), name.c_str()) != 0)
        throw fail("cannot replace");
    step();
    sync_directory(dir_fd, parent);
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
        throw Error(quoted(shown(current)) + " is not a folder");
    return missing;
}

std::vector<std::string> Root::make_directories(const std::string& path) {
    std::vector<std::string> created = missing_directories(path);
    for (const std::string& dir : created) {
        auto [parent, name] = split_parent(dir);
        const core::Fd dir_fd = open_directory(parent);
        step();
        if (::mkdirat(dir_fd.get(), name.c_str(), 0755) != 0 && errno != EEXIST)
            throw Error("cannot create folder " + quoted(shown(dir)) + ": " + errno_text(errno));
        if (m_source_date_epoch) {
            const timespec times[2] = {{0, UTIME_OMIT}, {*m_source_date_epoch, 0}};
            if (::utimensat(dir_fd.get(), name.c_str(), times, AT_SYMLINK_NOFOLLOW) != 0)
                throw Error("cannot set the modification time of folder " + quoted(shown(dir)) +
                            ": " + errno_text(errno));
        }
        sync_directory(dir_fd, parent);
    }
    return created;
}

bool Root::remove_file(const std::string& path) {
    std::string resolved = resolve_parent(path);
    auto [parent, name] = split_parent(resolved);
    if (!is_directory(parent))
        return false;
    const core::Fd dir_fd = open_directory(parent);
    step();
    if (::unlinkat(dir_fd.get(), name.c_str(), 0) != 0) {
        if (errno == ENOENT)
            return false;
        throw Error("cannot remove " + quoted(shown(resolved)) + ": " + errno_text(errno));
    }
    sync_directory(dir_fd, parent);
    return true;
}

bool Root::remove_directory(const std::string& path) {
    std::string resolved = resolve_parent(path);
    auto [parent, name] = split_parent(resolved);
    if (!is_directory(parent))
        return false;
    const core::Fd dir_fd = open_directory(parent);
    step();
    bool removed = ::unlinkat(dir_fd.get(), name.c_str(), AT_REMOVEDIR) == 0;
    if (removed)
        sync_directory(dir_fd, parent);
    return removed;
}

void Root::rename(const std::string& from, const std::string& to) {
    std::string resolved_from = resolve_parent(from), resolved_to = resolve_parent(to);
    const std::string from_dir = split_parent(resolved_from).first;
    const std::string to_dir = split_parent(resolved_to).first;
    const core::Fd from_fd = open_directory(from_dir);
    const core::Fd to_fd = open_directory(to_dir);
    step();
    if (::renameat(from_fd.get(), split_parent(resolved_from).second.c_str(), to_fd.get(),
                   split_parent(resolved_to).second.c_str()) != 0)
        throw Error("cannot rename " + quoted(shown(resolved_from)) + " to " +
                    quoted(shown(resolved_to)) + ": " + errno_text(errno));
    sync_directory(from_fd, from_dir);
    sync_directory(to_fd, to_dir);
}

void Root::remove_tree(const std::string& path) {
    // Resolve once; below it, links are removed as links and never followed.
    auto remove = [this](auto& self, const std::string& resolved) -> void {
        struct stat st {};
        if (::fstatat(m_fd.get(), relative(resolved).c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
            return;
        auto [parent, name] = split_parent(resolved);
        if (S_ISDIR(st.st_mode))
            for (const std::string& child : list(resolved))
                self(self, resolved + "/" + child);
        const core::Fd dir_fd = open_directory(parent);
        step();
        if (::unlinkat(dir_fd.get(), name.c_str(), S_ISDIR(st.st_mode) ? AT_REMOVEDIR : 0) == 0)
            sync_directory(dir_fd, parent);
        else if (errno != ENOENT)
            throw Error("cannot remove " + quoted(shown(resolved)) + ": " + errno_text(errno));
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

} // namespace rtprov::fs
