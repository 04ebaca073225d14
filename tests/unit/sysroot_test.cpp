// SPDX-License-Identifier: Apache-2.0
#include "provisioner/system/sysroot.hpp"

#include "tests/unit/catch.hpp"
#include "tests/unit/temp_dir.hpp"

#include <sys/stat.h>

#include <filesystem>
#include <fstream>

using namespace rtprov::system;

namespace {

void put(const std::string& path, const std::string& content) {
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    std::ofstream(path, std::ios::binary) << content;
}

} // namespace

TEST_CASE("values lose the newline, blanks and device-tree NUL at their end") {
    TempDir dir;
    put(dir.path() + "/proc/device-tree/model", std::string("Raspberry Pi 4 Model B\0", 23));
    put(dir.path() + "/proc/sys/kernel/osrelease", "6.12.117+deb13-amd64 \n");
    SysRoot root(dir.path());
    CHECK(*root.value("/proc/device-tree/model") == "Raspberry Pi 4 Model B");
    CHECK(*root.value("/proc/sys/kernel/osrelease") == "6.12.117+deb13-amd64");
    CHECK(*root.text("/proc/sys/kernel/osrelease") == "6.12.117+deb13-amd64 \n");
}

TEST_CASE("numbers and CPU lists say what they hold when it is not one") {
    TempDir dir;
    put(dir.path() + "/proc/sys/kernel/sched_rt_runtime_us", "-1\n");
    put(dir.path() + "/proc/sys/kernel/sched_rt_period_us", "1e6\n");
    put(dir.path() + "/sys/devices/system/cpu/online", "0-3,x\n");
    SysRoot root(dir.path());
    CHECK(*root.integer("/proc/sys/kernel/sched_rt_runtime_us") == -1);
    CHECK(root.integer("/proc/sys/kernel/sched_rt_period_us").problem ==
          "'/proc/sys/kernel/sched_rt_period_us' holds '1e6', not a number");
    CHECK(root.cpu_list("/sys/devices/system/cpu/online")
              .problem.starts_with("'/sys/devices/system/cpu/online' holds '0-3,x': "));
}

TEST_CASE("a FIFO in a sysroot is refused without blocking, and folders list by number") {
    TempDir dir;
    std::filesystem::create_directories(dir.path() + "/proc/12/task");
    std::filesystem::create_directories(dir.path() + "/proc/3");
    std::filesystem::create_directories(dir.path() + "/proc/self");
    REQUIRE(::mkfifo((dir.path() + "/proc/cmdline").c_str(), 0600) == 0);
    SysRoot root(dir.path());
    Fact<std::string> cmdline = root.text("/proc/cmdline");
    CHECK_FALSE(cmdline);
    CHECK(cmdline.problem.find("FIFO") != std::string::npos);
    auto pids = root.numbered("/proc");
    REQUIRE(pids);
    CHECK(*pids == std::vector<int>{3, 12});
    auto missing = root.numbered("/proc/99");
    CHECK_FALSE(missing);
    CHECK(missing.absent);
    CHECK(missing.problem.starts_with("cannot list '/proc/99': "));
}

TEST_CASE("in a copied tree a symlink is resolved inside it, never on the host") {
    TempDir dir;
    put(dir.path() + "/data/cmdline", "from the tree\n");
    put(dir.path() + "/devices/cpu/online", "0-1\n");
    std::filesystem::create_directories(dir.path() + "/proc");
    std::filesystem::create_directories(dir.path() + "/sys/devices/system");
    // absolute: the tree's /data/cmdline, not the host's; relative, as sysfs links are
    std::filesystem::create_symlink("/data/cmdline", dir.path() + "/proc/cmdline");
    std::filesystem::create_symlink("../../../devices/cpu", dir.path() + "/sys/devices/system/cpu");
    // the host's /etc/os-release through an absolute link: the tree has none
    std::filesystem::create_symlink("/etc/os-release", dir.path() + "/proc/os-release");
    std::filesystem::create_symlink("../../../../../../../../etc/os-release",
                                    dir.path() + "/proc/climbing");
    const SysRoot root(dir.path());

    REQUIRE(root.value("/proc/cmdline"));
    CHECK(*root.value("/proc/cmdline") == "from the tree");
    REQUIRE(root.cpu_list("/sys/devices/system/cpu/online"));
    CHECK(root.cpu_list("/sys/devices/system/cpu/online")->to_string() == "0-1");
    CHECK(root.exists("/sys/devices/system/cpu/online"));

    Fact<std::string> host_file = root.text("/proc/os-release");
    CHECK_FALSE(host_file);
    CHECK_FALSE(root.exists("/proc/os-release"));

    Fact<std::string> climbing = root.text("/proc/climbing");
    CHECK_FALSE(climbing);
    CHECK(climbing.problem.find("escapes the target root") != std::string::npos);

    CHECK(root.numbered("/sys/devices/system/cpu")); // through the relative link
}

TEST_CASE("a sysroot that is not a folder reads as nothing, saying why") {
    TempDir dir;
    put(dir.path() + "/file", "x");
    const SysRoot root(dir.path() + "/file");
    Fact<std::string> fact = root.text("/proc/cmdline");
    CHECK_FALSE(fact);
    CHECK(fact.problem.find("is not a folder") != std::string::npos);
}

TEST_CASE("a link is read as written, not followed, in a tree and on the running system") {
    TempDir dir;
    std::filesystem::create_directories(dir.path() + "/proc/7/fd");
    std::filesystem::create_symlink("/dev/snd/pcmC0D0p", dir.path() + "/proc/7/fd/3");
    std::filesystem::create_symlink("socket:[123]", dir.path() + "/proc/7/fd/4");
    std::filesystem::create_symlink("7", dir.path() + "/proc/self");
    dir.write("proc/7/comm", "x\n");
    const SysRoot root(dir.path());
    CHECK(root.link("/proc/7/fd/3").value == "/dev/snd/pcmC0D0p"); // no such file: not followed
    CHECK(root.link("/proc/7/fd/4").value == "socket:[123]");
    CHECK(root.link("/proc/self/fd/3").value == "/dev/snd/pcmC0D0p"); // folders resolved
    Fact<std::string> gone = root.link("/proc/8/fd/3");
    CHECK_FALSE(gone);
    CHECK(gone.absent);
    Fact<std::string> plain = root.link("/proc/7/comm");
    CHECK_FALSE(plain);
    CHECK_FALSE(plain.absent);
    CHECK(plain.problem.starts_with("cannot read the link '/proc/7/comm': "));
    // the running system: this process's own descriptor
    std::FILE* file = std::fopen(dir.write("open", "x").c_str(), "r");
    REQUIRE(file);
    CHECK(SysRoot("/").link("/proc/self/fd/" + std::to_string(fileno(file))).value ==
          std::filesystem::canonical(dir.path() + "/open").string());
    std::fclose(file);
}
