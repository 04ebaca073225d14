// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/core/cpu_list.hpp"
#include "provisioner/core/profile.hpp"
#include "provisioner/selftest/latency_run.hpp"
#include "provisioner/selftest/report.hpp"
#include "provisioner/system/cpus.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

// What a self-test run measures, for how long and against which limits: from what
// 'rtprov selftest' was asked, the applied profile and this machine's CPUs. Pure; the
// measuring is selftest/'s, the reports cli/'s.
namespace rtprov::pipeline {

// What 'rtprov selftest' was asked; nullopt: the option was not given.
struct SelftestRequest {
    std::string cpus;                    // --cpus LIST; "" not given
    std::optional<unsigned> duration_s;  // --duration (else the profile's, else 10)
    std::optional<unsigned> interval_us; // --interval (else the profile's, else 100)
    int priority = 99;
    std::string idle = "default"; // default | held | both
    bool load = false;
    unsigned stop_above_us = 0;        // 0: not given
    std::optional<unsigned> summary_s; // --summary
};

struct SelftestRun {
    // The applied profile's core roles on the CPUs present; nullopt without a profile.
    std::optional<core::ResolvedCores> roles;
    selftest::Thresholds thresholds; // the profile's, or the defaults
    unsigned duration_s = 10;        // per idle policy
    unsigned interval_us = 100;
    // cpus, duration, interval, priority, stop_above_us and load_cpus set; the idle policy,
    // summary and interrupt are each run's.
    selftest::LatencyOptions options;
    // The kernel stack of a wake-up over the smallest limit of a measured core (--trace).
    std::uint32_t stack_above_us = 0;
    std::vector<selftest::IdlePolicy> policies; // default, held, or both in that order
    unsigned total_s = 0;                       // every policy's duration
    unsigned summary_s = 0;                     // a soak run's summaries; 0: none

    // What 'cpu' is in the applied profile (unassigned without one).
    selftest::CoreRole role_of(unsigned cpu) const;
    // The run's parameters for its report (method "rtprov"; --trace sets its own).
    selftest::RunParameters parameters() const;
};

// Plans the run: the CPUs (--cpus, else every reserved core and the first housekeeping one
// of 'profile', else every online CPU), the profile's limits, duration and interval unless
// given, and the load (on the housekeeping cores, or without a profile the CPUs not
// measured). Throws rtprov::Error when the online CPUs (or, with a profile, the present
// ones) are not known; UsageError for a --cpus that is no CPU list, and for --load with no
// CPU left to load.
SelftestRun plan_selftest_run(const SelftestRequest& request,
                              const std::optional<core::Profile>& profile,
                              const system::Cpus& cpus);

// Then the idle policies of 'run' and its summaries (every 60 s for runs longer than 10
// minutes unless --summary says; a separate step, as 'rtprov selftest' looks for the
// tracer in between). Throws rtprov::Error for a --summary that would never come.
void schedule_selftest_run(SelftestRun& run, const SelftestRequest& request);

} // namespace rtprov::pipeline
