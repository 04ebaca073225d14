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

const core::AppKnowledge* player_app(const std::optional<core::Profile>& profile,
                                     const std::vector<core::AppKnowledge>& apps) {
    if (!profile)
        return nullptr;
    for (const core::ServiceTuning& service : profile->tuning.services)
        if (const core::AppKnowledge* app = core::find_app(apps, service.name, service.unit))
            if (app->alsa_period && app->alsa_buffer)
                return app;
    return nullptr;
}

namespace {

core::AudioSize audio_size(const std::string& option, const std::string& text) {
    core::Result<core::AudioSize> size = core::parse_audio_size(text);
    if (!size)
        throw UsageError(option, size.problem);
    return *size;
}

// 'size' times 'factor' (4) or divided by it, in its own unit; nullopt out of range.
std::optional<core::AudioSize> scaled(core::AudioSize size, bool up) {
    const std::uint32_t max =
        size.unit == core::AudioSize::Unit::ms ? core::k_max_audio_ms : core::k_max_audio_frames;
    if (up ? size.value > max / 4 : size.value < 4)
        return std::nullopt;
    size.value = up ? size.value * 4 : size.value / 4;
    return size;
}

} // namespace

std::optional<AudioPlan> plan_audio(const AudioRequest& request,
                                    const std::optional<core::Profile>& profile,
                                    const std::optional<core::ResolvedCores>& roles,
                                    const std::vector<core::AppKnowledge>& apps) {
    if (!request.device)
        return std::nullopt;
    AudioPlan plan;
    plan.wanted = *request.device;
    if (plan.wanted.empty() && profile)
        plan.wanted = profile->tuning.selftest.audio_device.value_or("");
    if (profile)
        plan.min_headroom_percent = profile->tuning.selftest.audio_min_headroom_percent;
    plan.stop_player = request.stop_player;
    selftest::AudioOptions& options = plan.options;
    options.tone = request.tone;

    const core::AppKnowledge* app = player_app(profile, apps);
    const std::string whose = app ? app->name + "'s" : "MPD's";
    const std::string why = app ? "" : " (no player in the profile)";
    // MPD's ALSA output defaults (AlsaOutputPlugin.cxx: buffer_time 500 ms, period_time
    // a quarter of it) and its output thread's SCHED_FIFO 40 (thread/Util.cxx)
    options.period = app ? *app->alsa_period : core::AudioSize{125, core::AudioSize::Unit::ms};
    options.buffer = app ? *app->alsa_buffer : core::AudioSize{500, core::AudioSize::Unit::ms};
    plan.sizes_from = whose + " defaults" + why;
    // The setting the profile gives the player (tuning.services.<name>.period, buffer):
    // what it runs with once written, so what the test plays.
    if (app && profile)
        for (const core::ServiceTuning& service : profile->tuning.services)
            if (core::find_app(apps, service.name, service.unit) == app && service.period &&
                service.buffer) {
                options.period = *service.period;
                options.buffer = *service.buffer;
                plan.sizes_from =
                    whose + " setting in the profile (tuning.services." + service.name + ")";
            }
    if (request.period || request.buffer) {
        plan.sizes_from = request.period && request.buffer ? "--period and --buffer"
                          : request.period                 ? "--period (the buffer four periods)"
                                                           : "--buffer (in four periods)";
        if (request.period)
            options.period = audio_size("--period", *request.period);
        if (request.buffer)
            options.buffer = audio_size("--buffer", *request.buffer);
        const char* alone = request.period ? "--period" : "--buffer";
        if (!request.period || !request.buffer) {
            std::optional<core::AudioSize> other = scaled(
                request.period ? options.period : options.buffer, request.period.has_value());
            if (!other)
                throw UsageError(
                    alone,
                    "'" + (request.period ? *request.period : *request.buffer) + "' leaves no " +
                        (request.period ? "buffer of four periods" : "period a quarter of it") +
                        "; give both --period and --buffer");
            (request.period ? options.buffer : options.period) = *other;
        }
    }
    if (options.period.unit == options.buffer.unit &&
        options.buffer.value < 2 * std::uint64_t(options.period.value))
        throw UsageError(request.buffer ? "--buffer" : "--period",
                         "a buffer of " + options.buffer.to_string() + " holds less than two " +
                             options.period.to_string() +
                             " periods: the player writes one while the card plays the other; "
                             "give a buffer of at least two periods");
    options.policy = app ? app->policy : core::SchedPolicy::fifo;
    options.priority = app ? std::max(app->priority, app->highest_priority) : 40;
    plan.thread_from = app ? app->name + "'s " + app->threads : "MPD's output thread" + why;
    if (roles && !roles->reserved.empty())
        options.cpus = roles->reserved;
    return plan;
}

} // namespace rtprov::pipeline
