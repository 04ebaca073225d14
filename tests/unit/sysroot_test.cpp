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
    std::string problem;
    auto pids = root.numbered("/proc", problem);
    REQUIRE(pids);
    CHECK(*pids == std::vector<int>{3, 12});
    CHECK_FALSE(root.numbered("/proc/99", problem));
    CHECK(problem.starts_with("cannot list '/proc/99': "));
}
