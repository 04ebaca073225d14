// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/core/plan.hpp"
#include "provisioner/fs/root.hpp"

#include <optional>
#include <string>

namespace rtprov::target {

// Where first boot keeps its progress and its reports (on the machine itself).
inline constexpr const char* k_firstboot_dir = "/var/lib/rtprov/firstboot";
inline constexpr const char* k_firstboot_state = "/var/lib/rtprov/firstboot/state";
inline constexpr const char* k_firstboot_config = core::k_firstboot_config_path;
// Present once first boot has finished (done or failed): rtprov-firstboot.service's
// ConditionPathExists=! stops it from running again.
inline constexpr const char* k_firstboot_done = "/var/lib/rtprov/firstboot/done";

// The progress of 'rtprov firstboot', one 'key=value' line each, so that a reboot in the
// middle resumes where it stopped and a second reboot for the same cause cannot happen.
struct FirstbootState {
    std::string phase;        // "" (not started), rebooting, done, failed
    std::string profile;      // the profile applied
    unsigned reboots = 0;     // reboots first boot asked for (never more than one)
    std::string reboot_cause; // why it rebooted
    std::string cmdline;      // after the reboot: "ok" or what is still missing
    std::string selftest;     // passed, did not pass, not run, error
    std::string audit;        // passed (warnings allowed), did not pass, error
    std::string trial;        // with a trial: what came of it (rtprov trial status)
    // tuning.audio.buffers 'write' with 'auto' players: what first boot chose and proved
    // ('MPD 25ms in 100ms: 0 underruns, margin 2.4'), or why nothing was written; the steps
    // are in buffers.txt beside the state
    std::string buffers;
    std::string reason;     // failed: what went wrong and what to do
    std::string updated_at; // UTC
    friend bool operator==(const FirstbootState&, const FirstbootState&) = default;
};

std::string format_firstboot_state(const FirstbootState& state);

// Parses the state file's text. Throws rtprov::Error naming 'label', the line and the fix
// for a line that is not 'key=value' with a known key.
FirstbootState parse_firstboot_state(const std::string& text, const std::string& label);

// The state under 'root', or nullopt when first boot never ran there.
std::optional<FirstbootState> read_firstboot_state(const fs::Root& root);

// Writes the state atomically and durably; in phase done or failed also the 'done'
// marker.
void write_firstboot_state(fs::Root& root, const FirstbootState& state);

// Whether first boot reboots now, given what the running kernel still lacks ('missing',
// "" when nothing) and whether the configuration allows a reboot. The guard: once a
// reboot was asked for (state.reboots > 0) there is never another, whatever the cause.
// Without a reboot, no boot of first boot's tries a trial its apply armed ('trial: true'):
// 'untried' says why, and first boot takes that trial back (a later reboot, days on, would
// otherwise boot it, judge it and maybe reboot again).
struct RebootDecision {
    bool reboot = false;
    std::string cmdline; // for the state: "ok", or what is missing and why no reboot helps
    std::string untried; // no reboot: why none tries the trial; "" when rebooting
};
RebootDecision decide_reboot(const FirstbootState& state, const std::string& missing,
                             bool reboot_allowed);

} // namespace rtprov::target
