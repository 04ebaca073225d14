// SPDX-License-Identifier: Apache-2.0
#include "provisioner/core/plan.hpp"

#include "provisioner/core/sha256.hpp"

#include <algorithm>
#include <stdexcept>

namespace rtprov::core {

bool Plan::refused() const {
    return std::any_of(findings.begin(), findings.end(),
                       [](const Finding& f) { return f.severity == Severity::error; });
}

bool TargetFacts::has_executable(const std::string& path) const {
    return std::find(executables.begin(), executables.end(), path) != executables.end();
}

const FileState* TargetFacts::file(const std::string& path) const {
    if (auto it = files.find(path); it != files.end())
        return &it->second;
    if (probed && !probed->count(path))
        throw std::logic_error("rtprov planned with '" + path +
                               "', which target::probe did not read (a bug in rtprov: the "
                               "probe must read every path a planner reads)");
    return nullptr;
}

std::vector<std::string> TargetFacts::listing(const std::string& dir) const {
    if (auto it = listings.find(dir); it != listings.end())
        return it->second;
    if (probed && !probed->count(dir))
        throw std::logic_error("rtprov planned with the folder '" + dir +
                               "', which target::probe did not list (a bug in rtprov: the "
                               "probe must list every folder a planner lists)");
    return {};
}

void TargetFacts::record(const std::string& path, std::optional<FileState> state) {
    if (!probed)
        probed.emplace();
    probed->insert(path);
    if (state)
        files[path] = std::move(*state);
    else
        files.erase(path);
}

std::optional<std::string> TargetFacts::original_content(const std::string& path) const {
    if (auto original = originals.find(path); original != originals.end())
        return original->second;
    if (const FileState* current = file(path))
        return current->content;
    return std::nullopt;
}

std::string owned_file_header(const std::string& profile_name) {
    return k_owned_header_start + profile_name +
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

void add_file_change(Plan& plan, const TargetFacts& facts, const std::string& path, FileState next,
                     std::string reason) {
    const FileState* current = facts.file(path);
    std::optional<FileState> old;
    if (current) {
        old = *current;
        // A file rtprov replaces keeps its owner and mode (STYLE: keep mode and owner).
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

std::string trial_id_of(const std::string& profile_yaml) {
    return sha256_hex(profile_yaml).substr(0, 12);
}

unsigned health_timeout_s(const SelftestThresholds& limits) {
    const unsigned run = std::min(limits.duration_s, k_health_selftest_max_s);
    return run * (limits.audio ? 2 : 1) + 120;
}

} // namespace rtprov::core
