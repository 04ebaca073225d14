// SPDX-License-Identifier: Apache-2.0
#include "provisioner/fs/root_lock.hpp"

#include "provisioner/core/error.hpp"
#include "tests/unit/catch.hpp"
#include "tests/unit/temp_dir.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <vector>

using rtprov::Error;
using namespace rtprov::fs;

TEST_CASE("a second lock on the same root is refused at once, naming the holder") {
    TempDir dir;
    std::filesystem::create_directories(dir.path() + "/etc");
    Root root(dir.path());
    RootLock first(root);
    // Another spelling of the same folder is the same lock.
    Root again(dir.path() + "/etc/..");
    try {
        RootLock second(again);
        FAIL("a second lock was taken");
    } catch (const Error& e) {
        CHECK(std::string(e.what()) == "another process ('rtprov_unit_tes', pid " +
                                           std::to_string(::getpid()) + ") is working on '" +
                                           dir.path() +
                                           "/etc/..'; wait for it to finish, then run this "
                                           "again (nothing was changed)");
    }
}

TEST_CASE("the lock is free again once its holder is gone") {
    TempDir dir;
    Root root(dir.path());
    { RootLock first(root); }
    RootLock second(root);
    CHECK(second.fd() >= 0);
}

TEST_CASE("a child rtprov uses the lock its parent passes, and only for that root") {
    TempDir dir, other;
    Root root(dir.path());
    RootLock parent(root);
    RootLock child(root, parent.fd());
    CHECK(child.fd() == parent.fd());
    // A descriptor of another folder is not the lock of this root.
    Root other_root(other.path());
    RootLock elsewhere(other_root);
    CHECK_THROWS_AS(RootLock(root, elsewhere.fd()), Error);
}

TEST_CASE("the holder of a flock is read from /proc/locks") {
    const std::string locks = "1: POSIX  ADVISORY  WRITE 77 08:01:1234 0 EOF\n"
                              "2: FLOCK  ADVISORY  WRITE 4321 fe:01:1234 0 EOF\n"
                              "2: -> FLOCK  ADVISORY  WRITE 999 fe:01:1234 0 EOF\n";
    auto holder = lock_holder(locks, 0xfe, 0x01, 1234);
    REQUIRE(holder);
    CHECK(holder->pid == 4321);
    CHECK_FALSE(lock_holder(locks, 0x08, 0x01, 1234)); // a POSIX lock is not ours
    CHECK_FALSE(lock_holder(locks, 0xfe, 0x01, 99));
}

TEST_CASE("/proc/locks is read line by line: kind, waiter, pid and the file's device and inode") {
    const auto entries = rtprov::fs::lock_entries("1: POSIX  ADVISORY  WRITE 77 08:01:1234 0 EOF\n"
                                                  "2: -> FLOCK  ADVISORY  WRITE 999 fe:1a:5 0 EOF\n"
                                                  "3: OFDLCK ADVISORY  READ  -1 00:2c:99 0 9\n"
                                                  "garbage\n"
                                                  "4: FLOCK  ADVISORY  WRITE 12 zz:01:1 0 EOF\n");
    REQUIRE(entries.size() == 3);
    CHECK(entries[0].kind == "POSIX");
    CHECK_FALSE(entries[0].waiter);
    CHECK(entries[0].pid == 77);
    CHECK(entries[0].dev_major == 8);
    CHECK(entries[0].dev_minor == 1);
    CHECK(entries[0].inode == 1234);
    CHECK(entries[1].waiter);
    CHECK(entries[1].kind == "FLOCK");
    CHECK(entries[1].dev_minor == 0x1a);
    CHECK(entries[2].kind == "OFDLCK");
    CHECK(entries[2].pid == -1);
}

TEST_CASE("the lock lives in a folder only root may enter; without one, on the root folder") {
    TempDir dir, locks;
    Root root(dir.path());
    const std::string lock_dir = locks.path() + "/rtprov";
    {
        RootLock lock(root, std::nullopt, lock_dir);
        struct stat st {};
        REQUIRE(::stat(lock_dir.c_str(), &st) == 0);
        CHECK((st.st_mode & 07777) == 0700);
        // Holding the root folder itself does not block it: anyone who can read a folder
        // may flock it.
        int folder = ::open(dir.path().c_str(), O_RDONLY | O_DIRECTORY);
        CHECK(::flock(folder, LOCK_EX | LOCK_NB) == 0);
        ::close(folder);
        CHECK_THROWS_AS(RootLock(root, std::nullopt, lock_dir), Error);
    }
    // A lock folder others may write to is not used: the root folder is locked instead.
    std::filesystem::create_directories(locks.path() + "/open");
    ::chmod((locks.path() + "/open").c_str(), 0777);
    RootLock fallback(root, std::nullopt, locks.path() + "/open");
    int folder = ::open(dir.path().c_str(), O_RDONLY | O_DIRECTORY);
    CHECK(::flock(folder, LOCK_EX | LOCK_NB) != 0);
    ::close(folder);
}

namespace {

std::size_t entries(const std::string& dir) {
    std::size_t n = 0;
    for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir))
        ++n;
    return n;
}

} // namespace

TEST_CASE("the holder removes its lock file as it lets go; a child it forked does not") {
    TempDir dir, locks;
    Root root(dir.path());
    const std::string lock_dir = locks.path() + "/rtprov";
    {
        RootLock lock(root, std::nullopt, lock_dir);
        CHECK(entries(lock_dir) == 1);
        // a forked child unwinding with its copy of the lock leaves the file to its parent
        pid_t child = ::fork();
        if (child == 0) {
            lock.~RootLock();
            ::_exit(0);
        }
        int status = 0;
        ::waitpid(child, &status, 0);
        CHECK(entries(lock_dir) == 1);
        CHECK_THROWS_AS(RootLock(root, std::nullopt, lock_dir), Error);
    }
    CHECK(entries(lock_dir) == 0);
    // so a root used many times, or many roots, leave nothing behind
    for (int i = 0; i < 3; ++i)
        RootLock again(root, std::nullopt, lock_dir);
    CHECK(entries(lock_dir) == 0);
}

TEST_CASE("a lock file no one holds, left by a killed run, is removed by the next taker") {
    TempDir dir, locks;
    Root root(dir.path());
    const std::string lock_dir = locks.path() + "/rtprov";
    ::mkdir(lock_dir.c_str(), 0700);
    const std::string stale = lock_dir + "/lock-1-2", held = lock_dir + "/lock-1-3",
                      other = lock_dir + "/irq-tune.state";
    for (const std::string& path : {stale, held, other})
        ::close(::open(path.c_str(), O_RDWR | O_CREAT, 0600));
    int holder = ::open(held.c_str(), O_RDWR);
    REQUIRE(::flock(holder, LOCK_EX | LOCK_NB) == 0);
    {
        RootLock lock(root, std::nullopt, lock_dir);
        CHECK_FALSE(std::filesystem::exists(stale));
        CHECK(std::filesystem::exists(held)); // still someone's lock
        CHECK(std::filesystem::exists(other));
    }
    ::close(holder);
}

TEST_CASE("takers racing for a root whose lock file comes and goes never hold it together") {
    // Each of 4 processes takes the lock 150 times; inside, a marker file made with O_EXCL
    // proves no one else is inside. A taker that finds it held tries again.
    TempDir dir, locks;
    Root root(dir.path());
    const std::string lock_dir = locks.path() + "/rtprov";
    const std::string marker = dir.path() + "/inside";
    std::vector<pid_t> children;
    for (int c = 0; c < 4; ++c) {
        pid_t child = ::fork();
        if (child == 0) {
            int together = 0;
            for (int taken = 0; taken < 150;) {
                try {
                    RootLock lock(root, std::nullopt, lock_dir);
                    int fd = ::open(marker.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
                    if (fd < 0)
                        ++together;
                    else
                        ::close(fd);
                    ::usleep(50);
                    ::unlink(marker.c_str());
                    ++taken;
                } catch (const Error&) {
                }
            }
            ::_exit(together == 0 ? 0 : 1);
        }
        children.push_back(child);
    }
    for (pid_t child : children) {
        int status = 0;
        ::waitpid(child, &status, 0);
        CHECK(WIFEXITED(status));
        CHECK(WEXITSTATUS(status) == 0);
    }
    CHECK(entries(lock_dir) == 0);
}
