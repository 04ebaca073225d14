// SPDX-License-Identifier: Apache-2.0
#include "provisioner/selftest/pi_probe.hpp"

#include "provisioner/core/error.hpp"

#include "tests/unit/catch.hpp"
#include "tests/unit/child_process.hpp"
#include "tests/unit/temp_dir.hpp"

#include <sys/resource.h>

#include <optional>
#include <stdexcept>

using namespace rtprov::selftest;
using rtprov::core::SchedPolicy;
using std::chrono::microseconds;
using std::chrono::milliseconds;

namespace {

// The start of Debian 13's 6.12.117 features file, as booted (NO_RT_PUSH_IPI).
const std::string k_debian_features =
    "GENTLE_FAIR_SLEEPERS START_DEBIT NO_NEXT_BUDDY LAST_BUDDY CACHE_HOT_BUDDY "
    "WAKEUP_PREEMPTION NO_HRTICK TTWU_QUEUE SIS_UTIL NO_RT_PUSH_IPI NO_RT_RUNTIME_SHARE\n";
const std::string k_generic = "#1 SMP PREEMPT_DYNAMIC Debian 6.12.117-1 (2025-11-10)";
const std::string k_rt = "#1 SMP PREEMPT_RT Debian 6.12.117-1 (2025-11-10)";

PiProbeOptions short_probe() {
    PiProbeOptions options;
    options.workers = 3;
    options.critical_section = microseconds(200);
    options.duration = milliseconds(300);
    options.window = milliseconds(50);
    return options;
}

std::string error_of(const PiProbeOptions& options) {
    try {
        run_pi_probe(options);
    } catch (const rtprov::Error& e) {
        return e.what();
    }
    return "no error";
}

// Runs the probe; where SCHED_RR is not permitted, checks that the error says so and what
// to do, and returns nothing.
std::optional<PiProbeResult> run_or_explain(const PiProbeOptions& options) {
    try {
        return run_pi_probe(options);
    } catch (const rtprov::Error& e) {
        rlimit limit{};
        getrlimit(RLIMIT_RTPRIO, &limit);
        auto value = [](rlim_t v) {
            return v == RLIM_INFINITY ? std::nullopt : std::optional<std::uint64_t>(v);
        };
        CHECK(std::string(e.what()) ==
              realtime_permission_error(SchedPolicy::rr, options.rt_priority,
                                        {value(limit.rlim_cur), value(limit.rlim_max)}));
        WARN("SCHED_RR is not permitted here; checked the error message instead");
        return std::nullopt;
    }
}

void check_sane(const PiProbeResult& r, const PiProbeOptions& options) {
    CHECK(r.workers == options.workers);
    CHECK(r.critical_section_us == 200.0);
    CHECK(r.acquisitions > 0);
    CHECK(r.worker_acquisitions > 0);
    CHECK(r.avg_wait_us >= 0);
    CHECK(r.avg_wait_us <= r.worst_wait_us);
    CHECK(r.worst_wait_at_s >= 0);
    CHECK(r.windows > 0);
    for (const StarvedThread& t : r.starved) {
        INFO("starved thread " << t.tid << " " << t.name);
        CHECK(t.name.rfind("rtprov-pi-", 0) == 0);
        CHECK(static_cast<double>(t.wait_ns) >= 0.9 * static_cast<double>(t.window.count()));
    }
}

} // namespace

TEST_CASE("the kernel context reads PREEMPT_RT from uname -v and RT_PUSH_IPI from features") {
    auto generic = kernel_context(k_generic, k_debian_features);
    CHECK(generic.version == k_generic);
    CHECK_FALSE(generic.preempt_rt);
    CHECK(generic.push_ipi == PushIpiState::off);

    // On a PREEMPT_RT kernel the feature is still reported as it is.
    auto rt = kernel_context(k_rt, "TTWU_QUEUE RT_PUSH_IPI\n");
    CHECK(rt.preempt_rt);
    CHECK(rt.push_ipi == PushIpiState::on);
    CHECK(kernel_context(k_rt, k_debian_features).push_ipi == PushIpiState::off);

    CHECK(kernel_context(k_generic, "TTWU_QUEUE\n").push_ipi == PushIpiState::unknown);
    CHECK(kernel_context(k_generic, std::nullopt).push_ipi == PushIpiState::unreadable);
    CHECK(kernel_context("#1 SMP PREEMPT_RTX", std::nullopt).preempt_rt == false);
}

TEST_CASE("RT_PUSH_IPI states are named for the reports") {
    CHECK(to_string(PushIpiState::on) == "on");
    CHECK(to_string(PushIpiState::off) == "off");
    CHECK(to_string(PushIpiState::unknown) == "unknown");
    CHECK(to_string(PushIpiState::unreadable) == "unreadable");
}

TEST_CASE("the running kernel's context comes from uname and the features file") {
    TempDir dir;
    const std::string features = dir.write("features", k_debian_features);
    auto context = read_kernel_context(features);
    CHECK_FALSE(context.version.empty());
    CHECK(context.push_ipi == PushIpiState::off);
    CHECK(read_kernel_context(dir.path() + "/missing").push_ipi == PushIpiState::unreadable);
}

TEST_CASE("invalid probe options are refused before anything runs") {
    PiProbeOptions options = short_probe();
    options.workers = 0;
    CHECK(error_of(options) == "the PI-boost probe needs at least 1 worker thread");
    options = short_probe();
    options.critical_section = microseconds(0);
    CHECK(error_of(options) == "the PI-boost probe's critical section must last at least 1 µs");
    options = short_probe();
    options.window = milliseconds(0);
    CHECK(error_of(options) == "the PI-boost probe's duration and window must be at least 1 ms");
    options = short_probe();
    options.rt_priority = 99;
    CHECK(error_of(options) == "SCHED_RR priority '99' is out of range for the PI-boost probe; "
                               "use 1 to 98 (its watcher runs one above)");
}

TEST_CASE("a short real probe takes the mutex and watches its threads") {
    const PiProbeOptions options = short_probe();
    if (auto result = run_or_explain(options)) {
        check_sane(*result, options);
        CHECK(result->unreadable_samples == 0);
        // /proc/<pid>/task/<tid>/schedstat counts on a kernel with sched_info, as here.
        if (TempDir::read_host_file("/proc/thread-self/schedstat") != "0 0 0\n")
            CHECK(result->schedstat_seen);
    }
}

TEST_CASE("a probe whose proc root has no threads sees nothing and says so") {
    TempDir empty;
    PiProbeOptions options = short_probe();
    options.proc_root = empty.path();
    if (auto result = run_or_explain(options)) {
        check_sane(*result, options);
        CHECK_FALSE(result->schedstat_seen);
        CHECK(result->unreadable_samples == result->windows * (options.workers + 1));
        CHECK(result->starved.empty());
    }
}

TEST_CASE("an exception from the probe's progress callback stops it and comes through") {
    PiProbeOptions options = short_probe();
    options.duration = milliseconds(5000);
    int calls = 0;
    try {
        run_pi_probe(options, [&](double, double) {
            ++calls;
            throw std::runtime_error("interrupted");
        });
        FAIL("the probe ended normally");
    } catch (const rtprov::Error& e) {
        WARN("SCHED_RR is not permitted here: " << e.what());
        CHECK(calls == 0);
    } catch (const std::runtime_error& e) {
        CHECK(std::string(e.what()) == "interrupted");
        CHECK(calls == 1);
    }
}

TEST_CASE("without permission for SCHED_RR the probe fails and says what to do") {
    const std::string result = run_in_child([] {
        if (std::string failed = drop_privileges(0); !failed.empty())
            return failed;
        return error_of(short_probe());
    });
    CHECK(result ==
          "cannot run a thread at SCHED_RR priority 20: operation not permitted (RLIMIT_RTPRIO "
          "is 0, hard limit 0); run rtprov as root, or allow real-time priority 20 (ulimit -r "
          "20, LimitRTPRIO=20 in a service, or 'rtprio 20' in /etc/security/limits.d/)");
}
