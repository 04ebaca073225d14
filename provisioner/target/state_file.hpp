// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/core/plan.hpp"

#include <optional>
#include <string>
#include <vector>

namespace rtprov::target {

// What rtprov did to a target, kept in <root>/var/lib/rtprov/state: enough to tell
// which profile is applied, to find drift, and to roll every change back.
struct ManagedFile {
    std::string path;
    bool created = false;        // true: did not exist before rtprov; rollback removes it
    std::string sha256;          // content rtprov wrote last
    std::string original_sha256; // content before rtprov (changed files only; in backup.tar)
    // While an apply is under way: what rtprov wrote in the apply before, which the file
    // may still hold if that apply is interrupted. Empty otherwise.
    std::string previous_sha256;
    // Written by a command rtprov ran (update-grub's grub.cfg), not by rtprov itself.
    // 'sha256' is what the command left ("" until it finished). Rollback restores the
    // original only while the file is still what the command left; otherwise (a kernel
    // update regenerated it since), and for a file the command created that an installed
    // boot loader reads (boot::readers_of), it runs the command again.
    bool generated = false;
    // Changed after apply by design (core::Plan::runtime: GRUB's environment block during
    // a trial): rollback puts the original back (keeping variables others set since,
    // boot::grub_env_rolled_back), status calls nothing
    // it holds drift. Only the paths boot::is_runtime_path names may carry it.
    bool runtime = false;
    // A command-line file rtprov edits token by token: its keys and its part of the file,
    // so that rollback keeps what others changed since and status tells the two apart.
    std::optional<core::CmdlineEdit> cmdline;

    // True when 'sha' (nullopt: no file) is a content rtprov put there or kept there.
    bool is_ours(const std::optional<std::string>& sha) const;
    friend bool operator==(const ManagedFile&, const ManagedFile&) = default;
};

// applying: an apply is (or was, when killed) under way; applied: it finished;
// rolling_back: a rollback began changing files (a killed one resumes).
enum class ApplyStatus { applying, applied, rolling_back };

struct State {
    ApplyStatus status = ApplyStatus::applying;
    std::string profile;
    std::string profile_sha256;
    std::string applied_at; // UTC, ISO 8601
    // The boot loader of the applied profile ('grub'): the commands rollback may run are
    // the ones rtprov plans for it. "" in states from before rtprov recorded it.
    std::string loader;
    bool state_dir_created = false;
    std::vector<std::string> created_dirs; // parents first
    std::vector<ManagedFile> files;        // in the order they were first written
    // Commands (argv) planned by the last apply that have not succeeded yet.
    std::vector<std::vector<std::string>> pending;
    // Commands that regenerated boot configuration; rollback runs them again.
    std::vector<std::vector<std::string>> ran;
    // Commands whose output files are recorded as 'generated'; rollback runs them again
    // only when it cannot put those files back as they were.
    std::vector<std::vector<std::string>> made;

    const ManagedFile* find(const std::string& path) const;
    friend bool operator==(const State&, const State&) = default;
};

inline constexpr const char* k_state_dir = "/var/lib/rtprov";
inline constexpr const char* k_state_file = "/var/lib/rtprov/state";
inline constexpr const char* k_backup_file = "/var/lib/rtprov/backup.tar";

// The state as text: a line per fact, then a checksum line over all of them, so that a
// damaged or hand-edited file is recognised instead of trusted.
std::string serialize_state(const State& state);

// Parses serialize_state() output. 'label' (the file's path) names the file in errors.
// Throws rtprov::Error saying the file is foreign, from a newer rtprov, or damaged, with
// the line, and what to do.
State parse_state(const std::string& text, const std::string& label);

} // namespace rtprov::target
