#pragma once

#include "provisioner/core/file_state.hpp"
#include "provisioner/core/profile.hpp"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace rtprov::core {

enum class Severity { info, warning, error };

// Something the plan wants the user to know: a skipped setting and why, a risk, or a
// refusal (error) that stops apply.
struct Finding {
    Severity severity = Severity::info;
    std::string code;    // stable identifier for machines, e.g. "cores-auto"
    std::string message; // the reason and what was done instead, or what to do
    friend bool operator==(const Finding&, const Finding&) = default;
};

// What the target's os-release says (ID, ID_LIKE, VERSION_ID, PRETTY_NAME).
struct OsRelease {
    std::string id;
    std::vector<std::string> id_like;
    std::string version_id;
    std::string pretty_name;
};

enum class TargetMode { offline, live };

// Everything plan() knows about the target, read beforehand by target::probe().
struct TargetFacts {
    TargetMode mode = TargetMode::offline;
    std::optional<OsRelease> os;
    std::optional<unsigned> cpu_count; // the running machine's, live mode only
    // Current state of every path in managed_paths(profile); absent when missing.
    std::map<std::string, FileState> files;
};

// One file to create or replace. 'old' is what is there now (nullopt: nothing).
struct FileChange {
    std::string path; // absolute, inside the target root
    std::optional<FileState> old;
    FileState next;
    std::string reason;
};

struct Plan {
    std::vector<FileChange> changes;    // in the order apply performs them
    std::vector<std::string> unchanged; // managed paths already as planned
    std::vector<Finding> findings;

    bool refused() const;
};

// The paths plan() may write for 'profile'; target::probe() reads their current state.
std::vector<std::string> managed_paths(const Profile& profile);

// Path of the resolved profile that first boot and audit read.
inline constexpr const char* k_applied_profile_path = "/etc/rtprov/profile.yaml";

// Decides every change for 'profile' on a target described by 'facts'. 'profile_yaml' is
// the resolved profile as text (profile::to_yaml), written to k_applied_profile_path.
// Pure: no I/O; the same inputs give the same plan.
Plan plan(const Profile& profile, const std::string& profile_yaml, const TargetFacts& facts);

// The first line of every file rtprov owns, in the comment syntax '#'.
std::string owned_file_header(const std::string& profile_name);

std::string to_string(Severity severity);

} // namespace rtprov::core
