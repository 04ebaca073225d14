// SPDX-License-Identifier: Apache-2.0
#include "provisioner/system/processes.hpp"

#include "tests/unit/catch.hpp"
#include "tests/unit/temp_dir.hpp"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cstdio>
#include <filesystem>

using namespace rtprov::system;
namespace stdfs = std::filesystem;

namespace {

// A copied /proc: rtprov itself (42) and its children, qemu running from the image (100,
// open for writing, its own mount namespace with the image's loop device mounted), a
// pager reading it (200).
struct ProcTree {
    TempDir dir;
    FileId image;

    void process(int pid, const std::string& comm, int ppid, char state = 'S') {
        const std::string p = "proc/" + std::to_string(pid) + "/";
        dir.write(p + "comm", comm);
        dir.write(p + "stat", std::to_string(pid) + " (" + comm + ") " + state + " " +
                                  std::to_string(ppid) + " 1 1 0 -1 4194560\n");
    }
    void opens(int pid, int fd, const std::string& file, const std::string& flags) {
        const std::string p = dir.path() + "/proc/" + std::to_string(pid);
        stdfs::create_directories(p + "/fd");
        stdfs::create_symlink(file, p + "/fd/" + std::to_string(fd));
        dir.write("proc/" + std::to_string(pid) + "/fdinfo/" + std::to_string(fd),
                  "pos:\t0\nflags:\t" + flags + "\nmnt_id:\t25\n");
    }
    void in_namespace(int pid, const std::string& ns, const std::string& mountinfo) {
        const std::string p = dir.path() + "/proc/" + std::to_string(pid);
        stdfs::create_directories(p + "/ns");
        stdfs::create_symlink("/namespaces/" + ns, p + "/ns/mnt");
        dir.write("proc/" + std::to_string(pid) + "/mountinfo", mountinfo);
    }

    ProcTree() {
        dir.write("images/pi.img", "disk");
        dir.write("namespaces/host", "");
        dir.write("namespaces/vm", "");
        struct stat st {};
        REQUIRE(::stat((dir.path() + "/images/pi.img").c_str(), &st) == 0);
        image = {st.st_dev, st.st_ino};
        process(42, "rtprov\n", 1);
        opens(42, 5, "/images/pi.img", "02100002");
        process(43, "sh\n", 42);
        process(44, "sleep\n", 43);
        process(45, "true\n", 43, 'Z'); // a zombie: not a living descendant
        process(100, "qemu-system-x86\n", 1);
        opens(100, 3, "/images/pi.img", "0100002"); // O_RDWR
        opens(100, 4, "/namespaces/vm", "0100000");
        in_namespace(100, "vm", "36 35 7:5 / /mnt rw,relatime - ext4 /dev/loop5 rw\n");
        process(200, "less\n", 1);
        opens(200, 0, "/images/pi.img", "0100000"); // O_RDONLY
        in_namespace(200, "host", "22 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw\n");
        in_namespace(42, "host", "22 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw\n");
        dir.write("proc/filesystems", "nodev\tsysfs\nnodev\ttmpfs\n\text4\n\tvfat\n");
    }
    std::string lock_id() const {
        char id[64];
        std::snprintf(id, sizeof id, "%02x:%02x:%llu", ::major(image.device), ::minor(image.device),
                      static_cast<unsigned long long>(image.inode));
        return id;
    }
};

} // namespace

TEST_CASE("a process is named by its comm on one line, or as a process when it has none") {
    ProcTree tree;
    tree.dir.write("proc/300/comm", "two\nlines\n");
    const SysRoot sys(tree.dir.path());
    CHECK(process_name(sys, 100) == "qemu-system-x86 (100)");
    CHECK(process_name(sys, 300) == "two\\x0alines (300)");
    CHECK(process_name(sys, 999) == "process (999)");
}

TEST_CASE("the processes that have a file open are found through their descriptors, writers "
          "by their flags") {
    ProcTree tree;
    const SysRoot sys(tree.dir.path());
    CHECK(file_id(sys, "/proc/100/fd/3") == tree.image);
    CHECK(processes_with_open(sys, tree.image, false, 42) ==
          std::vector<std::string>{"qemu-system-x86 (100)", "less (200)"});
    CHECK(processes_with_open(sys, tree.image, true, 42) ==
          std::vector<std::string>{"qemu-system-x86 (100)"});
    // asked by another process, rtprov's own descriptor counts
    CHECK(processes_with_open(sys, tree.image, true, 1) ==
          std::vector<std::string>{"rtprov (42)", "qemu-system-x86 (100)"});
}

TEST_CASE("the locks on a file name their holders, not the asking process's own flock") {
    ProcTree tree;
    const std::string id = tree.lock_id();
    tree.dir.write("proc/locks", "1: FLOCK  ADVISORY  WRITE 42 " + id +
                                     " 0 EOF\n"
                                     "2: OFDLCK ADVISORY  READ  -1 " +
                                     id +
                                     " 100 100\n"
                                     "3: POSIX  ADVISORY  WRITE 200 " +
                                     id +
                                     " 0 EOF\n"
                                     "4: POSIX  ADVISORY  WRITE 300 00:01:1 0 EOF\n");
    const SysRoot sys(tree.dir.path());
    CHECK(lock_holders(sys, tree.image, 42) ==
          std::vector<std::string>{"qemu-system-x86 (100)", "less (200)"});
    // only its own flock: no one else
    tree.dir.write("proc/locks", "1: FLOCK  ADVISORY  WRITE 42 " + id + " 0 EOF\n");
    CHECK(lock_holders(sys, tree.image, 42).empty());
    // an OFD lock (no pid) no process here has the file open for: said as a lock of a process
    TempDir bare;
    bare.write("proc/locks", "1: OFDLCK ADVISORY  READ  -1 " + id + " 100 100\n");
    CHECK(lock_holders(SysRoot(bare.path()), tree.image, 42) ==
          std::vector<std::string>{"a process (OFDLCK)"});
    // a waiter ("->") counts as one who wants it
    bare.write("proc/locks", "1: -> FLOCK  ADVISORY  WRITE 77 " + id + " 0 EOF\n");
    bare.write("proc/77/comm", "flock\n");
    CHECK(lock_holders(SysRoot(bare.path()), tree.image, 42) ==
          std::vector<std::string>{"flock (77)"});
}

TEST_CASE("the processes with the image's file systems mounted are found by mount namespace") {
    ProcTree tree;
    const SysRoot sys(tree.dir.path());
    CHECK(processes_mounting(sys, {makedev(7, 5)}, 42) ==
          std::vector<std::string>{"qemu-system-x86 (100)"});
    CHECK(processes_mounting(sys, {makedev(8, 1)}, 42) == std::vector<std::string>{"less (200)"});
    CHECK(processes_mounting(sys, {makedev(7, 9)}, 42).empty());
}

TEST_CASE("a process's living descendants are found by their parents in /proc/PID/stat") {
    ProcTree tree;
    const SysRoot sys(tree.dir.path());
    CHECK(descendants(sys, 42) == std::vector<int>{43, 44});
    CHECK(descendants(sys, 100).empty());
}

TEST_CASE("the file systems the kernel mounts are read from /proc/filesystems") {
    ProcTree tree;
    const SysRoot sys(tree.dir.path());
    CHECK(kernel_mounts(sys, "ext4"));
    CHECK(kernel_mounts(sys, "vfat"));
    CHECK(kernel_mounts(sys, "tmpfs"));
    CHECK_FALSE(kernel_mounts(sys, "btrfs"));
    CHECK_FALSE(kernel_mounts(SysRoot(tree.dir.path() + "/images"), "ext4"));
}
