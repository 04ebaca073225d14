// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/boot/loader.hpp"
#include "provisioner/fs/root.hpp"
#include "provisioner/pipeline/flow_io.hpp"
#include "provisioner/target/trial_record.hpp"

#include <optional>
#include <string>

// The trial of a boot configuration that 'apply --trial' armed: what this boot is to it,
// and how it ends — judged and committed or fallen back on its boot
// (rtprov-trial.service's 'trial check'), committed or aborted by hand, or taken back by
// first boot when no reboot tries it.
namespace rtprov::pipeline {

// A trial as 'rtprov status' and 'rtprov trial status' show it: its record, and what the
// running boot is to it.
struct TrialView {
    std::optional<target::TrialRecord> record;
    target::TrialBoot boot = target::TrialBoot::none;
    // Raspberry Pi, on the running Pi: the firmware's own word on this boot
    // (/proc/device-tree/chosen/bootloader/tryboot, 1 on a tryboot), or why it is not known.
    std::optional<bool> tryboot;
    std::string tryboot_problem;
};

// The trial under 'root' and what this boot is to it: from 'sysroot's /proc when
// 'running', else (an image) an armed trial is its next boot. Throws rtprov::Error when
// /proc cannot tell.
TrialView trial_view(const fs::Root& root, const std::string& sysroot, bool running);

// The firmware's tryboot flag, the loader's 'flag' (boot::Loader::trial_boot_flag): a
// 32-bit big-endian cell (device-tree property).
void read_tryboot_flag(TrialView& view, const std::string& sysroot,
                       const boot::TrialBootFlag& flag);

// Disarms the trial of boot loader 'loader' as its row says (boot::Loader::disarm): takes
// next_entry=rtprov-trial out of GRUB's environment block, if it is there, or removes
// systemd-boot's one-shot through 'run_command' ('bootctl set-oneshot ""'; nothing when
// it is empty: not the running machine): a trial that ended must not be booted later.
// Returns what it did, "" for nothing. Throws rtprov::Error when the command fails.
std::string disarm_trial(fs::Root& root, const std::string& loader,
                         const target::CommandRunner& run_command);

// What 'trial check' made of this boot.
enum class TrialCheck {
    nothing,         // no armed trial, or its boot is still to come: nothing judged
    did_not_come_up, // a later boot that is not the trial's: recorded as fallen back
    committed,       // the trial boot passed and its boot configuration is the default
    commit_failed,   // it passed, but the plain apply that commits it failed
    fell_back,       // it did not pass: recorded, and a reboot into the default asked for
};

// 'trial check', run by rtprov-trial.service at every boot while a trial is recorded. On
// a boot that is not the trial's, the trial is disarmed, then recorded as fallen back
// (a kill in between leaves it armed, and the next boot records it again). On the trial
// boot (only where 'machine.running', else UsageError), the health gate judges it
// (judge_health: the self-test and the audit as children, their reports and verdict kept
// in core::k_trial_reports_dir, within the gate's time bound and before the trial's
// deadline target would reboot, leaving the commit its time); healthy: committed by a
// plain 'apply --live' of the applied profile; else (not healthy, or could not judge)
// recorded with the gate's reasons, told, and a reboot asked for. 'view' is set to what
// this boot was to the trial before the check.
TrialCheck check_trial(Machine& machine, TrialView& view);

// 'trial commit': the trial boot's configuration made the default now (committed or
// commit_failed), from the trial boot only: nullopt on any other boot, which 'view' says
// what it is; UsageError where not 'machine.running'.
std::optional<TrialCheck> commit_trial(Machine& machine, TrialView& view);

// 'trial abort': an armed trial disarmed (every loader that may be, when the record is
// damaged: a warning) and recorded as aborted; its files stay. What each disarming did is
// a line of the log. 'record' is the trial's record, aborted or (when 'aborted' is
// false) not armed; nullopt when there is none.
struct TrialAbort {
    bool aborted = false;
    std::optional<target::TrialRecord> record;
};
TrialAbort abort_trial(Machine& machine);

// First boot armed a trial ('apply --live --trial') and does not reboot into it ('why'):
// the trial is disarmed (GRUB's next_entry, systemd-boot's one-shot), recorded as aborted
// with 'why', and its boot configuration made the default by a plain apply of the applied
// profile, as a commit does (tryboot.txt and the trial's other files retired), so that no
// later reboot boots it. Nothing when no trial is armed. Throws rtprov::Error when that
// apply fails.
void take_back_trial(Machine& machine, const std::string& why);

} // namespace rtprov::pipeline
