// SPDX-License-Identifier: Apache-2.0
#include "provisioner/pipeline/apply.hpp"

#include "provisioner/system/sysroot.hpp"
#include "provisioner/systemd/units.hpp"
#include "provisioner/target/trial_record.hpp"

#include "provisioner/boot/kernel_params.hpp"
#include "provisioner/core/error.hpp"
#include "provisioner/pipeline/probe.hpp"
#include "provisioner/pipeline/profile_search.hpp"
#include "provisioner/planner/planner.hpp"
#include "provisioner/profile/app_loader.hpp"
#include "provisioner/profile/firstboot_config.hpp"
#include "provisioner/profile/profile_loader.hpp"
#include "provisioner/systemd/libsystemd.hpp"

#include <algorithm>
#include <filesystem>

namespace rtprov::pipeline {

namespace {

// Why first boot, which finds its profile by the name firstboot.yaml records, as 'rtprov
// apply --live --profile NAME' does in the image (no --profile-dir), would not apply the
// profile this apply resolved ('profile_yaml'); nullopt when it would. (The built-in
// profiles are this rtprov's; the image's rtprov has the same ones when it is the same
// version, docs/plugin-contract.md.)
std::optional<std::string> firstboot_profile_problem(const PlanRequest& request,
                                                     const fs::Root& root,
                                                     const std::string& profile_yaml,
                                                     const std::vector<profile::Override>& sets) {
    const std::string how = "first boot looks the profile up by the name firstboot.yaml "
                            "records, in the image's /etc/rtprov/profiles, then among rtprov's "
                            "built-in profiles";
    if (profile::is_profile_path(request.profile)) {
        const std::string name = std::filesystem::path(request.profile).stem().string();
        return "--firstboot: " + how + ", and " + quoted(request.profile) +
               " is a file of this machine: put it in the image as " +
               quoted("/etc/rtprov/profiles/" + name + ".yaml") + " and pass --profile " +
               quoted(name);
    }
    if (request.profile_dirs.empty())
        return std::nullopt; // this apply looked it up the same way
    std::string found;
    try {
        found = profile::to_yaml(profile::load_profile(
            request.profile, profile_search_path({}, &root, request.builtin_profiles), sets));
    } catch (const Error&) {
        // not found there, or not one these overrides fit
    }
    if (found == profile_yaml)
        return std::nullopt;
    return "--firstboot: " + how + ", and would not get the profile " + quoted(request.profile) +
           " this apply takes from --profile-dir: put it in the image as " +
           quoted("/etc/rtprov/profiles/" + request.profile + ".yaml");
}

// First boot applies with the profile and --set that firstboot.yaml records, and none of
// this apply's switches: a priority only --force-priority let through ('forced') would be
// refused there. One refusal per such service, saying how to force it in the profile.
std::vector<std::string> firstboot_force_problems(const core::Profile& profile,
                                                  const std::string& profile_yaml,
                                                  const core::TargetFacts& facts,
                                                  core::PlanOptions options,
                                                  const std::vector<core::AppKnowledge>& apps) {
    std::vector<std::string> problems;
    if (!options.force_priority)
        return problems;
    options.force_priority = false;
    const core::Plan unforced = planner::plan(profile, profile_yaml, facts, options, apps);
    for (const core::ServiceTuning& s : profile.tuning.services) {
        const bool refused =
            std::any_of(unforced.findings.begin(), unforced.findings.end(), [&](const auto& f) {
                return f.code == "priority-inversion" &&
                       f.message.find("'" + s.unit + "' would run at") != std::string::npos;
            });
        if (refused)
            problems.push_back(
                "--firstboot: first boot applies without --force-priority (firstboot.yaml "
                "records the profile and its --set, not this apply's switches), and would "
                "refuse " +
                quoted(s.unit) +
                "'s priority, which inverts its app's own: force it in the profile, which "
                "first boot applies too: --set " +
                quoted("tuning.services." + s.name + ".force_priority=true"));
    }
    return problems;
}

} // namespace

std::string firstboot_config(const PlanRequest& request, const std::string& profile_name) {
    profile::FirstbootConfig config;
    config.profile = request.profile;
    config.sets = request.sets;
    profile::set_firstboot_keys(config, request.firstboot.value_or(std::vector<std::string>{}));
    return profile::write_firstboot_config(
        config, core::owned_file_header(profile_name) +
                    "# Read by rtprov-firstboot.service at the first boot "
                    "(/usr/share/doc/rtprov/firstboot.md);\n"
                    "# written by 'rtprov apply --firstboot', taken out by 'rtprov rollback'.\n");
}

Planned make_plan(const PlanRequest& request, const fs::Root& root) {
    if (request.firstboot && request.live)
        throw UsageError("--firstboot", "first boot is set up in an image: use it with --root or "
                                        "--image (on the running system, first boot has run, or "
                                        "is what runs this apply)");
    std::vector<profile::Override> overrides;
    for (const std::string& set : request.sets)
        overrides.push_back({set});
    Planned p;
    p.profile = profile::load_profile(
        request.profile, profile_search_path(request.profile_dirs, &root, request.builtin_profiles),
        overrides);
    p.profile_yaml = profile::to_yaml(p.profile);
    core::PlanOptions options = request.options;
    std::optional<std::string> firstboot_problem;
    if (request.firstboot) {
        options.firstboot_config = firstboot_config(request, p.profile.name);
        firstboot_problem = firstboot_profile_problem(request, root, p.profile_yaml, overrides);
    }
    core::TargetFacts facts =
        probe(root, p.profile, request.live ? core::TargetMode::live : core::TargetMode::offline,
              request.options.trial);
    // The keys the applied profile put on the command line stay rtprov's to take back.
    std::optional<std::string> unreadable;
    if (const core::FileState* applied = facts.file(core::k_applied_profile_path)) {
        try {
            facts.previous_owned_keys = boot::owned_keys(
                profile::parse_profile(applied->content, root.shown(core::k_applied_profile_path)));
        } catch (const Error& e) {
            unreadable = e.what();
        }
    }
    const std::vector<core::AppKnowledge> apps = profile::load_apps(request.apps);
    p.plan = planner::plan(p.profile, p.profile_yaml, facts, options, apps);
    if (firstboot_problem)
        p.plan.findings.push_back({core::Severity::error, "firstboot-profile", *firstboot_problem});
    if (request.firstboot)
        for (std::string& problem :
             firstboot_force_problems(p.profile, p.profile_yaml, facts, options, apps))
            p.plan.findings.push_back(
                {core::Severity::error, "firstboot-force-priority", std::move(problem)});
    if (unreadable)
        p.plan.findings.push_back(
            {core::Severity::warning, "applied-profile-unreadable",
             "the applied profile cannot be read (" + *unreadable +
                 "); keys it set that the new profile drops stay on the command line"});
    p.cores = core::resolve_cores(p.profile, facts.cpu_count);
    if (request.options.trial)
        p.trial_id = core::trial_id_of(p.profile_yaml);
    return p;
}

Applied apply(fs::Root& root, const fs::RootLock& lock, const Planned& planned,
              const target::ApplyInfo& info, const target::CommandRunner& run,
              const LiveOptions& live, ServiceManager& manager,
              const std::function<void(const systemd::OnlineResult&)>& told_before_error) {
    auto tell = [&](const std::vector<std::string>& retired) {
        systemd::OnlineActions actions = systemd::online_actions(
            planned.plan, planned.profile, planned.cores, live.runtime, retired);
        return live.live && !actions.empty() ? manager.tell(actions) : systemd::OnlineResult{};
    };
    if (live.live)
        systemd::libsystemd(); // a missing library stops the apply before its first change
    Applied applied;
    std::optional<target::TrialRecord> previous_trial;
    try {
        previous_trial = target::read_trial_record(root);
    } catch (const Error& e) {
        // damaged: a trial apply writes a new one below; 'rtprov trial abort' ends it
        applied.damaged_trial_record = e.what();
    }
    std::optional<target::TrialRecord> trial;
    if (!planned.trial_id.empty()) {
        trial.emplace();
        trial->phase = "armed";
        trial->id = planned.trial_id;
        trial->profile = planned.profile.name;
        trial->loader = info.loader;
        trial->armed_at = info.applied_at;
        trial->updated_at = info.applied_at;
        if (live.live) {
            // Read before the first change: without it the trial boot cannot be told from
            // this one.
            system::Fact<std::string> boot_id =
                system::SysRoot(root.path()).value("/proc/sys/kernel/random/boot_id");
            if (!boot_id)
                throw Error("cannot read this boot's id (" + boot_id.problem +
                            "), which tells the trial boot from this one; nothing was written");
            trial->armed_boot = *boot_id;
        }
    }
    // The trial is recorded before any of its files is written, so that whatever arms it
    // (GRUB's next_entry, systemd-boot's one-shot) is never there without the record that
    // makes rtprov-trial.service judge the trial boot: a kill leaves no armed trial or a
    // recorded one.
    auto record_trial = [&] { target::write_trial_record(root, *trial); };
    try {
        applied.result = target::apply_plan(root, lock, planned.plan, info, run,
                                            trial ? std::function<void()>(record_trial)
                                                  : std::function<void()>());
    } catch (const Error&) {
        if (live.live)
            told_before_error(tell({}));
        throw;
    }
    if (!trial && previous_trial && previous_trial->phase == "armed") {
        // A plain apply replaces the trial's boot configuration with its own default; the
        // record says so only now, after apply_plan took the trial's arming out.
        previous_trial->phase = "aborted";
        previous_trial->reason = "ended by a plain 'rtprov apply', whose boot configuration is "
                                 "the default now";
        previous_trial->updated_at = info.applied_at;
        target::write_trial_record(root, *previous_trial);
    }
    // Nothing to do: the trial's files are all in place, armed by an earlier apply; its
    // record is written when that one was killed before writing it, or it ended since.
    if (trial && applied.result.nothing_to_do &&
        (!previous_trial || previous_trial->phase != "armed" ||
         previous_trial->id != planned.trial_id))
        record_trial();
    applied.online = tell(applied.result.retired);
    return applied;
}

RolledBack rollback(fs::Root& root, const fs::RootLock& lock, target::DriftPolicy drift,
                    const target::CommandRunner& run, bool live, ServiceManager& manager) {
    if (live)
        systemd::libsystemd(); // a missing library stops the rollback before its first change
    RolledBack rolled;
    rolled.result = target::rollback(root, lock, drift, run);
    // A trial's record, reports and textfile go with the files they were about.
    if (!rolled.result.nothing_to_do) {
        if (root.exists(core::k_trial_record_path))
            root.remove_file(core::k_trial_record_path);
        if (root.is_directory(core::k_trial_reports_dir))
            root.remove_tree(core::k_trial_reports_dir);
    }
    if (!live)
        return rolled;
    std::vector<std::string> touched = rolled.result.restored;
    touched.insert(touched.end(), rolled.result.removed.begin(), rolled.result.removed.end());
    if (systemd::OnlineActions actions = systemd::rollback_actions(touched); !actions.empty())
        rolled.online = manager.tell(actions);
    const std::string irq_unit = std::string(systemd::k_unit_dir) + "/" + systemd::k_irq_tune_unit;
    if (std::find(touched.begin(), touched.end(), irq_unit) != touched.end())
        rolled.irqs = manager.restore_irqs();
    return rolled;
}

} // namespace rtprov::pipeline
