// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/fs/root.hpp"

#include <optional>
#include <string>

namespace rtprov::target {

// What is on trial and how it ended, in <root>/var/lib/rtprov/trial (core::
// k_trial_record_path), one 'key=value' line each. apply --trial writes it 'armed';
// 'rtprov trial check' (rtprov-trial.service, at boot) ends it: committed after the
// trial boot passed the self-test and audit, fell-back when it did not or never came up,
// aborted by 'rtprov trial abort'.
struct TrialRecord {
    std::string phase;      // armed, committed, fell-back, aborted, commit-failed
    std::string id;         // the marker on the trial boot's command line (rtprov.trial=ID)
    std::string profile;    // the profile on trial
    std::string loader;     // grub
    std::string armed_at;   // UTC
    std::string armed_boot; // the boot id apply --live ran in; "" offline (the next boot
                            // of the image is the trial)
    std::string reason;     // fell-back, aborted: why, with the numbers
    std::string selftest;   // the trial boot's: passed, did not pass, error, timed out, not run
    std::string audit;      // the trial boot's: passed, did not pass, error, timed out, not run
    std::string updated_at; // UTC
    friend bool operator==(const TrialRecord&, const TrialRecord&) = default;
};

std::string format_trial_record(const TrialRecord& record);

// Throws rtprov::Error naming 'label', the line and the fix for anything but the lines
// format_trial_record writes.
TrialRecord parse_trial_record(const std::string& text, const std::string& label);

std::optional<TrialRecord> read_trial_record(const fs::Root& root);
void write_trial_record(fs::Root& root, const TrialRecord& record);

// What a boot is to a trial, from the record, the running kernel's command line and this
// boot's id (/proc/sys/kernel/random/boot_id).
enum class TrialBoot {
    none,          // no trial pending (no record, or it has ended)
    not_yet,       // armed in this very boot (live): the trial is the next boot
    trial,         // this is the trial boot: check it
    did_not_start, // a later boot without the trial's marker: the trial never came up
};
TrialBoot classify_boot(const std::optional<TrialRecord>& record, const std::string& cmdline,
                        const std::string& boot_id);

} // namespace rtprov::target
