// SPDX-License-Identifier: Apache-2.0
#include "provisioner/fs/root.hpp"

#include "provisioner/core/error.hpp"
#include "tests/unit/catch.hpp"
#include "tests/unit/temp_dir.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

using rtprov::Error;
using rtprov::core::FileState;
using rtprov::fs::Root;
namespace stdfs = std::filesystem;

namespace {

std::string error_of(const Root& root, const std::string& path, const std::string& prefix) {
    try {
        root.resolve(path);
    } catch (const Error& e) {
        std::string message = e.what();
        for (std::size_t at; (at = message.find(prefix)) != std::string::npos;)
            message.replace(at, prefix.size(), "ROOT");
        return message;
    }
    return "no error";
}

struct stat stat_of(const std::string& path) {
    struct stat st {};
    REQUIRE(::lstat(path.c_str(), &st) == 0);
    return st;
}

} // namespace

TEST_CASE("absolute symlinks resolve inside the root, as when the image boots") {
    TempDir dir;
    dir.write("usr/lib/os-release", "ID=debian\n");
    stdfs::create_directories(dir.path() + "/etc");
    stdfs::create_symlink("/usr/lib/os-release", dir.path() + "/etc/os-release");
    stdfs::create_symlink("/usr/lib", dir.path() + "/lib");
    Root root(dir.path());
    CHECK(root.resolve("/etc/os-release") == "/usr/lib/os-release");
    CHECK(root.resolve("/lib/os-release") == "/usr/lib/os-release");
    CHECK(root.resolve("/lib/new-file") == "/usr/lib/new-file");
    CHECK(root.read("/etc/os-release", rtprov::fs::caps::k_config)->content == "ID=debian\n");
}

TEST_CASE("relative symlinks and '..' that stay inside are followed") {
    TempDir dir;
    dir.write("boot/firmware/overlays/README", "x");
    stdfs::create_symlink("firmware/overlays", dir.path() + "/boot/overlays");
    Root root(dir.path());
    CHECK(root.resolve("/boot/overlays/README") == "/boot/firmware/overlays/README");
    CHECK(root.resolve("/boot/./firmware/../firmware//overlays") == "/boot/firmware/overlays");
    CHECK(root.resolve("/") == "/");
}

TEST_CASE("escapes through '..' and symlinks are refused") {
    TempDir dir;
    stdfs::create_directories(dir.path() + "/etc");
    stdfs::create_symlink("../../../../../tmp", dir.path() + "/etc/out");
    stdfs::create_symlink("/../escape", dir.path() + "/etc/abs-out");
    Root root(dir.path());
    CHECK(error_of(root, "/../etc/passwd", dir.path()) ==
          "path '/../etc/passwd' escapes the target root 'ROOT' through '..'");
    CHECK(error_of(root, "/etc/../../x", dir.path()) ==
          "path '/etc/../../x' escapes the target root 'ROOT' through '..'");
    CHECK(error_of(root, "/etc/out/x", dir.path()) ==
          "path '/etc/out/x' escapes the target root 'ROOT' through symlink '/etc/out' -> "
          "'../../../../../tmp'");
    CHECK(error_of(root, "/etc/abs-out", dir.path()) ==
          "path '/etc/abs-out' escapes the target root 'ROOT' through symlink '/etc/abs-out' "
          "-> '/../escape'");
    CHECK(error_of(root, "etc/passwd", dir.path()) ==
          "path 'etc/passwd' must be absolute inside the target root");
}

TEST_CASE("symlink loops are refused") {
    TempDir dir;
    stdfs::create_directories(dir.path() + "/etc");
    stdfs::create_symlink("b", dir.path() + "/etc/a");
    stdfs::create_symlink("a", dir.path() + "/etc/b");
    stdfs::create_symlink("self", dir.path() + "/etc/self");
    Root root(dir.path());
    CHECK(error_of(root, "/etc/a", dir.path()) ==
          "path '/etc/a' in the target root 'ROOT' has too many levels of symbolic links (a "
          "link loop?)");
    CHECK(error_of(root, "/etc/self/x", dir.path()) ==
          "path '/etc/self/x' in the target root 'ROOT' has too many levels of symbolic links "
          "(a link loop?)");
}

TEST_CASE("a write through an absolute symlink lands inside the root") {
    TempDir dir;
    TempDir outside;
    stdfs::create_directories(dir.path() + "/etc");
    stdfs::create_directories(dir.path() + "/data");
    // The host's outside.path() must never be touched: inside the root, this link
    // means <root><outside.path()>.
    stdfs::create_symlink(outside.path(), dir.path() + "/etc/link");
    stdfs::create_directories(dir.path() + outside.path());
    Root root(dir.path());
    root.write("/etc/link/file", FileState{"hello\n", 0644, 0, 0, std::nullopt});
    CHECK(dir.read(outside.path().substr(1) + "/file") == "hello\n");
    CHECK_FALSE(stdfs::exists(outside.path() + "/file"));
}

TEST_CASE("a write is atomic, keeps the requested mode and owner, and leaves no temporary") {
    TempDir dir;
    stdfs::create_directories(dir.path() + "/etc");
    Root root(dir.path());
    root.write("/etc/f", FileState{"one\n", 0640, 0, 0, std::nullopt});
    struct stat st = stat_of(dir.path() + "/etc/f");
    CHECK((st.st_mode & 07777) == 0640);
    CHECK(dir.read("etc/f") == "one\n");

    if (::geteuid() == 0) {
        root.write("/etc/f", FileState{"two\n", 0600, 1234, 5678, std::nullopt});
        st = stat_of(dir.path() + "/etc/f");
        CHECK(st.st_uid == 1234u);
        CHECK(st.st_gid == 5678u);
        CHECK((st.st_mode & 07777) == 0600);
    }
    std::size_t entries = 0;
    for (const auto& entry : stdfs::directory_iterator(dir.path() + "/etc")) {
        (void)entry;
        ++entries;
    }
    CHECK(entries == 1);
}

TEST_CASE("writing unchanged content does not rewrite the file") {
    TempDir dir;
    stdfs::create_directories(dir.path() + "/etc");
    Root root(dir.path());
    FileState state{"same\n", 0644, ::geteuid(), ::getegid(), std::nullopt};
    root.write("/etc/f", state);
    ino_t before = stat_of(dir.path() + "/etc/f").st_ino;
    root.write("/etc/f", state);
    CHECK(stat_of(dir.path() + "/etc/f").st_ino == before);
}

TEST_CASE("reading a folder as a file is an error; a missing file is nullopt") {
    TempDir dir;
    stdfs::create_directories(dir.path() + "/etc/d");
    Root root(dir.path());
    CHECK_FALSE(root.read("/etc/missing", rtprov::fs::caps::k_config));
    CHECK_THROWS_AS(root.read("/etc/d", rtprov::fs::caps::k_config), Error);
}

TEST_CASE("make_directories reports what it created, parents first") {
    TempDir dir;
    stdfs::create_directories(dir.path() + "/etc");
    Root root(dir.path());
    CHECK(root.make_directories("/etc/a/b") == std::vector<std::string>{"/etc/a", "/etc/a/b"});
    CHECK(root.make_directories("/etc/a/b").empty());
}

TEST_CASE("remove_tree removes links as links and never follows them") {
    TempDir dir;
    dir.write("srv/victim/keep", "x");
    stdfs::create_directories(dir.path() + "/var/own");
    stdfs::create_symlink("/srv/victim", dir.path() + "/var/own/abs-link");
    stdfs::create_symlink("../../srv/victim", dir.path() + "/var/own/rel-link");
    stdfs::create_symlink("/srv/victim", dir.path() + "/var/top-link");
    Root root(dir.path());
    root.remove_tree("/var/own");
    root.remove_tree("/var/top-link");
    CHECK_FALSE(dir.exists("var/own"));
    CHECK_FALSE(dir.exists("var/top-link"));
    CHECK(dir.read("srv/victim/keep") == "x");
}

TEST_CASE("a leftover temporary that is a symlink is removed as a link") {
    TempDir dir;
    dir.write("home/user/keep", "x");
    stdfs::create_directories(dir.path() + "/var/lib");
    stdfs::create_symlink("/home", dir.path() + "/var/lib/.rtprov-tmp-evil");
    stdfs::create_symlink("/", dir.path() + "/var/lib/.rtprov-tmp-root");
    Root root(dir.path());
    CHECK(root.remove_stale_temporaries("/var/lib") == 2);
    CHECK(dir.read("home/user/keep") == "x");
    CHECK_FALSE(dir.exists("var/lib/.rtprov-tmp-evil"));
}

TEST_CASE("remove_file and remove_directory act on a symlink itself, never its target") {
    TempDir dir;
    dir.write("etc/fstab", "fstab\n");
    dir.write("srv/keep/file", "x");
    stdfs::create_directories(dir.path() + "/etc/rtprov");
    stdfs::create_symlink("/etc/fstab", dir.path() + "/etc/rtprov/profile.yaml");
    stdfs::create_symlink("/srv/keep", dir.path() + "/etc/linkdir");
    Root root(dir.path());
    CHECK(root.remove_file("/etc/rtprov/profile.yaml"));
    CHECK(dir.read("etc/fstab") == "fstab\n");
    CHECK_FALSE(root.remove_directory("/etc/linkdir"));
    CHECK(dir.read("srv/keep/file") == "x");
}

TEST_CASE("write replaces a symlink at the last name instead of writing through it") {
    TempDir dir;
    dir.write("etc/fstab", "fstab\n");
    stdfs::create_symlink("/etc/fstab", dir.path() + "/etc/managed");
    Root root(dir.path());
    root.write("/etc/managed",
               FileState{"restored\n", 0644, ::geteuid(), ::getegid(), std::nullopt});
    CHECK(dir.read("etc/fstab") == "fstab\n");
    CHECK_FALSE(stdfs::is_symlink(dir.path() + "/etc/managed"));
    CHECK(dir.read("etc/managed") == "restored\n");
}

TEST_CASE("a symlink is read with its own time, and written back with it") {
    TempDir dir;
    stdfs::create_directories(dir.path() + "/etc");
    stdfs::create_symlink("/lib/systemd/system/x.service", dir.path() + "/etc/x.service");
    const timespec times[2] = {{0, UTIME_OMIT}, {1234567890, 0}};
    REQUIRE(::utimensat(AT_FDCWD, (dir.path() + "/etc/x.service").c_str(), times,
                        AT_SYMLINK_NOFOLLOW) == 0);
    Root root(dir.path());
    const auto link = root.read_entry("/etc/x.service", rtprov::fs::caps::k_managed);
    REQUIRE(link);
    CHECK(link->mtime == 1234567890);
    REQUIRE(root.remove_file("/etc/x.service"));
    root.write("/etc/x.service", *link);
    CHECK(stat_of(dir.path() + "/etc/x.service").st_mtim.tv_sec == 1234567890);
}

TEST_CASE("a time of 0 is a time: a file's own, and SOURCE_DATE_EPOCH=0") {
    TempDir dir;
    stdfs::create_directories(dir.path() + "/etc");
    Root root(dir.path());
    root.write("/etc/own", FileState{"own\n", 0644, ::geteuid(), ::getegid(), 0});
    CHECK(stat_of(dir.path() + "/etc/own").st_mtim.tv_sec == 0);
    root.set_source_date_epoch(0);
    root.write("/etc/file", FileState{"file\n", 0644, ::geteuid(), ::getegid(), std::nullopt});
    root.write("/etc/link", rtprov::core::symlink_to("/etc/file"));
    CHECK(stat_of(dir.path() + "/etc/file").st_mtim.tv_sec == 0);
    CHECK(stat_of(dir.path() + "/etc/link").st_mtim.tv_sec == 0);
}

TEST_CASE("with SOURCE_DATE_EPOCH before or after the clock, what is written and the "
          "folders it changes get exactly that time") {
    for (const std::int64_t epoch :
         {std::int64_t(1700000000), std::int64_t(::time(nullptr)) + 10 * 365 * 86400}) {
        TempDir dir;
        stdfs::create_directories(dir.path() + "/etc");
        const timespec old[2] = {{0, UTIME_OMIT}, {1000, 0}};
        REQUIRE(::utimensat(AT_FDCWD, (dir.path() + "/etc").c_str(), old, 0) == 0);
        Root root(dir.path());
        root.set_source_date_epoch(epoch);
        root.make_directories("/etc/new/deeper");
        root.write("/etc/new/deeper/file",
                   FileState{"x\n", 0644, ::geteuid(), ::getegid(), std::nullopt});
        root.write("/etc/link", rtprov::core::symlink_to("/etc/new"));
        for (const char* path :
             {"/etc", "/etc/new", "/etc/new/deeper", "/etc/new/deeper/file", "/etc/link"}) {
            INFO(path << " with SOURCE_DATE_EPOCH " << epoch);
            CHECK(stat_of(dir.path() + path).st_mtim.tv_sec == epoch);
        }
    }
}

TEST_CASE("stale temporaries of a killed run are removed") {
    TempDir dir;
    dir.write("etc/.rtprov-tmp-abc", "half");
    dir.write("etc/keep", "x");
    Root root(dir.path());
    CHECK(root.remove_stale_temporaries("/etc") == 1);
    CHECK_FALSE(dir.exists("etc/.rtprov-tmp-abc"));
    CHECK(dir.exists("etc/keep"));
}

TEST_CASE("a root that is not a directory is refused") {
    TempDir dir;
    std::string file = dir.write("file", "");
    CHECK_THROWS_AS(Root(file), Error);
    CHECK_THROWS_AS(Root(dir.path() + "/missing"), Error);
}

TEST_CASE("without openat2 the walk opens files beneath the root and follows no link") {
    TempDir dir;
    dir.write("etc/default/grub", "GRUB\n");
    stdfs::create_symlink("/etc", dir.path() + "/link-dir");
    stdfs::create_symlink("grub", dir.path() + "/etc/default/link-file");
    int root_fd = ::open(dir.path().c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    REQUIRE(root_fd >= 0);
    int fd = rtprov::fs::open_beneath_walk(root_fd, "/etc/default/grub", O_RDONLY);
    REQUIRE(fd >= 0);
    char buffer[8] = {};
    CHECK(::read(fd, buffer, sizeof buffer) == 5);
    CHECK(std::string(buffer) == "GRUB\n");
    ::close(fd);
    errno = 0;
    CHECK(rtprov::fs::open_beneath_walk(root_fd, "/link-dir/default/grub", O_RDONLY) == -1);
    CHECK((errno == ELOOP || errno == ENOTDIR));
    errno = 0;
    CHECK(rtprov::fs::open_beneath_walk(root_fd, "/etc/default/link-file", O_RDONLY) == -1);
    CHECK(errno == ELOOP);
    CHECK(rtprov::fs::open_beneath_walk(root_fd, "/etc/../etc/default/grub", O_RDONLY) == -1);
    int top = rtprov::fs::open_beneath_walk(root_fd, "/", O_RDONLY | O_DIRECTORY);
    CHECK(top >= 0);
    ::close(top);
    ::close(root_fd);
}

TEST_CASE("a FIFO or device node is refused by its type and never opened") {
    TempDir dir;
    stdfs::create_directories(dir.path() + "/boot/firmware");
    const std::string fifo = dir.path() + "/boot/firmware/cmdline.txt";
    REQUIRE(::mkfifo(fifo.c_str(), 0644) == 0);
    Root root(dir.path());
    try {
        root.read("/boot/firmware/cmdline.txt", rtprov::fs::caps::k_cmdline);
        FAIL("a FIFO was read");
    } catch (const Error& e) {
        CHECK(std::string(e.what()) ==
              "'" + fifo +
                  "' is a FIFO, not a regular file; rtprov reads and replaces only regular "
                  "files (nothing was opened or changed)");
    }
    // Nobody opened the FIFO for reading: a writer that does not wait finds no reader.
    int writer = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
    CHECK(writer < 0);
    CHECK(errno == ENXIO);
    if (writer >= 0)
        ::close(writer);
    CHECK_THROWS_AS(root.write("/boot/firmware/cmdline.txt", FileState{"x\n"}), Error);
    CHECK(stdfs::is_fifo(fifo));
    CHECK_THROWS_AS(rtprov::fs::read_host_file(fifo, rtprov::fs::caps::k_config), Error);
}

TEST_CASE("a file larger than its kind's cap is refused before it is read") {
    TempDir dir;
    const std::string big = dir.write("boot/firmware/cmdline.txt", "");
    // Sparse: 5 GB that take no room; reading it would take 5 GB of memory.
    REQUIRE(::truncate(big.c_str(), 5LL << 30) == 0);
    Root root(dir.path());
    try {
        root.read("/boot/firmware/cmdline.txt", rtprov::fs::caps::k_cmdline);
        FAIL("a 5 GB file was read");
    } catch (const Error& e) {
        CHECK(std::string(e.what()) == "'" + big +
                                           "' is 5368709120 bytes, more than the 65536 bytes "
                                           "rtprov reads of a kernel command line; is it the "
                                           "right file? Nothing was changed");
    }
    dir.write("etc/small", std::string(10, 'x'));
    CHECK_THROWS_AS(root.read("/etc/small", {"test file", 9}), Error);
    CHECK(root.read("/etc/small", {"test file", 10})->content == std::string(10, 'x'));
}

TEST_CASE("a file that grows past its cap while it is read is refused") {
    // /proc and /sys files report size 0; the cap holds on what is read.
    Root root("/");
    CHECK_THROWS_AS(root.read("/proc/self/status", {"test file", 16}), Error);
    CHECK(root.read("/proc/self/status", rtprov::fs::caps::k_system)->content.find("Pid:") !=
          std::string::npos);
}

TEST_CASE("messages name a root and its files by its display name, never its mount folder") {
    TempDir dir;
    stdfs::create_directories(dir.path() + "/etc");
    stdfs::create_symlink("../../../..", dir.path() + "/etc/up");
    REQUIRE(::mkfifo((dir.path() + "/etc/fstab").c_str(), 0600) == 0);
    auto message = [](const Root& root, const std::string& path) {
        try {
            (void)root.read(path, rtprov::fs::caps::k_config);
        } catch (const Error& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    const std::string fifo = " is a FIFO, not a regular file; rtprov reads and replaces only "
                             "regular files (nothing was opened or changed)";

    // the default: as given, and by host path
    const Root plain(dir.path());
    CHECK(plain.name() == dir.path());
    CHECK(plain.shown("/etc/fstab") == dir.path() + "/etc/fstab");
    CHECK(message(plain, "/etc/fstab") == "'" + dir.path() + "/etc/fstab'" + fifo);

    // an image's mounted root: as the image
    const Root image(dir.path(), "pi.img");
    CHECK(image.name() == "pi.img:/");
    CHECK(image.shown("/") == "pi.img:/");
    CHECK(message(image, "/etc/fstab") == "'pi.img:/etc/fstab'" + fifo);
    CHECK(message(image, "/etc/up/x") ==
          "path '/etc/up/x' escapes the target root 'pi.img:/' through symlink '/etc/up' -> "
          "'../../../..'");
    CHECK(image.host_path("/etc/fstab") == dir.path() + "/etc/fstab"); // for other programs

    // a --sysroot tree: its files as the running system names them, the tree as given
    const Root tree(dir.path(), "");
    CHECK(tree.shown("/etc/fstab") == "/etc/fstab");
    CHECK(message(tree, "/etc/fstab") == "'/etc/fstab'" + fifo);
    CHECK(message(tree, "/etc/up/x") == "path '/etc/up/x' escapes the target root '" + dir.path() +
                                            "' through symlink '/etc/up' -> '../../../..'");
}

TEST_CASE("try_read gives a file, or why not, as a result instead of an exception") {
    TempDir dir;
    dir.write("etc/hostname", "box\n");
    REQUIRE(::mkfifo((dir.path() + "/etc/fifo").c_str(), 0600) == 0);
    stdfs::create_symlink("../../..", dir.path() + "/etc/up");
    const Root root(dir.path(), "pi.img");
    auto read = root.try_read("/etc/hostname", rtprov::fs::caps::k_config);
    REQUIRE(read);
    CHECK(read->content == "box\n");
    auto missing = root.try_read("/etc/nope", rtprov::fs::caps::k_config);
    CHECK(missing.absent);
    CHECK(missing.problem == "cannot read 'pi.img:/etc/nope': No such file or directory");
    auto fifo = root.try_read("/etc/fifo", rtprov::fs::caps::k_config);
    CHECK_FALSE(fifo.absent);
    CHECK(fifo.problem.starts_with("'pi.img:/etc/fifo' is a FIFO"));
    auto escape = root.try_read("/etc/up/x", rtprov::fs::caps::k_config);
    CHECK_FALSE(escape.absent);
    CHECK(escape.problem.starts_with("path '/etc/up/x' escapes the target root 'pi.img:/'"));
    // an entry: a link as itself, and the same problems as results
    auto link = root.try_read_entry("/etc/up", rtprov::fs::caps::k_config);
    REQUIRE(link);
    CHECK(link->symlink);
    CHECK(link->content == "../../..");
    CHECK(root.try_read_entry("/etc/nope", rtprov::fs::caps::k_config).absent);
    CHECK(root.try_read_entry("/etc/hostname/x", rtprov::fs::caps::k_config).absent);
    CHECK(root.try_read_entry("/etc/fifo", rtprov::fs::caps::k_config)
              .problem.starts_with("'pi.img:/etc/fifo' is a FIFO"));
    CHECK(root.try_read_entry("/etc/..", rtprov::fs::caps::k_config).problem ==
          "path '/etc/..' does not name an entry");
    // read() keeps its contract: nullopt when absent, the problem thrown otherwise
    CHECK_FALSE(root.read("/etc/nope", rtprov::fs::caps::k_config));
    CHECK_THROWS_AS(root.read("/etc/fifo", rtprov::fs::caps::k_config), Error);
}
