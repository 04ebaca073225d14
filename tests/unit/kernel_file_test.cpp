// SPDX-License-Identifier: Apache-2.0
#include "provisioner/fs/kernel_file.hpp"

#include "tests/unit/catch.hpp"
#include "tests/unit/temp_dir.hpp"

#include <sys/stat.h>

#include <filesystem>

using namespace rtprov::fs;

TEST_CASE("a kernel file is written whole, over what it held, and read back as a value") {
    TempDir dir;
    const std::string file = dir.write("cpuset.cpus.partition", "member\n");
    KernelWrite wrote = write_kernel_file(file, "isolated");
    CHECK(wrote);
    CHECK(wrote.message.empty());
    CHECK(dir.read("cpuset.cpus.partition") == "isolated");
    CHECK(*read_kernel_value(file) == "isolated");
    CHECK(*read_kernel_file(file) == "isolated");
    CHECK(write_kernel_value(file.c_str(), "root\n", 5) == 0);
    CHECK(*read_kernel_file(file) == "root\n");
    CHECK(value_of(std::string("Raspberry Pi 4 Model B\0", 23)) == "Raspberry Pi 4 Model B");
    CHECK(value_of("6.12 \n\n") == "6.12");
}

TEST_CASE("a kernel file that is not there is not made, and a write through a link is refused") {
    TempDir dir;
    const std::string missing = dir.path() + "/cpuset.cpus.partition";
    KernelWrite wrote = write_kernel_file(missing, "isolated\n");
    CHECK_FALSE(wrote);
    CHECK_FALSE(wrote.opened);
    CHECK(wrote.error == ENOENT);
    CHECK(wrote.holding.empty());
    CHECK(wrote.message ==
          "cannot write 'isolated' to '" + missing + "': No such file or directory");
    CHECK_FALSE(std::filesystem::exists(missing));

    std::filesystem::create_symlink(dir.write("elsewhere", "x"), dir.path() + "/link");
    CHECK(write_kernel_file(dir.path() + "/link", "y").error == ELOOP);
    CHECK(dir.read("elsewhere") == "x");

    // a file of /run a program reads is made when asked
    const std::string param = dir.path() + "/reboot-param";
    CHECK(write_kernel_file(param, "tryboot\n", KernelFileOpen::create));
    CHECK(dir.read("reboot-param") == "tryboot\n");
}

TEST_CASE("a write the kernel refuses says why, and what the file holds after it") {
    // procfs refuses a value that is not a number, as sysfs and cgroupfs refuse theirs
    const std::string file = "/proc/self/oom_score_adj";
    const auto before = read_kernel_value(file);
    REQUIRE(before);
    KernelWrite wrote = write_kernel_file(file, "not a number\n");
    CHECK_FALSE(wrote);
    CHECK(wrote.opened);
    CHECK(wrote.error == EINVAL);
    CHECK(wrote.holding == "; it holds '" + *before + "'");
    CHECK(wrote.message == "cannot write 'not a number' to '/proc/self/oom_score_adj': Invalid "
                           "argument; it holds '" +
                               *before + "'");

    // what cannot be read back says so
    KernelWrite full = write_kernel_file("/dev/full", "1");
    CHECK(full.error == ENOSPC);
    CHECK(full.message == "cannot write '1' to '/dev/full': No space left on device; it cannot "
                          "be read back: '/dev/full' is a character device, not a regular "
                          "file; rtprov reads and replaces only regular files (nothing was "
                          "opened or changed)");
}

TEST_CASE("a kernel file is read as a fact: absent, refused by type, or its bytes") {
    TempDir dir;
    auto missing = read_kernel_file(dir.path() + "/nope", "/proc/nope");
    CHECK_FALSE(missing);
    CHECK(missing.absent);
    CHECK(missing.problem == "cannot read '/proc/nope': No such file or directory");
    REQUIRE(::mkfifo((dir.path() + "/fifo").c_str(), 0600) == 0);
    auto fifo = read_kernel_file(dir.path() + "/fifo");
    CHECK_FALSE(fifo);
    CHECK_FALSE(fifo.absent);
    CHECK(fifo.problem.find("is a FIFO, not a regular file") != std::string::npos);
}
