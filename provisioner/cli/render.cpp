// SPDX-License-Identifier: Apache-2.0
#include "provisioner/cli/render.hpp"

#include "provisioner/boot/boot_plan.hpp"
#include "provisioner/cli/json.hpp"
#include "provisioner/core/sha256.hpp"
#include "provisioner/core/text.hpp"
#include "provisioner/core/unified_diff.hpp"
#include "provisioner/target/state_file.hpp"

#include <algorithm>

namespace rtprov::cli {

namespace {

std::string diff_of(const core::FileChange& change) {
    std::string rel = change.path.substr(1);
    if (change.next.symlink || (change.old && change.old->symlink))
        return "symlink " + change.path + " -> " + change.next.content +
               (change.old ? " (was " +
                                 (change.old->symlink ? "-> " + change.old->content
                                                      : std::string("a file")) +
                                 ")"
                           : "") +
               "\n";
    std::string diff =
        core::unified_diff(change.old ? std::optional(change.old->content) : std::nullopt,
                           change.next.content, "a/" + rel, "b/" + rel);
    if (diff.empty() && change.old) // same bytes, other mode or owner
        diff = "--- a/" + rel + "\n+++ b/" + rel + "\n";
    return diff;
}

std::string plural(std::size_t n, const char* one, const char* many) {
    return std::to_string(n) + " " + (n == 1 ? one : many);
}

} // namespace

std::string plan_text(const PlanView& view) {
    const core::Plan& plan = *view.plan;
    std::string out =
        "rtprov plan: profile '" + view.profile + "' on " +
        (view.live ? std::string("this machine (live)") : "root '" + view.root + "' (offline)") +
        "\n";
    for (const core::FileChange& change : plan.changes) {
        out += "\n# " + change.path + ": " + change.reason + "\n";
        if (change.old &&
            (change.old->mode != change.next.mode || change.old->uid != change.next.uid ||
             change.old->gid != change.next.gid))
            out += "# mode " + core::octal(change.old->mode) + " -> " +
                   core::octal(change.next.mode) + ", owner " + std::to_string(change.old->uid) +
                   ":" + std::to_string(change.old->gid) + " -> " +
                   std::to_string(change.next.uid) + ":" + std::to_string(change.next.gid) + "\n";
        out += diff_of(change);
    }
    for (const std::string& path : view.retired)
        out += "\n# " + path + ": no longer in the profile; removed, or its original restored\n";
    for (const core::Command& command : plan.commands) {
        out += "\n# run in the target: " + core::shell_command(command.argv) + " (" +
               command.reason + ")\n";
    }
    if (!plan.findings.empty()) {
        out += "\nfindings:\n";
        for (const core::Finding& finding : plan.findings)
            out += "  " + core::to_string(finding.severity) + ": " + finding.message + "\n";
    }
    out += "\n";
    if (plan.refused())
        out += "refused: fix the errors above; apply would write nothing\n";
    else if (plan.changes.empty() && view.retired.empty() && plan.commands.empty())
        out += "nothing to change: " +
               plural(plan.unchanged.size(), "managed file is", "managed files are") +
               " already as planned\n";
    else
        out += plural(plan.changes.size() + view.retired.size(), "file", "files") + " to change" +
               (plan.commands.empty()
                    ? std::string()
                    : ", " + plural(plan.commands.size(), "command", "commands") + " to run") +
               ", " + std::to_string(plan.unchanged.size()) +
               " unchanged; 'rtprov apply' with the same options makes these changes\n";
    return out;
}

std::string plan_json(const PlanView& view) {
    const core::Plan& plan = *view.plan;
    std::string out =
        "{\n  " + json_schema("plan") + ",\n  \"profile\": " + json_string(view.profile) +
        ",\n  \"root\": " + json_string(view.root) +
        ",\n  \"mode\": " + json_string(view.live ? "live" : "offline") +
        ",\n  \"refused\": " + (plan.refused() ? "true" : "false") + ",\n  \"changes\": [";
    for (std::size_t i = 0; i < plan.changes.size(); ++i) {
        const core::FileChange& c = plan.changes[i];
        out += std::string(i ? "," : "") + "\n    {\"path\": " + json_string(c.path) +
               ", \"action\": " + json_string(c.old ? "modify" : "create") +
               ", \"reason\": " + json_string(c.reason) +
               ", \"mode\": " + json_string(core::octal(c.next.mode)) +
               ", \"uid\": " + std::to_string(c.next.uid) +
               ", \"gid\": " + std::to_string(c.next.gid) +
               ", \"sha256\": " + json_string(core::sha256_hex(c.next.content)) +
               ", \"diff\": " + json_string(diff_of(c)) + "}";
    }
    out += std::string(plan.changes.empty() ? "" : "\n  ") + "],\n  \"retired\": [";
    for (std::size_t i = 0; i < view.retired.size(); ++i)
        out += std::string(i ? ", " : "") + json_string(view.retired[i]);
    out += "],\n  \"commands\": [";
    for (std::size_t i = 0; i < plan.commands.size(); ++i) {
        out += std::string(i ? ", " : "") + "[";
        for (std::size_t k = 0; k < plan.commands[i].argv.size(); ++k)
            out += std::string(k ? ", " : "") + json_string(plan.commands[i].argv[k]);
        out += "]";
    }
    out += "],\n  \"packages\": [";
    for (std::size_t i = 0; i < plan.packages.size(); ++i)
        out += std::string(i ? ", " : "") + json_string(plan.packages[i]);
    out += "],\n  \"unchanged\": [";
    for (std::size_t i = 0; i < plan.unchanged.size(); ++i)
        out += std::string(i ? ", " : "") + json_string(plan.unchanged[i]);
    out += "],\n  \"findings\": [";
    for (std::size_t i = 0; i < plan.findings.size(); ++i) {
        const core::Finding& f = plan.findings[i];
        out += std::string(i ? "," : "") +
               "\n    {\"severity\": " + json_string(core::to_string(f.severity)) +
               ", \"code\": " + json_string(f.code) + ", \"message\": " + json_string(f.message) +
               "}";
    }
    out += std::string(plan.findings.empty() ? "" : "\n  ") + "]\n}\n";
    return out;
}

namespace {

const char* drift_text(target::Drift drift) {
    switch (drift) {
    case target::Drift::none:
        return "as written";
    case target::Drift::foreign_edit:
        return "rtprov's part as written; edited by others since, which rollback keeps";
    case target::Drift::modified:
        return "changed by hand";
    case target::Drift::missing:
        return "missing";
    }
    return "?";
}

const char* drift_code(target::Drift drift) {
    switch (drift) {
    case target::Drift::none:
        return "none";
    case target::Drift::foreign_edit:
        return "foreign-edit";
    case target::Drift::modified:
        return "modified";
    case target::Drift::missing:
        return "missing";
    }
    return "?";
}

} // namespace

namespace {

// First boot's outcome, for status.
std::string firstboot_text(const target::FirstbootState& f) {
    std::string out = "first boot:  ";
    if (f.phase == "rebooting")
        out += "rebooting to take effect (" + f.reboot_cause + ")";
    else if (f.phase == "failed")
        out += "FAILED at " + f.updated_at + ": " + f.reason;
    else
        out += f.phase + " at " + f.updated_at + " (profile " + f.profile + "; " +
               std::to_string(f.reboots) + (f.reboots == 1 ? " reboot" : " reboots") +
               "); kernel command line " + f.cmdline + "; self-test " + f.selftest + "; audit " +
               f.audit + (f.trial.empty() ? "" : "; trial: " + f.trial) +
               (f.buffers.empty() ? "" : "; buffers: " + f.buffers) + "; reports in " +
               target::k_firstboot_dir;
    return out + "\n";
}

std::string boot_word(target::TrialBoot boot) {
    switch (boot) {
    case target::TrialBoot::not_yet:
        return "not-yet";
    case target::TrialBoot::trial:
        return "trial";
    case target::TrialBoot::did_not_start:
        return "did-not-start";
    case target::TrialBoot::none:
        break;
    }
    return "none";
}

std::string firstboot_json(const target::FirstbootState& f) {
    return ",\n  \"firstboot\": {\"phase\": " + json_string(f.phase) +
           ", \"profile\": " + json_string(f.profile) +
           ", \"reboots\": " + std::to_string(f.reboots) +
           ", \"reboot_cause\": " + json_string(f.reboot_cause) +
           ", \"cmdline\": " + json_string(f.cmdline) +
           ", \"selftest\": " + json_string(f.selftest) + ", \"audit\": " + json_string(f.audit) +
           ", \"trial\": " + json_string(f.trial) + ", \"buffers\": " + json_string(f.buffers) +
           ", \"reason\": " + json_string(f.reason) +
           ", \"updated_at\": " + json_string(f.updated_at) + "}";
}

} // namespace

std::string trial_text(const TrialView& trial) {
    if (!trial.record)
        return "no trial: 'rtprov apply --trial' arms one\n";
    const target::TrialRecord& r = *trial.record;
    std::string out = "trial of profile '" + r.profile + "' (id " + r.id + ", " + r.loader +
                      "), armed at " + r.armed_at + ": ";
    if (r.phase == "armed") {
        switch (trial.boot) {
        case target::TrialBoot::not_yet:
            out += "armed; the next boot, and only that one, is the trial";
            break;
        case target::TrialBoot::trial:
            out += "this boot is the trial; rtprov-trial.service checks it";
            break;
        default:
            out += "armed, and this boot is not the trial: it did not come up "
                   "(rtprov-trial.service records that at boot)";
        }
        if (trial.tryboot)
            out += std::string("; the firmware says this boot is ") +
                   (*trial.tryboot ? "a tryboot" : "not a tryboot");
        else if (!trial.tryboot_problem.empty())
            out += "; the firmware's tryboot flag cannot be read (" + trial.tryboot_problem + ")";
    } else if (r.phase == "committed") {
        out += "committed at " + r.updated_at + " (self-test " + r.selftest + ", audit " + r.audit +
               ")";
    } else {
        out += (r.phase == "fell-back"       ? "fell back at "
                : r.phase == "commit-failed" ? "commit failed at "
                                             : "aborted at ") +
               r.updated_at + ": " + r.reason;
    }
    return out + "\n";
}

std::string trial_json(const TrialView& trial) {
    if (!trial.record)
        return "null";
    const target::TrialRecord& r = *trial.record;
    return "{\"phase\": " + json_string(r.phase) + ", \"id\": " + json_string(r.id) +
           ", \"profile\": " + json_string(r.profile) + ", \"loader\": " + json_string(r.loader) +
           ", \"armed_at\": " + json_string(r.armed_at) +
           ", \"this_boot\": " + json_string(boot_word(trial.boot)) + ", \"tryboot\": " +
           (trial.tryboot ? std::string(*trial.tryboot ? "true" : "false") : "null") +
           ", \"tryboot_problem\": " + json_string(trial.tryboot_problem) +
           ", \"selftest\": " + json_string(r.selftest) + ", \"audit\": " + json_string(r.audit) +
           ", \"reason\": " + json_string(r.reason) +
           ", \"updated_at\": " + json_string(r.updated_at) + "}";
}

std::string prometheus_label(const std::string& value) {
    std::string out;
    for (std::size_t i = 0; i < value.size(); ++i) {
        const char c = value[i];
        const auto byte = static_cast<unsigned char>(c);
        if (byte >= 0x80) {
            // Label values are UTF-8: a byte that is not part of valid UTF-8 is written as
            // the code point of the same number (as json_string does), or node-exporter
            // would drop the whole file.
            if (std::size_t n = core::utf8_length(value, i)) {
                out.append(value, i, n);
                i += n - 1;
            } else {
                out += char(0xc0 | (byte >> 6));
                out += char(0x80 | (byte & 0x3f));
            }
            continue;
        }
        if (c == '\\' || c == '"')
            out += '\\';
        out += c == '\n' ? std::string("\\n") : std::string(1, c);
    }
    return "\"" + out + "\"";
}

std::string prometheus_metric(const std::string& name, const std::string& type,
                              const std::string& help) {
    return "# HELP " + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
}

std::string trial_prometheus(const TrialView& trial) {
    std::string out = prometheus_metric("rtprov_trial_info", "gauge",
                                        "The trial of a boot configuration (rtprov trial "
                                        "status): 1, its phase in the labels (none: no trial).");
    if (!trial.record)
        return out + "rtprov_trial_info{phase=\"none\"} 1\n";
    const target::TrialRecord& r = *trial.record;
    return out + "rtprov_trial_info{phase=" + prometheus_label(r.phase) +
           ",profile=" + prometheus_label(r.profile) + ",id=" + prometheus_label(r.id) +
           ",loader=" + prometheus_label(r.loader) +
           ",this_boot=" + prometheus_label(boot_word(trial.boot)) +
           ",selftest=" + prometheus_label(r.selftest) + ",audit=" + prometheus_label(r.audit) +
           "} 1\n";
}

namespace {

// A command the last apply did not finish, and how to finish it: on the running system
// apply runs it; offline --regenerate-boot=now runs it, and a plain apply records a
// boot regeneration for first boot (core::Plan::recorded_for_first_boot).
std::string pending_text(const std::vector<std::string>& argv, bool live) {
    const bool regeneration = !boot::loader_of(argv).empty();
    return "'" + core::shell_command(argv) + "' did not finish in the last apply" +
           (regeneration ? ", so the boot configuration may lack what rtprov wrote" : "") + "; " +
           (live ? std::string("run the same 'rtprov apply --live' again to run it")
            : regeneration
                ? std::string("run the same 'rtprov apply' again: with --regenerate-boot=now "
                              "it runs it (where the target's /dev and /boot are in place), "
                              "without it records it for first boot")
                : std::string("run the same 'rtprov apply' again with --regenerate-boot=now to "
                              "run it"));
}

} // namespace

std::string status_text(const target::Status& status, const std::string& root,
                        const std::optional<target::FirstbootState>& firstboot,
                        const TrialView& trial, bool live) {
    std::string first = (firstboot ? firstboot_text(*firstboot) : "") +
                        (trial.record ? "trial:       " + trial_text(trial) : "");
    if (!status.state)
        return "no rtprov profile is applied to root '" + root + "'\n" + first;
    const target::State& s = *status.state;
    std::string out = "profile:     " + s.profile + " (sha256 " + s.profile_sha256.substr(0, 12) +
                      ")\napplied at:  " + s.applied_at + "\nstate:       " +
                      (s.status == target::ApplyStatus::applied ? "applied"
                       : s.status == target::ApplyStatus::rolling_back
                           ? "interrupted: a rollback stopped half way; run 'rtprov rollback' "
                             "again"
                           : "interrupted: an apply stopped half way; run 'rtprov apply' again "
                             "or 'rtprov rollback'") +
                      "\nfiles:\n";
    std::size_t drifted = 0, edited = 0;
    for (const target::FileStatus& f : status.files) {
        out += std::string("  ") + (f.file.created ? "created  " : "changed  ") + f.file.path +
               "  " + drift_text(f.drift) + "\n";
        if (!f.detail.empty() && f.drift != target::Drift::none)
            out += "           " + f.detail + "\n";
        drifted += f.drift == target::Drift::modified || f.drift == target::Drift::missing;
        edited += f.drift == target::Drift::foreign_edit;
    }
    for (const auto& argv : s.pending)
        out += "pending:     " + pending_text(argv, live) + "\n";
    if (!status.foreign.empty())
        out += "FOREIGN STATE: " + status.foreign + "\n";
    const std::string beside =
        edited ? " (others edited " + plural(edited, "file", "files") + " beside it, above)" : "";
    if (drifted > 0)
        out += plural(drifted, "managed file differs", "managed files differ") +
               " from what rtprov wrote; 'rtprov status --diff' shows how\n";
    else if (!s.pending.empty())
        out += "not finished: every file rtprov manages is as rtprov wrote it" + beside + ", but " +
               plural(s.pending.size(), "command", "commands") +
               " of the last apply did not finish (above)\n";
    else
        out += "no drift: every part rtprov manages is as rtprov wrote it" + beside + "\n";
    return out + first;
}

std::string status_json(const target::Status& status, const std::string& root,
                        const std::optional<target::FirstbootState>& firstboot,
                        const TrialView& trial, const std::vector<pipeline::DriftDiff>* diffs) {
    std::string out = "{\n  " + json_schema("status") + ",\n  \"root\": " + json_string(root) +
                      ",\n  \"applied\": " + (status.state ? "true" : "false");
    if (status.state) {
        const target::State& s = *status.state;
        out += ",\n  \"profile\": " + json_string(s.profile) +
               ",\n  \"profile_sha256\": " + json_string(s.profile_sha256) +
               ",\n  \"applied_at\": " + json_string(s.applied_at) + ",\n  \"status\": " +
               json_string(s.status == target::ApplyStatus::applied        ? "applied"
                           : s.status == target::ApplyStatus::rolling_back ? "rolling-back"
                                                                           : "interrupted") +
               ",\n  \"files\": [";
        for (std::size_t i = 0; i < status.files.size(); ++i) {
            const target::FileStatus& f = status.files[i];
            out += std::string(i ? "," : "") + "\n    {\"path\": " + json_string(f.file.path) +
                   ", \"created\": " + (f.file.created ? "true" : "false") +
                   ", \"sha256\": " + json_string(f.file.sha256) +
                   ", \"drift\": " + json_string(drift_code(f.drift)) +
                   ", \"detail\": " + json_string(f.detail);
            if (diffs) {
                std::string diff, note;
                for (const pipeline::DriftDiff& d : *diffs)
                    if (d.path == f.file.path) {
                        diff = d.diff;
                        note = d.note;
                    }
                out += ", \"diff\": " + json_string(diff) + ", \"diff_note\": " + json_string(note);
            }
            out += "}";
        }
        out += std::string(status.files.empty() ? "" : "\n  ") + "]";
        out += ",\n  \"drifted\": " + std::to_string(drifted_files(status));
        out += ",\n  \"pending\": [";
        for (std::size_t i = 0; i < s.pending.size(); ++i) {
            out += std::string(i ? ", " : "") + "[";
            for (std::size_t k = 0; k < s.pending[i].size(); ++k)
                out += std::string(k ? ", " : "") + json_string(s.pending[i][k]);
            out += "]";
        }
        out += "]";
        out +=
            ",\n  \"foreign\": " + (status.foreign.empty() ? "null" : json_string(status.foreign));
        auto or_null = [](const std::string& why) {
            return why.empty() ? "null" : json_string(why);
        };
        out += ",\n  \"rollback_refused\": " + or_null(status.rollback_refused) +
               ",\n  \"rollback_force_refused\": " + or_null(status.rollback_force_refused);
    }
    if (firstboot)
        out += firstboot_json(*firstboot);
    out += ",\n  \"trial\": " + trial_json(trial);
    return out + "\n}\n";
}

std::size_t drifted_files(const target::Status& status) {
    std::size_t drifted = 0;
    for (const target::FileStatus& f : status.files)
        drifted += f.drift == target::Drift::modified || f.drift == target::Drift::missing;
    return drifted;
}

std::string status_diff_text(const std::vector<pipeline::DriftDiff>& diffs) {
    if (diffs.empty())
        return "diff: every file rtprov manages holds what rtprov wrote\n";
    std::string out;
    for (const pipeline::DriftDiff& d : diffs) {
        out += "\n" + d.path + ": " + drift_text(d.drift) + "\n  " + d.note + "\n";
        out += d.diff;
    }
    return out;
}

std::string status_prometheus(const target::Status& status, const StatusMetrics& metrics,
                              const std::optional<target::FirstbootState>& firstboot,
                              const TrialView& trial) {
    std::string out;
    auto metric = [&](const std::string& name, const std::string& help) {
        out += prometheus_metric(name, "gauge", help);
    };
    metric("rtprov_profile_info",
           "The profile rtprov applied here (rtprov status): 1, with the profile, its board, "
           "the SHA-256 of the resolved profile and rtprov's version in labels; absent when "
           "none is applied.");
    if (status.state)
        out += "rtprov_profile_info{profile=" + prometheus_label(status.state->profile) +
               ",board=" + prometheus_label(metrics.board) +
               ",sha256=" + prometheus_label(status.state->profile_sha256) +
               ",version=" + prometheus_label(metrics.version) + "} 1\n";
    metric("rtprov_profile_applied",
           "1 when rtprov has applied a profile here and the apply finished, 0 when none is "
           "applied or an apply or rollback was interrupted.");
    out += std::string("rtprov_profile_applied ") +
           (status.state && status.state->status == target::ApplyStatus::applied ? "1" : "0") +
           "\n";
    metric("rtprov_managed_files", "Files rtprov wrote here and keeps track of.");
    out += "rtprov_managed_files " + std::to_string(status.files.size()) + "\n";
    metric("rtprov_drifted_files",
           "Managed files changed by hand or missing since rtprov wrote them "
           "('rtprov status --diff' shows how).");
    out += "rtprov_drifted_files " + std::to_string(drifted_files(status)) + "\n";
    metric("rtprov_file_drift",
           "Per managed file: 1 when it was changed by hand or is missing, else 0; the label "
           "drift says which (none, foreign-edit, modified, missing).");
    for (const target::FileStatus& f : status.files)
        out +=
            "rtprov_file_drift{path=" + prometheus_label(f.file.path) +
            ",drift=" + prometheus_label(drift_code(f.drift)) + "} " +
            (f.drift == target::Drift::modified || f.drift == target::Drift::missing ? "1" : "0") +
            "\n";
    const auto no_pending = std::vector<std::vector<std::string>>{};
    const auto& pending = status.state ? status.state->pending : no_pending;
    metric("rtprov_pending_commands",
           "Commands the last apply planned that did not finish (an update-grub that failed "
           "or was killed): above 0 the boot configuration may lack what rtprov wrote, and "
           "rtprov status exits 3.");
    out += "rtprov_pending_commands " + std::to_string(pending.size()) + "\n";
    metric("rtprov_pending_command",
           "Per command the last apply did not finish: 1, the command in the label command; "
           "absent when none is pending.");
    for (const auto& argv : pending)
        out += "rtprov_pending_command{command=" + prometheus_label(core::shell_command(argv)) +
               "} 1\n";
    metric("rtprov_status_last_check_timestamp_seconds",
           "When rtprov status last looked at the managed files, in seconds since the epoch.");
    out +=
        "rtprov_status_last_check_timestamp_seconds " + std::to_string(metrics.checked_at) + "\n";
    metric("rtprov_firstboot_info",
           "The appliance's first boot (rtprov firstboot): 1, its phase (none: it never ran; "
           "started, rebooting, done, failed), the profile it applied, its reboots and the "
           "self-test's and audit's outcomes in labels.");
    if (!firstboot)
        out += "rtprov_firstboot_info{phase=\"none\"} 1\n";
    else
        out += "rtprov_firstboot_info{phase=" +
               prometheus_label(firstboot->phase.empty() ? "started" : firstboot->phase) +
               ",profile=" + prometheus_label(firstboot->profile) +
               ",reboots=" + prometheus_label(std::to_string(firstboot->reboots)) +
               ",selftest=" + prometheus_label(firstboot->selftest) +
               ",audit=" + prometheus_label(firstboot->audit) + "} 1\n";
    return out + trial_prometheus(trial);
}

namespace {

// "done: ...\nnot done: ...\nto finish: systemctl ..." for what systemd was not told.
std::string left_undone(const systemd::OnlineResult& online) {
    std::vector<std::string> done, not_done;
    for (const systemd::OnlineStep& step : online.done)
        done.push_back(step.text());
    for (const systemd::OnlineStep& step : online.not_done)
        not_done.push_back(step.text());
    std::string out;
    if (!done.empty())
        out += "systemd was told: " + core::join(done, ", ") + "\n";
    out += "not done: " + core::join(not_done, ", ") + "\n";
    out += "to finish: " + systemd::systemctl_commands(online.not_done);
    return out;
}

} // namespace

std::string unfinished_live_apply(const std::string& profile, const target::ApplyResult& applied,
                                  const systemd::OnlineResult& online) {
    const std::string state = target::k_state_file;
    std::string out = "applied profile '" + profile +
                      "' to the files, but systemd was not told everything: " + online.failure +
                      "\n";
    if (!applied.written.empty())
        out += "written and recorded in " + state + ": " + core::join(applied.written, ", ") + "\n";
    if (!applied.retired.empty())
        out += "retired (no longer in the profile), recorded there too: " +
               core::join(applied.retired, ", ") + "\n";
    if (!applied.ran.empty())
        out += "ran: " + core::join(applied.ran, ", ") + "\n";
    if (applied.written.empty() && applied.retired.empty() && applied.ran.empty())
        out += "no file needed changing; the apply is recorded in " + state + "\n";
    return out + left_undone(online) + "\nor undo the apply: rtprov rollback --live";
}

std::string unfinished_live_rollback(const target::RollbackResult& rolled_back,
                                     const systemd::OnlineResult& online) {
    std::string out =
        "rolled back the files, but systemd was not told everything: " + online.failure + "\n";
    if (!rolled_back.restored.empty())
        out += "restored: " + core::join(rolled_back.restored, ", ") + "\n";
    if (!rolled_back.removed.empty())
        out += "removed: " + core::join(rolled_back.removed, ", ") + "\n";
    return out + left_undone(online);
}

std::string profiles_text(const std::vector<profile::ProfileEntry>& entries) {
    if (entries.empty())
        return "no profiles found\n";
    // One line per profile: its name is a file's name in a folder the image may hold, and
    // its description a YAML string.
    struct Row {
        std::string name, label, description;
    };
    std::vector<Row> rows;
    std::size_t name_width = 4, label_width = 6;
    for (const auto& e : entries) {
        rows.push_back(
            {core::one_line(e.name), core::one_line(e.label), core::one_line(e.description)});
        name_width = std::max(name_width, rows.back().name.size());
        label_width = std::max(label_width, rows.back().label.size());
    }
    auto pad = [](std::string s, std::size_t width) {
        s.resize(std::max(width, s.size()), ' ');
        return s;
    };
    std::string out =
        pad("NAME", name_width) + "  " + pad("SOURCE", label_width) + "  DESCRIPTION\n";
    for (std::size_t i = 0; i < entries.size(); ++i)
        out += pad(rows[i].name, name_width) + "  " + pad(rows[i].label, label_width) + "  " +
               (entries[i].hidden ? "(hidden by the one above) " : "") + rows[i].description + "\n";
    return out;
}

std::string profiles_json(const std::vector<profile::ProfileEntry>& entries) {
    std::string out = "{\n  " + json_schema("profiles") + ",\n  \"profiles\": [";
    for (std::size_t i = 0; i < entries.size(); ++i) {
        const auto& e = entries[i];
        out += std::string(i ? "," : "") + "\n    {\"name\": " + json_string(e.name) +
               ", \"path\": " + json_string(e.path) + ", \"source\": " + json_string(e.label) +
               ", \"hidden\": " + (e.hidden ? "true" : "false") +
               ", \"description\": " + json_string(e.description) + "}";
    }
    return out + (entries.empty() ? "" : "\n  ") + "]\n}\n";
}

} // namespace rtprov::cli
