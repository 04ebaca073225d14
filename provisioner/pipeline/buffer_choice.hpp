// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/core/app.hpp"
#include "provisioner/core/buffer_rule.hpp"
#include "provisioner/pipeline/applied_system.hpp"
#include "provisioner/pipeline/flow_io.hpp"
#include "provisioner/selftest/report.hpp"

#include <functional>
#include <optional>
#include <string>
#include <vector>

// First boot's choice of the players' buffers (docs/audio-buffers.md), for a profile with
// tuning.audio.buffers 'write' whose players' period and buffer are 'auto': measure the
// worst wake-up under load, choose each player's setting by the rule
// (core::choose_buffers), play it with the underrun test under load, step to the next
// longer setting on underruns up to the app's default, then write the one that passed
// ('rtprov apply --live --set tuning.services.NAME.period=... --set ...buffer=...') and
// restart the player. A setting that did not pass is never written.
namespace rtprov::pipeline {

// How long the measurement and each underrun test run when first boot's configuration
// runs no self-test of its own (selftest_s 0).
inline constexpr unsigned k_buffer_test_s = 20;

// One underrun test of one player's setting.
struct BufferStep {
    std::string app; // 'MPD'
    core::BufferSetting setting;
    // What its report's audio test says, whatever the latency's verdict: it played
    // without an underrun and with the headroom left, it did not, or it could not play.
    enum class Heard { passed, underran, error };
    Heard heard = Heard::error;
    std::string result; // 'passed', '3 underruns, at worst 0.00 ms left', 'error ...'
};

struct BufferChoiceOutcome {
    std::optional<double> worst_us; // the measured worst wake-up; nullopt: none
    std::vector<BufferStep> steps;  // in the order they ran
    std::vector<std::string> sets;  // the --set values written ("" none)
    std::string summary;            // one line for the first-boot state
    std::string details;            // buffers.txt: the measurement and each step, a line each
};

// Each installed player's buffers on the system under 'sysroot' against a measured worst
// wake-up 'worst_us' (the self-test's and the audit's advice): none when the profile's
// tuning.audio.buffers is 'keep'. A player whose configuration cannot be read says why;
// a configuration that cannot be read at all gives one entry saying so.
std::vector<selftest::PlayerAdvice> advise_players(const std::string& sysroot,
                                                   const std::optional<core::Profile>& profile,
                                                   const std::vector<core::AppKnowledge>& apps,
                                                   double worst_us);

// Reads a report a child 'rtprov selftest --json FILE' wrote (cli's reader).
using ReadSelftestReport = std::function<selftest::SelftestReport(const std::string& host_path)>;

// The players of 'applied' that first boot chooses for: a service of the profile whose
// app has a stack, is installed, and whose period and buffer are both 'auto' (in
// tuning.audio.buffers 'write').
std::vector<const core::ServiceTuning*> auto_players(const AppliedSystem& applied,
                                                     const std::vector<core::AppKnowledge>& apps);

// Runs the loop on 'machine' for 'applied' (profile 'profile_name', applied with the
// --set values 'sets'); the reports go to 'host_dir' (a host path). 'measure_s' is the
// length of the measurement and of each underrun test.
BufferChoiceOutcome choose_player_buffers(Machine& machine, const AppliedSystem& applied,
                                          const std::vector<core::AppKnowledge>& apps,
                                          const ReadSelftestReport& read_report,
                                          const std::string& profile_name,
                                          const std::vector<std::string>& sets,
                                          const std::string& host_dir, unsigned measure_s);

} // namespace rtprov::pipeline
