// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/core/plan.hpp"
#include "provisioner/fs/root.hpp"
#include "provisioner/target/journal.hpp"

#include <string>
#include <vector>

// 'rtprov status --diff': what was changed by hand since rtprov wrote a file. The state
// keeps only the SHA-256 of what rtprov wrote (and backup.tar the original), so what it
// wrote is rebuilt and used only when its SHA-256 is the recorded one: a diff is exact
// or not shown.
namespace rtprov::pipeline {

struct DriftDiff {
    std::string path;
    target::Drift drift = target::Drift::none;
    // A unified diff from what rtprov wrote to what the file holds now; "" when what
    // rtprov wrote could not be rebuilt (then 'note' says so).
    std::string diff;
    std::string note; // how what rtprov wrote was rebuilt, or why it could not be
};

// The contents rtprov may have written, to be told apart by their SHA-256: each
// FileChange's 'next' of 'plans' (the applied profile planned again), and, for a
// command-line file, its original (backup.tar) with rtprov's recorded part merged in.
struct WrittenCandidates {
    std::vector<core::Plan> plans;
    std::string replan_problem; // why the applied profile could not be planned again
};

// For every file of 'status' not as rtprov wrote it (drift other than none): the diff,
// when one candidate holds the recorded SHA-256. Reads the current files and backup.tar
// through 'root'; writes nothing. Throws rtprov::Error when backup.tar is damaged.
std::vector<DriftDiff> drift_diffs(const fs::Root& root, const target::Status& status,
                                   const WrittenCandidates& candidates);

// Plans the applied profile (/etc/rtprov/profile.yaml of 'root', when its SHA-256 is
// the one the state recorded) again on 'root', read-only, once for each way of
// regenerating boot files. 'apps' is rtprov's app knowledge folder. Never throws for
// what it cannot do: 'replan_problem' says what.
WrittenCandidates replan_applied(const fs::Root& root, const target::State& state, bool live,
                                 const std::string& apps);

} // namespace rtprov::pipeline
