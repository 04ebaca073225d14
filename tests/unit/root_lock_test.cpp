// SPDX-License-Identifier: Apache-2.0
#include "provisioner/target/root_lock.hpp"

#include "provisioner/core/error.hpp"
#include "tests/unit/catch.hpp"
#include "tests/unit/temp_dir.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

using rtprov::Error;
using namespace rtprov::target;

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
