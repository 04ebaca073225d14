// SPDX-License-Identifier: Apache-2.0
#include "provisioner/live/sched_features.hpp"

#include "provisioner/core/error.hpp"

#include "tests/unit/catch.hpp"
#include "tests/unit/temp_dir.hpp"

using namespace rtprov::live;

namespace {

// The start of Debian 13's 6.12.117 features file, as booted here (NO_RT_PUSH_IPI).
const std::string k_debian_features =
    "GENTLE_FAIR_SLEEPERS START_DEBIT NO_NEXT_BUDDY LAST_BUDDY CACHE_HOT_BUDDY "
    "WAKEUP_PREEMPTION NO_HRTICK NO_HRTICK_DL NO_DOUBLE_TICK NONTASK_CAPACITY TTWU_QUEUE "
    "SIS_UTIL NO_WARN_DOUBLE_CLOCK RT_PUSH_IPI_X NO_RT_PUSH_IPI NO_RT_RUNTIME_SHARE\n";
const std::string k_generic = "#1 SMP PREEMPT_DYNAMIC Debian 6.12.117-1 (2025-11-10)";
const std::string k_rt = "#1 SMP PREEMPT_RT Debian 6.12.117-1 (2025-11-10)";

bool no_mount(const std::string&) {
    return false;
}

} // namespace

TEST_CASE("the RT_PUSH_IPI decision follows the kernel and the features file") {
    CHECK(decide_push_ipi(k_generic, k_debian_features) == PushIpiAction::enable);
    CHECK(decide_push_ipi(k_generic, "A RT_PUSH_IPI B") == PushIpiAction::already_on);
    CHECK(decide_push_ipi(k_rt, k_debian_features) == PushIpiAction::leave_rt_kernel);
    CHECK(decide_push_ipi(k_generic, "A B") == PushIpiAction::unknown);
}

TEST_CASE("NO_RT_PUSH_IPI in the features file is turned into RT_PUSH_IPI") {
    TempDir dir;
    std::string features = dir.write("features", k_debian_features);
    auto result = ensure_rt_push_ipi({features, dir.path(), k_generic}, no_mount);
    CHECK(result.ok);
    CHECK(result.action == PushIpiAction::enable);
    CHECK(dir.read("features") == "RT_PUSH_IPI");
    CHECK(result.message ==
          "found NO_RT_PUSH_IPI (kernel " + k_generic + "); RT_PUSH_IPI is now on");
}

TEST_CASE("RT_PUSH_IPI already on is left as it is") {
    TempDir dir;
    std::string features = dir.write("features", "TTWU_QUEUE RT_PUSH_IPI\n");
    auto result = ensure_rt_push_ipi({features, dir.path(), k_generic}, no_mount);
    CHECK(result.ok);
    CHECK(result.action == PushIpiAction::already_on);
    CHECK(dir.read("features") == "TTWU_QUEUE RT_PUSH_IPI\n");
}

TEST_CASE("on a PREEMPT_RT kernel the features file is not touched") {
    TempDir dir;
    std::string features = dir.write("features", k_debian_features);
    auto result = ensure_rt_push_ipi({features, dir.path(), k_rt}, no_mount);
    CHECK(result.ok);
    CHECK(result.action == PushIpiAction::leave_rt_kernel);
    CHECK(dir.read("features") == k_debian_features);
}

TEST_CASE("a missing features file mounts debugfs first, and says so when that fails") {
    TempDir dir;
    std::string features = dir.path() + "/sched/features";
    std::vector<std::string> mounted;
    auto fake_mount = [&](const std::string& where) {
        mounted.push_back(where);
        dir.write("sched/features", k_debian_features); // what mounting debugfs shows
        return true;
    };
    auto result = ensure_rt_push_ipi({features, dir.path(), k_generic}, fake_mount);
    CHECK(mounted == std::vector<std::string>{dir.path()});
    CHECK(result.ok);
    CHECK(result.action == PushIpiAction::enable);

    TempDir empty;
    auto failed =
        ensure_rt_push_ipi({empty.path() + "/sched/features", empty.path(), k_generic}, no_mount);
    CHECK_FALSE(failed.ok);
    CHECK(failed.message.rfind("cannot mount debugfs on " + empty.path(), 0) == 0);
}

#include "provisioner/live/cpu_dma_latency.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

TEST_CASE("holding cpu_dma_latency writes a 32-bit zero and keeps the file open") {
    TempDir dir;
    std::string path = dir.write("cpu_dma_latency", "");
    rtprov::core::Fd fd = hold_cpu_dma_latency(path);
    CHECK(fd);
    CHECK(dir.read("cpu_dma_latency") == std::string(4, '\0'));
    CHECK(::fcntl(fd.get(), F_GETFD) >= 0); // still open
    fd.reset();
    CHECK_THROWS_AS(hold_cpu_dma_latency(dir.path() + "/missing"), rtprov::Error);
}

#include "provisioner/live/cpuset_partition.hpp"

TEST_CASE("a cpuset partition is written and read back") {
    TempDir dir;
    dir.write("cpuset.cpus.partition", "member\n");
    dir.write("cpuset.cpus.effective", "2-3\n");
    auto ok = set_cpuset_partition(dir.path(), "isolated");
    CHECK(ok.ok);
    CHECK(ok.message == dir.path() + " is a 'isolated' cpuset partition on CPUs 2-3");
    CHECK(dir.read("cpuset.cpus.partition") == "isolated");

    auto missing = set_cpuset_partition(dir.path() + "/nope", "isolated");
    CHECK_FALSE(missing.ok);
    CHECK(missing.message.find("is the slice active") != std::string::npos);
}

TEST_CASE("a partition the kernel refuses says why, and what the file holds after it") {
    TempDir dir;
    dir.write("cpuset.cpus.partition", "member\n");
    // a refused write of an open file: the file size limit (EFBIG), as the kernel's store
    // handler refuses a value
    struct sigaction ignore {
    }, old_action{};
    ignore.sa_handler = SIG_IGN;
    ::sigaction(SIGXFSZ, &ignore, &old_action);
    rlimit old_limit{};
    ::getrlimit(RLIMIT_FSIZE, &old_limit);
    rlimit none = old_limit;
    none.rlim_cur = 0;
    REQUIRE(::setrlimit(RLIMIT_FSIZE, &none) == 0);
    auto refused = set_cpuset_partition(dir.path(), "isolated");
    ::setrlimit(RLIMIT_FSIZE, &old_limit);
    ::sigaction(SIGXFSZ, &old_action, nullptr);
    CHECK_FALSE(refused.ok);
    CHECK(refused.message == "cannot write 'isolated' to " + dir.path() +
                                 "/cpuset.cpus.partition: File too large; it holds ''");
}

TEST_CASE("an invalid partition read back is not taken for a working one") {
    CHECK(partition_took("isolated", "isolated"));
    CHECK_FALSE(
        partition_took("isolated", "isolated invalid (Cpu list in cpuset.cpus not exclusive)"));
    CHECK_FALSE(partition_took("isolated", "member"));
}
