// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/boot/loader.hpp"
#include "provisioner/core/plan.hpp"
#include "provisioner/pipeline/drift_diff.hpp"
#include "provisioner/pipeline/trial.hpp"
#include "provisioner/profile/profile_loader.hpp"
#include "provisioner/systemd/online.hpp"
#include "provisioner/target/firstboot_state.hpp"
#include "provisioner/target/journal.hpp"
#include "provisioner/target/trial_record.hpp"

#include <string>
#include <vector>

// Text and JSON forms of what the commands report. Pure: strings in, strings out.
namespace rtprov::cli {

struct PlanView {
    std::string profile;
    std::string root;
    bool live = false;
    const core::Plan* plan = nullptr;
    std::vector<std::string> retired; // managed files the profile no longer wants
};

std::string plan_text(const PlanView& view);
std::string plan_json(const PlanView& view);

// A trial as 'rtprov status' and 'rtprov trial status' show it (pipeline/trial.hpp).
using TrialView = pipeline::TrialView;
std::string trial_text(const TrialView& trial);
std::string trial_json(const TrialView& trial); // the object, or null
// The trial for node-exporter's textfile collector: rtprov_trial_info (1, with the phase,
// profile, id and this boot's part in labels) and when it last changed.
std::string trial_prometheus(const TrialView& trial);

// 'live': the target is the running system (status --live), which the advice on a
// command the last apply did not finish depends on.
std::string status_text(const target::Status& status, const std::string& root,
                        const std::optional<target::FirstbootState>& firstboot = {},
                        const TrialView& trial = {}, bool live = false);
// With 'diffs' (status --diff), each drifted file's entry also has "diff" and
// "diff_note" (pipeline::drift_diffs).
std::string status_json(const target::Status& status, const std::string& root,
                        const std::optional<target::FirstbootState>& firstboot = {},
                        const TrialView& trial = {},
                        const std::vector<pipeline::DriftDiff>* diffs = nullptr);

// Managed files changed by hand or missing since rtprov wrote them: the drift 'status'
// exits 3 for (edits beside rtprov's part of a command line are not counted), as for a
// command the last apply did not finish (State::pending).
std::size_t drifted_files(const target::Status& status);

// 'status --diff': for each drifted file, a heading, then its diff or why there is none.
std::string status_diff_text(const std::vector<pipeline::DriftDiff>& diffs);

// A label value in the Prometheus exposition format, quoted: backslash, double quote and
// newline escaped (https://prometheus.io/docs/instrumenting/exposition_formats/), and a
// byte that is not part of valid UTF-8 written as the code point of the same number.
std::string prometheus_label(const std::string& value);

// The '# HELP' and '# TYPE' lines that open a metric (TYPE: gauge, summary, ...).
std::string prometheus_metric(const std::string& name, const std::string& type,
                              const std::string& help);

// What 'status --prometheus' writes for node-exporter's textfile collector.
struct StatusMetrics {
    std::string board;           // the applied profile's board model; "" when unknown
    std::string version;         // rtprov's version
    std::int64_t checked_at = 0; // seconds since the epoch
};
// rtprov_profile_info (1, the profile, board, rtprov version and the profile's SHA-256
// in labels; only when a profile is applied), rtprov_profile_applied, the managed and
// drifted file counts, rtprov_file_drift per managed file, the commands the last apply
// did not finish (rtprov_pending_commands, rtprov_pending_command), when status looked, first
// boot's outcome (rtprov_firstboot_info) and the trial's (trial_prometheus).
std::string status_prometheus(const target::Status& status, const StatusMetrics& metrics,
                              const std::optional<target::FirstbootState>& firstboot = {},
                              const TrialView& trial = {});

// The message 'apply --live' fails with when systemd was not told everything: what was
// written and recorded, what systemd was told and what not, and how to finish
// (systemctl) or undo ('rtprov rollback --live'). One line per part.
std::string unfinished_live_apply(const std::string& profile, const target::ApplyResult& applied,
                                  const systemd::OnlineResult& online);

// The same for 'rollback --live': the files are restored, systemd still has to be told.
std::string unfinished_live_rollback(const target::RollbackResult& rolled_back,
                                     const systemd::OnlineResult& online);

std::string profiles_text(const std::vector<profile::ProfileEntry>& entries);
std::string profiles_json(const std::vector<profile::ProfileEntry>& entries);

} // namespace rtprov::cli
