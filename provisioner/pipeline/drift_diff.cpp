// SPDX-License-Identifier: Apache-2.0
#include "provisioner/pipeline/drift_diff.hpp"

#include "provisioner/boot/cmdline.hpp"
#include "provisioner/boot/kernel_params.hpp"
#include "provisioner/core/error.hpp"
#include "provisioner/core/sha256.hpp"
#include "provisioner/core/unified_diff.hpp"
#include "provisioner/pipeline/probe.hpp"
#include "provisioner/planner/planner.hpp"
#include "provisioner/profile/app_loader.hpp"
#include "provisioner/profile/profile_loader.hpp"
#include "provisioner/target/backup_archive.hpp"

#include <optional>

namespace rtprov::pipeline {

namespace {

// As the state records a checksum: a link's target is marked, so that a file holding
// the target's text does not match (target/journal.cpp).
std::string recorded_sha(const core::FileState& state) {
    return core::sha256_hex(state.symlink ? "symlink -> " + state.content : state.content);
}

// A link as diff text: one line naming its target.
std::string diff_text(const core::FileState& state) {
    return state.symlink ? "symbolic link to " + state.content + "\n" : state.content;
}

// rtprov's recorded part merged into the file's original, as an apply on the original
// writes it (boot::plan_boot merges the same way).
std::optional<core::FileState> merged_cmdline(const core::CmdlineEdit& edit,
                                              const core::FileState& original) {
    if (original.symlink)
        return std::nullopt;
    const boot::CmdlineScope scope =
        edit.first_line_only ? boot::CmdlineScope::first_line : boot::CmdlineScope::whole_text;
    boot::CmdlineText text = boot::parse_cmdline_text(original.content, scope);
    if (text.unclosed_quote)
        return std::nullopt;
    std::vector<boot::KernelParam> wanted;
    for (const std::string& token : edit.part) {
        const std::size_t eq = token.find('=');
        wanted.push_back(eq == std::string::npos
                             ? boot::KernelParam{token, "", true}
                             : boot::KernelParam{token.substr(0, eq), token.substr(eq + 1), false});
    }
    core::FileState merged = original;
    merged.content =
        boot::render(boot::merge_cmdline(text, text.tokens, wanted, edit.owned_keys).text);
    return merged;
}

using ManagedFileSha = std::optional<std::string>;

// What rtprov wrote to the applied profile's file, as the state records it.
ManagedFileSha recorded_profile_sha(const target::State& state) {
    const target::ManagedFile* file = state.find(core::k_applied_profile_path);
    return file ? ManagedFileSha(file->sha256) : std::nullopt;
}

} // namespace

std::vector<DriftDiff> drift_diffs(const fs::Root& root, const target::Status& status,
                                   const WrittenCandidates& candidates) {
    std::vector<DriftDiff> out;
    std::optional<target::Backups> backups;
    for (const target::FileStatus& f : status.files) {
        if (f.drift == target::Drift::none)
            continue;
        DriftDiff d{f.file.path, f.drift, "", ""};
        std::optional<core::FileState> written;
        std::string how;
        for (const core::Plan& plan : candidates.plans)
            for (const core::FileChange& change : plan.changes)
                if (!written && change.path == f.file.path &&
                    recorded_sha(change.next) == f.file.sha256) {
                    written = change.next;
                    how = "rebuilt by planning the applied profile again";
                }
        if (!written && f.file.cmdline && !f.file.created) {
            if (!backups) {
                auto archive = root.read(target::k_backup_file, fs::caps::k_backup);
                backups = archive ? target::read_backup_archive(archive->content,
                                                                root.shown(target::k_backup_file))
                                  : target::Backups{};
            }
            auto original = backups->find(f.file.path);
            if (original != backups->end())
                if (auto merged = merged_cmdline(*f.file.cmdline, original->second);
                    merged && recorded_sha(*merged) == f.file.sha256) {
                    written = std::move(merged);
                    how = "rebuilt from its original (backup.tar) and rtprov's recorded part";
                }
        }
        if (!written) {
            d.note = std::string(f.drift == target::Drift::missing ? "missing" : "changed") +
                     "; rtprov keeps no copy of what it wrote, only its sha256 (" + f.file.sha256 +
                     ")" +
                     (candidates.replan_problem.empty()
                          ? ""
                          : ", and could not rebuild it: " + candidates.replan_problem);
            out.push_back(std::move(d));
            continue;
        }
        auto now = root.read_entry(f.file.path, fs::caps::k_managed);
        d.diff = core::unified_diff(diff_text(*written),
                                    now ? std::optional(diff_text(*now)) : std::nullopt,
                                    f.file.path + " (as rtprov wrote it)", f.file.path + " (now)");
        d.note = how + "; its sha256 is the one recorded";
        if (d.diff.empty()) // same bytes, other mode or owner
            d.note += "; the content is the same (mode or owner changed?)";
        out.push_back(std::move(d));
    }
    return out;
}

WrittenCandidates replan_applied(const fs::Root& root, const target::State& state, bool live,
                                 const std::string& apps) {
    WrittenCandidates out;
    try {
        auto applied = root.read(core::k_applied_profile_path, fs::caps::k_config);
        if (!applied) {
            out.replan_problem =
                "the applied profile " + std::string(core::k_applied_profile_path) + " is gone";
            return out;
        }
        // The file carries rtprov's header; what the state's SHA-256 covers is the
        // resolved profile itself, which parsing and writing it back gives again.
        const ManagedFileSha recorded = recorded_profile_sha(state);
        const std::string label = root.shown(core::k_applied_profile_path);
        core::Profile profile;
        std::string profile_yaml;
        if (recorded && core::sha256_hex(applied->content) == *recorded) {
            profile = profile::parse_profile(applied->content, label);
            profile_yaml = profile::to_yaml(profile);
        }
        if (profile_yaml.empty() || core::sha256_hex(profile_yaml) != state.profile_sha256) {
            out.replan_problem = "the applied profile " +
                                 std::string(core::k_applied_profile_path) +
                                 " is not the one the state recorded";
            return out;
        }
        core::TargetFacts facts =
            probe(root, profile, live ? core::TargetMode::live : core::TargetMode::offline);
        facts.previous_owned_keys = boot::owned_keys(profile);
        const std::vector<core::AppKnowledge> known = profile::load_apps(apps);
        for (core::Regenerate mode :
             {core::Regenerate::first_boot, core::Regenerate::now, core::Regenerate::never}) {
            core::PlanOptions options;
            options.regenerate = mode;
            out.plans.push_back(planner::plan(profile, profile_yaml, facts, options, known));
        }
    } catch (const Error& e) {
        out.replan_problem = e.what();
    }
    return out;
}

} // namespace rtprov::pipeline
