// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/core/plan.hpp"
#include "provisioner/pipeline/flow_io.hpp"

#include <optional>
#include <string>
#include <vector>

// The health gate ('rtprov health', docs/update-gate.md): the verdict on the running
// system that update frameworks read before they keep an update (RAUC, Mender, SWUpdate,
// systemd's boot counting, greenboot), and the one a trial's check commits or falls back
// on. The self-test and the audit run as children (machine.rtprov) within a time bound;
// one rule makes their exit codes a verdict; the verdict is kept beside their reports.
namespace rtprov::pipeline {

enum class HealthVerdict { healthy, not_healthy, could_not_judge };

// "healthy", "not-healthy", "could-not-judge": the word of verdict.json, --json and the
// Prometheus label.
const char* health_word(HealthVerdict verdict);

// The exit code of 'rtprov health' for 'verdict': 0 healthy, 3 not healthy, 1 could not
// judge. Every code but 0 means "do not keep the update".
int health_exit_code(HealthVerdict verdict);

// The verdict rule, the one the gate and a trial's check judge by. 'selftest' and 'audit'
// are the children's exit codes (nullopt: not run, or stopped at the deadline):
//  - healthy: both exited 0;
//  - not healthy: one exited 3 (ran to the end and did not pass), the other 0 or 3;
//  - could not judge: anything else: an error (exit 1, or any other code), a signal
//    (128+N), a child that did not run or was stopped at the deadline.
// A verdict that cannot be kept (judge_health) is could not judge, whatever this says.
HealthVerdict health_verdict(std::optional<int> selftest, std::optional<int> audit);

// One child of the gate as it ended.
struct HealthChild {
    std::optional<int> exit_code; // nullopt: stopped at the deadline, or not run
    // The trial record's words: passed, did not pass, error, timed out, not run.
    std::string outcome = "not run";
};

// --boot: what the gate made of a boot that is not healthy.
struct HealthBoot {
    // The boot loader counts tries of this boot's entry: systemd-boot set the EFI variable
    // LoaderBootCountPath (systemd's Automatic Boot Assessment).
    bool counted = false;
    std::string entry; // that entry, as the variable names it; "" when not counted
    bool reboot = false;
    std::string why; // what was done and why, for people
};

// What the gate came to: verdict.json, --json, the text and the textfile show it.
struct Health {
    HealthVerdict verdict = HealthVerdict::could_not_judge;
    std::optional<std::string> boot_id; // /proc/sys/kernel/random/boot_id; nullopt: unreadable
    std::string time;                   // when it was judged (machine.utc_now)
    std::optional<std::string> profile; // the applied profile's name; nullopt: none applied
    std::string profile_sha256;         // of /etc/rtprov/profile.yaml's bytes
    std::string judged;                 // what was judged, for people
    std::vector<std::string> reasons;   // why it is not healthy; empty when it is
    double seconds = 0;                 // taken, on the steady clock
    unsigned timeout_s = 0;             // the bound it ran within
    HealthChild selftest, audit;
    std::string reports_dir;        // as on the system: core::k_health_dir, or the trial's
    std::optional<HealthBoot> boot; // only with HealthRequest::on_failure reboot_if_counted
};

// What the gate does about a boot that is not healthy (--boot).
enum class OnFailure {
    exit,              // nothing: the exit code says it
    reboot_if_counted, // reboot where the boot loader counts tries of this boot's entry
};

struct HealthRequest {
    std::string reports_dir = core::k_health_dir; // under machine.root
    // --timeout; nullopt: core::health_timeout_s of the applied profile's self-test limits
    // (the defaults without one).
    std::optional<unsigned> timeout_s;
    // A bound of the caller's own (a trial's deadline): the shorter of the two holds.
    std::optional<unsigned> at_most_s;
    OnFailure on_failure = OnFailure::exit;
};

// The gate's judgement, which a trial's check makes too. Runs on 'machine' (its sysroot
// read, its root written):
//  1. the previous run's reports in request.reports_dir are removed first, so that a run
//     killed midway leaves no verdict but its absence;
//  2. the self-test as a child, 'selftest --duration D --json DIR/selftest.json' (D the
//     profile's selftest.duration_s, at most core::k_health_selftest_max_s; --audio
//     --stop-player when the profile asks, selftest_command), its text in
//     DIR/selftest.txt; then the audit, 'audit --json' into DIR/audit.json; with
//     --sysroot and --history under a sysroot that is not '/';
//  3. both within the time bound (the deadline on the steady clock, handed to the
//     runner, which stops a child still running then; a child not started by then is
//     not run);
//  4. health_verdict() of their exit codes, the reasons from their reports (the
//     self-test's failing lines, the audit's failing checks);
//  5. with OnFailure::reboot_if_counted and a verdict that is not healthy: whether a
//     reboot is to be asked for (see run_health); decided, not done;
//  6. DIR/verdict.json (health_json) written atomically, last: when it cannot be, or
//     the reports folder cannot be made, the verdict is could not judge, saying why.
// A child that fails, or cannot be started, is a verdict, not an exception.
Health judge_health(Machine& machine, const HealthRequest& request);

// 'rtprov health': judge_health, and a journal entry for the verdict
// (FlowEvent::health_*). With OnFailure::reboot_if_counted, its 'boot' says whether a
// reboot is to be asked for (reboot_if_decided asks it, once the caller has told the
// verdict): when the verdict is not healthy and the boot loader counts tries of this
// boot's entry, so that it tries the entry again, or falls back to another once its tries
// are spent. An entry whose tries are spent gets one such reboot: when the loader boots it
// again (no entry to fall back to), none, so that the box does not reboot in a loop; nor
// does a boot that is not counted (a blessed system that fails its gate only exits
// non-zero, which keeps boot-complete.target from being reached); nor a machine that is
// not 'running'.
Health run_health(Machine& machine, const HealthRequest& request);

// The reboot run_health decided on, if it did: told (FlowEvent::health_reboot) and asked
// of machine.manager.
void reboot_if_decided(Machine& machine, const Health& health);

// The verdict as the JSON object verdict.json keeps and 'health --json' prints
// (docs/json.md, rtprov.health).
std::string health_json(const Health& health);

} // namespace rtprov::pipeline
