// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/core/app.hpp"
#include "provisioner/core/cpu_list.hpp"
#include "provisioner/core/profile.hpp"
#include "provisioner/selftest/audio_run.hpp"
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

// What 'rtprov selftest --audio' was asked.
struct AudioRequest {
    std::optional<std::string> device; // --audio[=DEVICE]: "" to choose; nullopt: not asked
    bool tone = false;
    std::optional<std::string> period; // --period, --buffer: '125ms', '1024frames'
    std::optional<std::string> buffer;
    bool stop_player = false;
};

// The underrun test of a run: how to play, as the profile's player would.
struct AudioPlan {
    // The device to play to: "" to choose the only playback card, 'loopback' for
    // snd-aloop, else an ALSA name; options.device is left for the caller to set once
    // it is chosen.
    std::string wanted;
    selftest::AudioOptions options; // period, buffer, policy, priority, CPUs, tone
    // Whose period, buffer and thread these are, for the report: "MPD's defaults
    // (service 'mpd')", "--period and --buffer".
    std::string sizes_from;
    std::string thread_from;
    unsigned min_headroom_percent = 25;
    bool stop_player = false;
};

// The player an audio box runs: the first service of 'profile' whose app rtprov knows the
// ALSA period and buffer of; nullptr without one.
const core::AppKnowledge* player_app(const std::optional<core::Profile>& profile,
                                     const std::vector<core::AppKnowledge>& apps);

// Plans the underrun test, or nullopt when 'request' does not ask for it: the period and
// buffer from --period and --buffer (one alone: the other a quarter or four times it, as
// MPD does), else the player's defaults, else MPD's (Debian's and the built-in profiles'
// player); the thread's policy and priority those of the player's thread that writes to
// ALSA (its highest), else MPD's SCHED_FIFO 40; its CPUs the reserved cores of 'roles',
// else not pinned. Throws UsageError for a size that does not parse or a buffer shorter
// than two periods (in the same unit; across units the device's rate decides, at open).
std::optional<AudioPlan> plan_audio(const AudioRequest& request,
                                    const std::optional<core::Profile>& profile,
                                    const std::optional<core::ResolvedCores>& roles,
                                    const std::vector<core::AppKnowledge>& apps);

} // namespace rtprov::pipeline
