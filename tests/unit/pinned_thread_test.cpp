// SPDX-License-Identifier: Apache-2.0
#include "provisioner/selftest/pinned_thread.hpp"

#include "provisioner/core/error.hpp"

#include "tests/unit/catch.hpp"
#include "tests/unit/child_process.hpp"
#include "tests/unit/temp_dir.hpp"

#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <optional>
#include <utility>
#include <vector>

using namespace rtprov::selftest;
using rtprov::core::CpuList;
using rtprov::core::SchedPolicy;

namespace {

const std::string k_fifo_99_error =
    "cannot run a thread at SCHED_FIFO priority 99: operation not permitted (RLIMIT_RTPRIO is "
    "0, hard limit 0); run rtprov as root, or allow real-time priority 99 (ulimit -r 99, "
    "LimitRTPRIO=99 in a service, or 'rtprio 99' in /etc/security/limits.d/)";

} // namespace

TEST_CASE("a refused real-time priority says which limit to raise") {
    CHECK(realtime_permission_error(SchedPolicy::fifo, 99, {0, 0}) == k_fifo_99_error);
    CHECK(realtime_permission_error(SchedPolicy::rr, 20, {10, std::nullopt}) ==
          "cannot run a thread at SCHED_RR priority 20: operation not permitted (RLIMIT_RTPRIO "
          "is 10, hard limit unlimited); run rtprov as root, or allow real-time priority 20 "
          "(ulimit -r 20, LimitRTPRIO=20 in a service, or 'rtprio 20' in "
          "/etc/security/limits.d/)");
}

TEST_CASE("errno texts are lower case") {
    CHECK(errno_text(EPERM) == "operation not permitted");
    CHECK(errno_text(ENOENT) == "no such file or directory");
}

TEST_CASE("a pinned thread runs on its CPU, under its name, and reports its tid") {
    pid_t seen_tid = 0;
    int seen_cpu = -1;
    {
        PinnedThread thread({"rtprov-test-pinned-thread", SchedPolicy::other, 0, 0u}, [&] {
            seen_tid = gettid();
            seen_cpu = sched_getcpu();
        });
        const pid_t tid = thread.tid();
        thread.join();
        CHECK(tid == seen_tid);
        CHECK(tid != gettid());
    }
    CHECK(seen_cpu == 0);

    std::string comm;
    PinnedThread named({"rtprov-test-pinned-thread", SchedPolicy::other, 0, std::nullopt},
                       [&] { comm = TempDir::read_host_file("/proc/thread-self/comm"); });
    named.join();
    CHECK(comm == "rtprov-test-pin\n"); // 15 characters kept
}

TEST_CASE("a thread given a CPU list runs on those CPUs and no other") {
    const long online = sysconf(_SC_NPROCESSORS_ONLN);
    const auto last = static_cast<unsigned>(online > 1 ? 1 : 0);
    // The creating thread on CPU 0 alone: a thread that inherited its affinity would differ.
    cpu_set_t old;
    sched_getaffinity(0, sizeof old, &old);
    cpu_set_t only_0;
    CPU_ZERO(&only_0);
    CPU_SET(0, &only_0);
    sched_setaffinity(0, sizeof only_0, &only_0);
    cpu_set_t seen;
    CPU_ZERO(&seen);
    PinnedThread thread({"rtprov-test-list", SchedPolicy::other, 0, std::nullopt, 256 * 1024,
                         CpuList::range(0, last)},
                        [&] { sched_getaffinity(0, sizeof seen, &seen); });
    thread.join();
    sched_setaffinity(0, sizeof old, &old);
    CHECK(CPU_COUNT(&seen) == int(last) + 1);
    for (unsigned cpu = 0; cpu <= last; ++cpu)
        CHECK(CPU_ISSET(cpu, &seen));
}

TEST_CASE("a thread's affinity is its CPU and its CPU list together") {
    ThreadSpec spec{"t", SchedPolicy::other, 0, 3u, 256 * 1024, CpuList({0, 1})};
    CHECK(spec.affinity() == CpuList({0, 1, 3}));
    spec.cpu.reset();
    CHECK(spec.affinity() == CpuList({0, 1}));
    spec.cpus = {};
    CHECK(spec.affinity().empty());
}

TEST_CASE("a thread that cannot be pinned to its CPU list names the CPUs") {
    try {
        PinnedThread thread(
            {"rtprov-test", SchedPolicy::other, 0, std::nullopt, 256 * 1024, CpuList({4094, 4095})},
            [] {});
        FAIL("a thread pinned to CPUs 4094-4095 started");
    } catch (const rtprov::Error& e) {
        CHECK(std::string(e.what()) ==
              "cannot start thread 'rtprov-test' (SCHED_OTHER on CPUs 4094-4095): invalid "
              "argument");
    }
}

TEST_CASE("a real-time thread starts with its policy, or the error says what to do") {
    int policy = -1;
    int priority = -1;
    try {
        PinnedThread thread({"rtprov-test-rt", SchedPolicy::fifo, 42, std::nullopt}, [&] {
            sched_param param{};
            policy = sched_getscheduler(0);
            sched_getparam(0, &param);
            priority = param.sched_priority;
        });
        thread.join();
        CHECK(policy == SCHED_FIFO);
        CHECK(priority == 42);
    } catch (const rtprov::Error& e) {
        // No permission here: the message must be the one that says what to do.
        rlimit limit{};
        getrlimit(RLIMIT_RTPRIO, &limit);
        auto value = [](rlim_t v) {
            return v == RLIM_INFINITY ? std::nullopt : std::optional<std::uint64_t>(v);
        };
        CHECK(std::string(e.what()) ==
              realtime_permission_error(SchedPolicy::fifo, 42,
                                        {value(limit.rlim_cur), value(limit.rlim_max)}));
    }
}

TEST_CASE("without RLIMIT_RTPRIO or privileges a SCHED_FIFO thread is refused clearly") {
    const std::string result = run_in_child([] {
        if (std::string failed = drop_privileges(0); !failed.empty())
            return failed;
        try {
            PinnedThread thread({"rtprov-test-rt", SchedPolicy::fifo, 99, std::nullopt}, [] {});
            return std::string("the thread started");
        } catch (const rtprov::Error& e) {
            return std::string(e.what());
        }
    });
    CHECK(result == k_fifo_99_error);
}

TEST_CASE("a thread that cannot be pinned names the thread, policy and CPU") {
    try {
        PinnedThread thread({"rtprov-test", SchedPolicy::other, 0, 4095u}, [] {});
        FAIL("a thread pinned to CPU 4095 started");
    } catch (const rtprov::Error& e) {
        CHECK(std::string(e.what()) ==
              "cannot start thread 'rtprov-test' (SCHED_OTHER on CPU 4095): invalid argument");
    }
}

TEST_CASE("waiting with progress reports every full second and the end") {
    std::vector<std::pair<double, double>> calls;
    const std::int64_t start = monotonic_ns() - 2'000'000'000; // started two seconds ago
    wait_with_progress(start, 2'250'000'000,
                       [&](double elapsed, double total) { calls.emplace_back(elapsed, total); });
    REQUIRE(calls.size() == 3);
    CHECK(calls[0] == std::pair{1.0, 2.25});
    CHECK(calls[1] == std::pair{2.0, 2.25});
    CHECK(calls[2] == std::pair{2.25, 2.25});
    CHECK(monotonic_ns() >= start + 2'250'000'000);
}

TEST_CASE("AwayFrom keeps the calling thread off the given CPUs while it lives") {
    auto affinity = [] {
        cpu_set_t set;
        CPU_ZERO(&set);
        pthread_getaffinity_np(pthread_self(), sizeof set, &set);
        std::vector<unsigned> cpus;
        for (unsigned cpu = 0; cpu < CPU_SETSIZE; ++cpu)
            if (CPU_ISSET(cpu, &set))
                cpus.push_back(cpu);
        return cpus;
    };
    const std::vector<unsigned> before = affinity();
    REQUIRE_FALSE(before.empty());
    {
        // every CPU it may use: none would be left, so nothing changes
        const AwayFrom all{rtprov::core::CpuList(before)};
        CHECK(affinity() == before);
    }
    if (before.size() < 2) {
        WARN("one CPU only: moving off it is not possible here");
        return;
    }
    {
        const AwayFrom away{rtprov::core::CpuList({before.front()})};
        CHECK(affinity() == std::vector<unsigned>(before.begin() + 1, before.end()));
    }
    CHECK(affinity() == before);
}
