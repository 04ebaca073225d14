// SPDX-License-Identifier: Apache-2.0
#include "provisioner/pipeline/selftest_run.hpp"

#include "provisioner/core/error.hpp"

#include <algorithm>
#include <limits>

namespace rtprov::pipeline {

selftest::CoreRole SelftestRun::role_of(unsigned cpu) const {
    if (!roles)
        return selftest::CoreRole::unassigned;
    if (roles->reserved.contains(cpu))
        return selftest::CoreRole::reserved;
    return roles->housekeeping.contains(cpu) ? selftest::CoreRole::housekeeping
                                             : selftest::CoreRole::unassigned;
}

selftest::RunParameters SelftestRun::parameters() const {
    selftest::RunParameters p;
    p.duration_ms = unsigned(duration_s * 1000);
    p.interval_us = interval_us;
    p.priority = options.priority;
    p.load_cpus = options.load_cpus.to_string();
    p.stop_above_us = options.stop_above_us;
    return p;
}

SelftestRun plan_selftest_run(const SelftestRequest& request,
                              const std::optional<core::Profile>& profile,
                              const system::Cpus& cpus) {
    if (!cpus.online || cpus.online->empty())
        throw Error(
            "cannot tell which CPUs are online: " +
            (cpus.online ? "'/sys/devices/system/cpu/online' is empty" : cpus.online.problem) +
            "; is sysfs mounted?");
    const core::CpuList& online = *cpus.online;
    std::optional<unsigned> present = system::layout_cpu_count(cpus);
    if (profile && !present)
        throw Error("cannot tell which CPUs are present, which the applied profile's cores are "
                    "resolved on: " +
                    cpus.present.problem + "; is sysfs mounted?");

    // The CPUs to measure: --cpus, else every reserved core and the first housekeeping one
    // of the applied profile, else every online CPU.
    SelftestRun run;
    if (profile)
        if (auto cores = core::resolve_cores(*profile, present.value_or(0)))
            run.roles = *cores;
    core::CpuList measured;
    if (!request.cpus.empty()) {
        auto list = core::parse_cpu_list(request.cpus);
        if (!list || list->empty())
            throw UsageError("--cpus", quoted(request.cpus) + " is not a CPU list" +
                                           (list.problem.empty() ? "" : ": " + list.problem) +
                                           "; give e.g. 2-3 or 0,2");
        measured = *list;
    } else if (run.roles) {
        measured = run.roles->reserved;
        if (auto first = run.roles->housekeeping.cpus(); !first.empty())
            measured = measured.union_with(core::CpuList({first.front()}));
    } else {
        measured = online;
    }

    run.duration_s = request.duration_s.value_or(10);
    run.interval_us = request.interval_us.value_or(100);
    if (profile) {
        const core::SelftestThresholds& t = profile->tuning.selftest;
        run.thresholds = {t.max_latency_reserved_us, t.max_latency_housekeeping_us,
                          t.max_missed_per_mille};
        if (!request.duration_s)
            run.duration_s = t.duration_s;
        if (!request.interval_us)
            run.interval_us = t.interval_us;
    }

    selftest::LatencyOptions& options = run.options;
    options.cpus = measured;
    options.duration = std::chrono::milliseconds(std::uint64_t(run.duration_s) * 1000);
    options.interval = std::chrono::microseconds(run.interval_us);
    options.priority = request.priority;
    options.stop_above_us = request.stop_above_us;
    if (request.load) {
        // Load where the housekeeping runs (the measuring threads outrank it there);
        // without a profile, on the CPUs not measured.
        options.load_cpus = run.roles ? run.roles->housekeeping : online.minus(measured);
        if (options.load_cpus.empty())
            throw UsageError("--load", "no CPU is left to load: every online CPU is "
                                       "measured; narrow --cpus");
    }
    run.stack_above_us = std::min(
        {run.thresholds.reserved_us, run.thresholds.housekeeping_us,
         request.stop_above_us ? request.stop_above_us : std::numeric_limits<unsigned>::max()});
    return run;
}

void schedule_selftest_run(SelftestRun& run, const SelftestRequest& request) {
    run.policies.clear();
    if (request.idle != "held")
        run.policies.push_back(selftest::IdlePolicy::system_default);
    if (request.idle != "default")
        run.policies.push_back(selftest::IdlePolicy::held);
    run.total_s = run.duration_s * unsigned(run.policies.size());
    run.summary_s = request.summary_s.value_or(run.total_s > 600 ? 60 : 0);
    if (request.summary_s && run.summary_s >= run.duration_s && run.summary_s > 0)
        throw Error("--summary " + std::to_string(run.summary_s) +
                    " would never come: each idle "
                    "policy is measured for " +
                    std::to_string(run.duration_s) +
                    " s; pass a shorter --summary or a longer --duration");
}

} // namespace rtprov::pipeline
