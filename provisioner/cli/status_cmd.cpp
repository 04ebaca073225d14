// SPDX-License-Identifier: Apache-2.0
// rtprov status: which profile is applied, when, and what changed since; with --diff the
// changes themselves, with --prometheus the same for node-exporter's textfile collector.
#include "provisioner/cli/commands.hpp"
#include "provisioner/cli/target_options.hpp"
#include "provisioner/core/error.hpp"
#include "provisioner/core/plan.hpp"
#include "provisioner/core/sha256.hpp"
#include "provisioner/pipeline/drift_diff.hpp"
#include "provisioner/profile/profile_loader.hpp"
#include "provisioner/target/firstboot_state.hpp"

#include <algorithm>
#include <ctime>
#include <iostream>

namespace rtprov::cli {

namespace {

// The applied profile's board, for the info metric: read from the profile file only
// while it holds what rtprov wrote there, by its sha256 in the state (a file edited by
// hand since would name a board nobody applied; its drift is in the drift gauge). ""
// when it cannot be read or drifted.
std::string applied_board(const fs::Root& root, const target::Status& status) {
    const auto written =
        std::find_if(status.files.begin(), status.files.end(), [](const target::FileStatus& f) {
            return f.file.path == core::k_applied_profile_path;
        });
    if (written == status.files.end())
        return "";
    try {
        auto applied = root.read(core::k_applied_profile_path, fs::caps::k_config);
        if (applied && core::sha256_hex(applied->content) == written->file.sha256)
            return profile::parse_profile(applied->content,
                                          root.shown(core::k_applied_profile_path))
                .board.model;
    } catch (const Error&) {
    }
    return "";
}

} // namespace

void add_status_options(CLI::App& status, TargetOptions& target, StatusCommand& c) {
    add_target_options(status, target);
    status.add_flag("--json", c.json, "Print JSON");
    status.add_flag("--diff", c.diff,
                    "For each managed file changed since rtprov wrote it, show a unified diff "
                    "from what rtprov wrote to what is there now (or say why it cannot)");
    status
        .add_option("--prometheus", c.prometheus_file,
                    "Also write the applied profile, the drift, first boot, the trial and the "
                    "newest kept self-test as a Prometheus textfile (node-exporter's textfile "
                    "collector; Debian's reads /var/lib/prometheus/node-exporter/*.prom), "
                    "atomically")
        ->check(output_file_name_problem)
        ->type_name("FILE");
}

namespace {

int status_of(const fs::Root& root, const std::string& name, const StatusCommand& c, bool live) {
    if (!c.prometheus_file.empty())
        check_output_file(c.prometheus_file);
    target::Status status = target::read_status(root);
    auto firstboot = target::read_firstboot_state(root);
    TrialView trial = pipeline::trial_view(root, "/", live);
    // the newest kept self-test, read before anything is printed: a report that cannot be
    // read fails status (exit 1) and leaves the textfile as it was
    const std::string selftest_metrics =
        c.prometheus_file.empty() ? "" : newest_selftest_prometheus(root);
    std::optional<std::vector<pipeline::DriftDiff>> diffs;
    if (c.diff && status.state) {
        // planning again reads the whole target: only when something is to be shown
        pipeline::WrittenCandidates candidates;
        if (std::any_of(status.files.begin(), status.files.end(),
                        [](const target::FileStatus& f) { return f.drift != target::Drift::none; }))
            candidates = pipeline::replan_applied(root, *status.state, live, data_dir("apps"));
        diffs = pipeline::drift_diffs(root, status, candidates);
    }
    if (c.json && status.state) {
        // --force only skips the hand-edit refusal: what rollback does, rollback --force does
        status.rollback_refused = target::rollback_refusal(root, target::DriftPolicy::refuse);
        if (!status.rollback_refused.empty())
            status.rollback_force_refused =
                target::rollback_refusal(root, target::DriftPolicy::overwrite);
    }
    if (c.json)
        std::cout << status_json(status, name, firstboot, trial, diffs ? &*diffs : nullptr);
    else
        std::cout << status_text(status, name, firstboot, trial, live)
                  << (diffs ? status_diff_text(*diffs) : "");
    // a state that is not this root's (exit 1) leaves the textfile as it was
    if (!c.prometheus_file.empty() && status.foreign.empty())
        write_file(c.prometheus_file,
                   status_prometheus(status,
                                     {status.state ? applied_board(root, status) : "",
                                      RTPROV_VERSION, std::int64_t(std::time(nullptr))},
                                     firstboot, trial) +
                       selftest_metrics);
    // 1: a state that is not this root's; 3: drift, a command the last apply did not
    // finish, or an apply or rollback that stopped half way; 0: as rtprov wrote it, or
    // nothing applied (rtprov(1), EXIT STATUS).
    if (!status.foreign.empty())
        return k_exit_failed;
    if (status.state && (status.state->status != target::ApplyStatus::applied ||
                         drifted_files(status) > 0 || !status.state->pending.empty()))
        return k_exit_not_passed;
    return k_exit_ok;
}

} // namespace

int run_status(const TargetOptions& o, const StatusCommand& c) {
    pipeline::TargetSession target = open_target(o, true);
    const int rc = status_of(*target.root(), target.name(), c, o.live);
    // an image is unmounted before rtprov ends, and a failure to is the command's
    target.close();
    return rc;
}

} // namespace rtprov::cli
