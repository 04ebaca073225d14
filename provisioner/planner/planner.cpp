// SPDX-License-Identifier: Apache-2.0
#include "provisioner/planner/planner.hpp"

#include "provisioner/boot/boot_plan.hpp"
#include "provisioner/core/text.hpp"
#include "provisioner/player/player_plan.hpp"
#include "provisioner/systemd/systemd_plan.hpp"

#include <algorithm>

namespace rtprov::planner {

using namespace rtprov::core;

namespace {

void plan_os(Plan& plan, const Profile& profile, const TargetFacts& facts) {
    const auto& wanted = profile.board.match.os_id;
    if (!facts.os) {
        plan.findings.push_back({Severity::warning, "os-unknown",
                                 "the target has no /etc/os-release or /usr/lib/os-release; "
                                 "is the root right?"});
        return;
    }
    if (wanted.empty())
        return;
    auto matches = [&](const std::string& id) {
        return std::find(wanted.begin(), wanted.end(), id) != wanted.end();
    };
    if (matches(facts.os->id) ||
        std::any_of(facts.os->id_like.begin(), facts.os->id_like.end(), matches))
        return;
    const std::string ids = core::quoted_list(wanted);
    plan.findings.push_back({Severity::warning, "os-mismatch",
                             "profile '" + profile.name + "' is made for " + ids +
                                 " but the target is '" + facts.os->id +
                                 "'; check --profile and --root"});
}

std::optional<ResolvedCores> plan_cores(Plan& plan, const Profile& profile,
                                        const TargetFacts& facts) {
    for (const ProfileProblem& problem : validate(profile, facts.cpu_count))
        plan.findings.push_back({Severity::error, "profile-invalid",
                                 problem.origin.to_string() + ": " + problem.message});
    auto cores = resolve_cores(profile, facts.cpu_count);
    if (!cores) {
        plan.findings.push_back(
            {Severity::info, "cores-auto",
             "core layout is 'auto' and the CPU count is not known offline; it is resolved on "
             "the running machine at first boot (or give it: --set board.cpus=N)"});
        return std::nullopt;
    }
    if (cores->reserved.empty())
        plan.findings.push_back({Severity::warning, "no-reserved-core",
                                 "no core is reserved; the audio services share every core "
                                 "with the rest of the system"});
    return cores;
}

} // namespace

Plan plan(const Profile& profile, const std::string& profile_yaml, const TargetFacts& facts,
          const PlanOptions& options, const std::vector<AppKnowledge>& apps) {
    Plan result;
    plan_os(result, profile, facts);
    auto cores = plan_cores(result, profile, facts);
    FileState applied_profile;
    applied_profile.content = owned_file_header(profile.name) + profile_yaml;
    add_file_change(result, facts, k_applied_profile_path, std::move(applied_profile),
                    "the resolved profile, read by first boot, audit and self-test");
    PlanOptions trial = options;
    if (trial.trial)
        trial.trial_id = trial_id_of(profile_yaml);
    boot::plan_boot(result, profile, cores, facts, trial);
    systemd::plan_systemd(result, profile, cores, facts, apps, trial);
    player::plan_player_buffers(result, profile, facts, apps);
    systemd::plan_firstboot(result, facts, options);
    // A file that arms a trial (GRUB's environment block, whose next_entry makes the next
    // boot the trial) is written after every other: once it is, the units that judge the
    // trial boot are in place, and a rollback, which goes backwards, disarms it first.
    std::stable_partition(result.changes.begin(), result.changes.end(),
                          [&](const FileChange& c) { return !result.runtime.count(c.path); });
    // A command an earlier apply did not finish (it failed, or rtprov was killed) runs
    // again, when commands may run now; a boot regeneration is otherwise recorded for
    // first boot by plan_boot.
    const auto& recorded = result.recorded_for_first_boot;
    for (const auto& argv : facts.pending_commands) {
        if (std::any_of(result.commands.begin(), result.commands.end(),
                        [&](const Command& c) { return c.argv == argv; }) ||
            std::find(recorded.begin(), recorded.end(), argv) != recorded.end())
            continue;
        const std::string text = core::shell_command(argv);
        if (options.regenerate == Regenerate::now)
            result.commands.push_back(
                {argv, "did not finish in the last apply", true, boot::produces_of(argv)});
        else
            result.findings.push_back({Severity::warning, "command-pending",
                                       "'" + text +
                                           "' did not finish in the last apply; run 'rtprov apply "
                                           "--regenerate-boot=now' (or it stays undone)"});
    }
    return result;
}

} // namespace rtprov::planner
