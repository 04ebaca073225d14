// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/pipeline/buffer_choice.hpp"
#include "provisioner/pipeline/flow_io.hpp"
#include "provisioner/target/firstboot_state.hpp"

#include <chrono>
#include <string>

// The first boot of an appliance, as rtprov-firstboot.service runs it until it has
// finished once: choose the profile (/etc/rtprov/firstboot.yaml's, or the one whose
// board.match fits this machine best), apply it live, reboot once if the running kernel
// lacks what was planned, then self-test and audit, keep the reports and record the
// outcome. Each step is an rtprov command run as a child (machine.rtprov), one an admin
// runs by hand.
namespace rtprov::pipeline {

// What first boot came to: its exit code is 0 for all but not_passed (3) and failed (1).
enum class FirstbootOutcome {
    already_ran, // done or failed before: nothing done ('state' says when)
    rebooting,   // a reboot asked for; the next boot goes on from the state
    passed,      // done, and everything passed
    not_passed,  // done, with something that did not pass (the state says what)
    failed,      // failed, recorded in the state, and told where the unit's user reads it
};

struct Firstboot {
    FirstbootOutcome outcome = FirstbootOutcome::passed;
    target::FirstbootState state;
};

// Where first boot finds the built-in profiles and what rtprov knows about audio apps;
// 'started' is when it started (its 'applied in N ms').
struct FirstbootData {
    std::string builtin_profiles;
    std::string apps;
    std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
    // Reads the reports of the self-tests the buffers' choice runs (cli's reader); unset:
    // no choice is made (the state says so).
    ReadSelftestReport read_report;
};

// Runs first boot on 'machine' (its root '/', its sysroot the running system), from where
// the state under its root says it stopped. A failure is recorded in the state (phase
// failed, with the reason) and given to machine.log.failed(); when that says it was told
// where the user reads it, the outcome is 'failed', else the error is thrown on, for
// cli/ to print.
Firstboot run_firstboot(Machine& machine, const FirstbootData& data);

} // namespace rtprov::pipeline
