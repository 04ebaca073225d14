// SPDX-License-Identifier: Apache-2.0
#include "provisioner/selftest/latency_run.hpp"

#include "provisioner/core/error.hpp"

#include "tests/unit/catch.hpp"

#include "tests/unit/child_process.hpp"
#include "tests/unit/sanitizer.hpp"
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>

#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <optional>
#include <stdexcept>
#include <utility>
#include <vector>

using namespace rtprov::selftest;
using rtprov::core::CpuList;
using rtprov::core::SchedPolicy;
using std::chrono::microseconds;
using std::chrono::milliseconds;

namespace {

// CPUs 0 and 1, as far as this process may use them.
CpuList test_cpus() {
    cpu_set_t set;
    CPU_ZERO(&set);
    sched_getaffinity(0, sizeof set, &set);
    std::vector<unsigned> cpus;
    for (unsigned cpu : {0u, 1u})
        if (CPU_ISSET(cpu, &set))
            cpus.push_back(cpu);
    return CpuList(cpus);
}

LatencyOptions short_run(IdlePolicy idle) {
    LatencyOptions options;
    options.cpus = test_cpus();
    options.idle = idle;
    options.interval = microseconds(1000);
    options.duration = milliseconds(300);
    return options;
}

std::string error_of(const LatencyOptions& options) {
    try {
        run_latency(options);
    } catch (const rtprov::Error& e) {
        return e.what();
    }
    return "no error";
}

// Runs the measurement; where SCHED_FIFO is not permitted, checks that the error says so
// and what to do, and returns nothing.
std::optional<std::vector<CoreLatency>> run_or_explain(const LatencyOptions& options,
                                                       const ProgressCallback& progress = {}) {
    try {
        return run_latency(options, progress);
    } catch (const rtprov::Error& e) {
        rlimit limit{};
        getrlimit(RLIMIT_RTPRIO, &limit);
        auto value = [](rlim_t v) {
            return v == RLIM_INFINITY ? std::nullopt : std::optional<std::uint64_t>(v);
        };
        CHECK(std::string(e.what()) ==
              realtime_permission_error(SchedPolicy::fifo, options.priority,
                                        {value(limit.rlim_cur), value(limit.rlim_max)}));
        WARN("SCHED_FIFO is not permitted here; checked the error message instead");
        return std::nullopt;
    }
}

// Sanity only: figures that must hold whatever the machine's latency.
void check_sane(const CoreLatency& core, unsigned cpu, const LatencyOptions& options) {
    INFO("CPU " << cpu << ", idle policy " << to_string(options.idle));
    CHECK(core.cpu == cpu);
    CHECK(core.idle == options.idle);
    CHECK(core.cycles > 0);
    // A planned wake-up is either measured or skipped, and there are only so many.
    CHECK(core.cycles + core.overruns <=
          static_cast<std::uint64_t>(options.duration / options.interval) + 1);
    CHECK(core.histogram.count() == core.cycles);
    CHECK(core.histogram.limit_us() == options.histogram_limit_us);
    CHECK(core.min_us >= 0);
    CHECK(core.min_us <= core.avg_us);
    CHECK(core.avg_us <= core.max_us);
    CHECK(core.p50_us <= core.p99_us);
    CHECK(core.p99_us <= core.p999_us);
    CHECK(core.p999_us <= core.p9999_us);
    CHECK(core.p9999_us <= core.max_us);
    CHECK(core.max_us == static_cast<double>(core.histogram.max_ns()) / 1000.0);
    CHECK(core.max_at_s >= 0);
    // The timeline: a slot per second and one past the end; it holds every miss, and its
    // largest second is the maximum rounded up to the µs, in the second it came.
    const auto seconds =
        std::size_t(std::ceil(std::chrono::duration<double>(options.duration).count()));
    REQUIRE(core.max_per_s_us.size() == seconds + 1);
    REQUIRE(core.missed_per_s.size() == seconds + 1);
    std::uint64_t missed = 0;
    for (std::uint32_t n : core.missed_per_s)
        missed += n;
    CHECK(missed == core.overruns);
    auto most = std::max_element(core.max_per_s_us.begin(), core.max_per_s_us.end());
    CHECK(*most == std::uint32_t(std::ceil(core.max_us)));
    CHECK(std::size_t(most - core.max_per_s_us.begin()) <= std::size_t(core.max_at_s) + 1);
}

} // namespace

TEST_CASE("idle policies are named for the reports") {
    CHECK(to_string(IdlePolicy::system_default) == "default");
    CHECK(to_string(IdlePolicy::held) == "held");
}

TEST_CASE("CPUs offline or outside the process's affinity are refused with what to do") {
    const CpuList online = CpuList::range(0, 3);
    const CpuList allowed({0, 1});
    CHECK_NOTHROW(check_cpus(CpuList({0, 1}), online, allowed, "measure on"));
    CHECK_NOTHROW(check_cpus(CpuList(), online, allowed, "put load on"));
    try {
        check_cpus(CpuList({1, 5}), online, allowed, "measure on");
        FAIL("CPU 5 was accepted");
    } catch (const rtprov::Error& e) {
        CHECK(std::string(e.what()) == "cannot measure on CPU 5: it is not online (online CPUs: "
                                       "'0-3'); choose CPUs from '0-1'");
    }
    try {
        check_cpus(CpuList({2}), online, allowed, "put load on");
        FAIL("CPU 2 was accepted");
    } catch (const rtprov::Error& e) {
        CHECK(std::string(e.what()) ==
              "cannot put load on CPU 2: the cpuset of this process's cgroup allows only "
              "'0-1'; with reserve_method cpuset the reserved cores belong to rtprov.slice: "
              "measure them from there ('systemd-run --slice=rtprov.slice --pty rtprov "
              "selftest --cpus LIST'), or choose CPUs from '0-1'");
    }
}

TEST_CASE("a narrowed affinity does not stop measuring on a CPU left out of it") {
    // isolcpus= leaves the isolated CPUs out of every task's default affinity (seen in a
    // booted Debian 13 guest: rtprov run by a service had affinity 0-1 with 2-3
    // isolated); pinning a thread there is still allowed and is what the test is for.
    const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    if (cpus < 2) {
        WARN("needs two CPUs");
        return;
    }
    cpu_set_t old_set, only_first;
    REQUIRE(sched_getaffinity(0, sizeof old_set, &old_set) == 0);
    CPU_ZERO(&only_first);
    CPU_SET(0, &only_first);
    REQUIRE(sched_setaffinity(0, sizeof only_first, &only_first) == 0);
    LatencyOptions options = short_run(IdlePolicy::system_default);
    options.cpus = CpuList({1});
    std::vector<CoreLatency> results;
    std::string error;
    try {
        results = run_latency(options);
    } catch (const rtprov::Error& e) {
        error = e.what();
    }
    cpu_set_t after;
    REQUIRE(sched_getaffinity(0, sizeof after, &after) == 0);
    sched_setaffinity(0, sizeof old_set, &old_set);
    CHECK(error == "");
    REQUIRE(results.size() == 1);
    CHECK(results[0].cpu == 1);
    CHECK(results[0].cycles > 0);
    CHECK(CPU_EQUAL(&after, &only_first)); // the caller's affinity is left as it was
}

TEST_CASE("invalid latency options are refused before anything runs") {
    LatencyOptions options = short_run(IdlePolicy::system_default);
    options.cpus = CpuList();
    CHECK(error_of(options) == "no CPU to measure latency on; choose at least one");

    options = short_run(IdlePolicy::system_default);
    options.interval = microseconds(0);
    CHECK(error_of(options) == "the latency interval must be at least 1 µs, not '0 µs'");

    options = short_run(IdlePolicy::system_default);
    options.duration = milliseconds(0);
    CHECK(error_of(options) == "the latency measurement must last at least 1 ms, not '0 ms'");

    options = short_run(IdlePolicy::system_default);
    options.priority = 100;
    CHECK(error_of(options) == "SCHED_FIFO priority '100' is out of range; use 1 to 99");

    options = short_run(IdlePolicy::system_default);
    options.cpus = CpuList({4095});
    CHECK(error_of(options).rfind("cannot measure on CPU 4095: it is not online", 0) == 0);
}

TEST_CASE("a short real run measures every CPU under each idle policy") {
    std::vector<IdlePolicy> policies = {IdlePolicy::system_default};
    if (access("/dev/cpu_dma_latency", W_OK) == 0)
        policies.push_back(IdlePolicy::held);
    else
        WARN("/dev/cpu_dma_latency is not writable here: the 'held' policy is not run");
    for (IdlePolicy idle : policies) {
        const LatencyOptions options = short_run(idle);
        auto cores = run_or_explain(options);
        if (!cores)
            continue;
        REQUIRE(cores->size() == options.cpus.size());
        for (std::size_t i = 0; i < cores->size(); ++i)
            check_sane((*cores)[i], options.cpus.cpus()[i], options);
    }
}

TEST_CASE("a real run with load measures as it does without") {
    LatencyOptions options = short_run(IdlePolicy::system_default);
    options.cpus = CpuList({test_cpus().cpus().front()});
    options.load_cpus = test_cpus();
    options.histogram_limit_us = 2000;
    if (auto cores = run_or_explain(options)) {
        REQUIRE(cores->size() == 1);
        check_sane(cores->front(), options.cpus.cpus().front(), options);
    }
}

TEST_CASE("progress is reported about once a second and at the end") {
    LatencyOptions options = short_run(IdlePolicy::system_default);
    options.cpus = CpuList({test_cpus().cpus().front()});
    options.duration = milliseconds(1200);
    std::vector<std::pair<double, double>> calls;
    auto cores = run_or_explain(
        options, [&](double elapsed, double total) { calls.emplace_back(elapsed, total); });
    if (!cores)
        return;
    REQUIRE(calls.size() == 2);
    CHECK(calls[0] == std::pair{1.0, 1.2});
    CHECK(calls[1] == std::pair{1.2, 1.2});
    check_sane(cores->front(), options.cpus.cpus().front(), options);
}

TEST_CASE("an exception from the progress callback stops the run and comes through") {
    LatencyOptions options = short_run(IdlePolicy::system_default);
    options.duration = milliseconds(5000);
    int calls = 0;
    try {
        run_latency(options, [&](double, double) {
            ++calls;
            throw std::runtime_error("interrupted");
        });
        FAIL("the run ended normally");
    } catch (const rtprov::Error& e) {
        WARN("SCHED_FIFO is not permitted here: " << e.what());
        CHECK(calls == 0);
    } catch (const std::runtime_error& e) {
        CHECK(std::string(e.what()) == "interrupted");
        CHECK(calls == 1);
    }
}

TEST_CASE("a soak run's summary comes every summary_every seconds with each core so far") {
    LatencyOptions options = short_run(IdlePolicy::system_default);
    options.duration = milliseconds(3500);
    options.summary_every = std::chrono::seconds(1);
    std::vector<double> at;
    std::vector<std::uint64_t> cycles;
    options.on_summary = [&](const std::vector<CoreLatency>& so_far, double elapsed_s) {
        at.push_back(elapsed_s);
        REQUIRE(so_far.size() == options.cpus.size());
        const CoreLatency& c = so_far.front();
        CHECK(c.histogram.count() == c.cycles);
        // The snapshot is taken just after the whole second the summary is labelled with, so
        // the last wake-up taken may lie a little past it, never a second before or after.
        CHECK(c.measured_s < elapsed_s + 1);
        CHECK(c.measured_s > elapsed_s - 1);
        cycles.push_back(c.cycles);
    };
    auto cores = run_or_explain(options);
    if (!cores)
        return;
    CHECK(at == std::vector<double>{1, 2, 3}); // not at the end: the result is the last word
    CHECK(std::is_sorted(cycles.begin(), cycles.end()));
    CHECK(cycles.back() < cores->front().cycles);
    CHECK(cores->front().measured_s > 3.4);
    for (const CoreLatency& c : *cores)
        check_sane(c, c.cpu, options);
}

TEST_CASE("an interrupt ends the run within a second with what was measured until then") {
    LatencyOptions options = short_run(IdlePolicy::system_default);
    options.duration = milliseconds(20'000);
    std::atomic<bool> interrupt{false};
    options.interrupt = &interrupt;
    const auto started = std::chrono::steady_clock::now();
    auto cores = run_or_explain(options, [&](double elapsed, double) {
        if (elapsed >= 1)
            interrupt = true;
    });
    if (!cores)
        return;
    CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(5));
    for (const CoreLatency& c : *cores) {
        CHECK(c.cycles > 0);
        CHECK(c.measured_s >= 0.9);
        CHECK(c.measured_s < 2.5);
        CHECK(c.histogram.count() == c.cycles);
        CHECK_FALSE(c.stopped_run);
    }
}

TEST_CASE("the 'held' idle policy without /dev/cpu_dma_latency says what to do") {
    LatencyOptions options = short_run(IdlePolicy::held);
    options.cpu_dma_latency = "/nonexistent/cpu_dma_latency";
    CHECK(error_of(options) ==
          "cannot open '/nonexistent/cpu_dma_latency': No such file or directory; the idle "
          "policy 'held' needs it: run rtprov as root, or measure with the idle policy "
          "'default'");
}

TEST_CASE("without permission for SCHED_FIFO the run fails and says what to do") {
    const std::string result = run_in_child([] {
        if (std::string failed = drop_privileges(0); !failed.empty())
            return failed;
        LatencyOptions options = short_run(IdlePolicy::system_default);
        return error_of(options);
    });
    CHECK(result ==
          "cannot run a thread at SCHED_FIFO priority 99: operation not permitted "
          "(RLIMIT_RTPRIO is 0, hard limit 0); run rtprov as root, or allow real-time priority "
          "99 (ulimit -r 99, LimitRTPRIO=99 in a service, or 'rtprio 99' in "
          "/etc/security/limits.d/)");
}

TEST_CASE("without permission to lock memory the run fails and says what to do") {
    if (RTPROV_SANITIZED) {
        WARN("a sanitizer's mlockall cannot fail; not checked");
        return;
    }
    const std::string mlock_error =
        "cannot lock the self-test's memory in RAM (mlockall): operation not permitted "
        "(RLIMIT_MEMLOCK is 0 bytes); run rtprov as root, or raise the limit (ulimit -l "
        "unlimited, LimitMEMLOCK=infinity in a service)";
    const std::string result = run_in_child([] {
        // RLIMIT_MEMLOCK 0 and no CAP_IPC_LOCK: mlockall is refused (mm/mlock.c can_do_mlock).
        const rlimit none{0, 0};
        if (setrlimit(RLIMIT_MEMLOCK, &none) != 0)
            return std::string("setrlimit(RLIMIT_MEMLOCK) failed");
        if (std::string failed = drop_capability(CAP_IPC_LOCK); !failed.empty())
            return failed;
        return error_of(short_run(IdlePolicy::system_default));
    });
    if (result.rfind("cannot run a thread at SCHED_FIFO", 0) == 0)
        WARN("SCHED_FIFO is not permitted here, so mlockall is not reached: " << result);
    else
        CHECK(result == mlock_error);
}
