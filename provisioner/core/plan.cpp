#include "provisioner/core/plan.hpp"

#include <algorithm>

namespace rtprov::core {

bool Plan::refused() const {
    return std::any_of(findings.begin(), findings.end(),
                       [](const Finding& f) { return f.severity == Severity::error; });
}

std::vector<std::string> managed_paths(const Profile&) {
    return {k_applied_profile_path};
}

std::string owned_file_header(const std::string& profile_name) {
    return "# Written by rtprov from profile '" + profile_name +
           "'. Do not edit; change the profile and run rtprov.\n";
}

std::string to_string(Severity severity) {
    switch (severity) {
    case Severity::info:
        return "info";
    case Severity::warning:
        return "warning";
    case Severity::error:
        return "error";
    }
    return "?";
}

namespace {

void add_file(Plan& plan, const TargetFacts& facts, const std::string& path, FileState next,
              std::string reason) {
    auto current = facts.files.find(path);
    std::optional<FileState> old;
    if (current != facts.files.end()) {
        old = current->second;
        // A file rtprov edits keeps its owner and mode (STYLE: keep mode and owner).
        next.mode = old->mode;
        next.uid = old->uid;
        next.gid = old->gid;
        if (old->same_as(next)) {
            plan.unchanged.push_back(path);
            return;
        }
    }
    plan.changes.push_back({path, std::move(old), std::move(next), std::move(reason)});
}

void plan_cores(Plan& plan, const Profile& profile, const TargetFacts& facts) {
    for (const ProfileProblem& problem : validate(profile, facts.cpu_count))
        plan.findings.push_back({Severity::error, "profile-invalid",
                                 problem.origin.to_string() + ": " + problem.message});
    auto cores = resolve_cores(profile, facts.cpu_count);
    if (!cores) {
        plan.findings.push_back(
            {Severity::info, "cores-auto",
             "core layout is 'auto' and the CPU count is not known offline; it is resolved on "
             "the running machine at first boot (or give it: --set board.cpus=N)"});
        return;
    }
    if (cores->reserved.empty())
        plan.findings.push_back({Severity::warning, "no-reserved-core",
                                 "no core is reserved; the audio services share every core "
                                 "with the rest of the system"});
}

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
    std::string ids;
    for (const std::string& id : wanted)
        ids += (ids.empty() ? "'" : ", '") + id + "'";
    plan.findings.push_back({Severity::warning, "os-mismatch",
                             "profile '" + profile.name + "' is made for " + ids +
                                 " but the target is '" + facts.os->id +
                                 "'; check --profile and --root"});
}

} // namespace

Plan plan(const Profile& profile, const std::string& profile_yaml, const TargetFacts& facts) {
    Plan result;
    plan_os(result, profile, facts);
    plan_cores(result, profile, facts);
    FileState applied_profile;
    applied_profile.content = owned_file_header(profile.name) + profile_yaml;
    add_file(result, facts, k_applied_profile_path, std::move(applied_profile),
             "the resolved profile, read by first boot, audit and self-test");
    return result;
}

} // namespace rtprov::core
