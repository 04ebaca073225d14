// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/core/plan.hpp"
#include "provisioner/fs/root.hpp"
#include "provisioner/fs/root_lock.hpp"
#include "provisioner/target/state_file.hpp"

#include <functional>
#include <optional>
#include <string>
#include <vector>

// Applying a plan so that it can always be undone, and undoing it. The protocol, and
// why an apply killed at any point converges, is described in docs/design/journal.md.
namespace rtprov::target {

// Reads <root>/var/lib/rtprov/state. nullopt when rtprov never applied anything here.
// Throws rtprov::Error for a damaged or foreign state file.
std::optional<State> read_state(const fs::Root& root);

struct ApplyInfo {
    std::string profile;
    std::string profile_sha256;
    std::string applied_at; // UTC, ISO 8601
    std::string loader;     // core::to_string(profile.board.boot.loader)
};

struct ApplyResult {
    std::vector<std::string> written; // paths, in order
    std::vector<std::string> retired; // no longer wanted: removed or restored
    std::vector<std::string> ran;     // commands, as text
    // commands an earlier apply left pending, now left to first boot
    // (core::Plan::recorded_for_first_boot), as text
    std::vector<std::string> recorded;
    bool nothing_to_do = false; // the target already matched the plan
    int stale_temporaries_removed = 0;
};

// Runs a command in the target and returns its exit status (target::run_in_root, or a
// fake in tests).
using CommandRunner = std::function<int(const std::vector<std::string>& argv)>;

// Carries out 'plan' on 'root': originals into the backup archive, the state marked
// 'applying', every file written atomically, the state marked 'applied' with the
// checksums written and the plan's commands pending, then each command, recorded as
// done when it succeeds. Throws rtprov::Error when the plan is refused, a write fails
// or a command fails; what was done so far stays recorded, so 'rtprov rollback' or a
// new apply converges (a failed command stays pending: the next plan runs it, or records a
// boot regeneration for first boot, which takes it off the list). 'lock' is
// the proof that this run is the root's one writer: temporaries of a killed run are
// swept only under it. 'before_writes', when given, runs once the state records the
// apply and before its first file is written (not when there is nothing to do): apply
// --trial records its trial there, so no kill leaves a trial armed that nothing records.
ApplyResult apply_plan(fs::Root& root, const fs::RootLock& lock, const core::Plan& plan,
                       const ApplyInfo& info, const CommandRunner& run = {},
                       const std::function<void()>& before_writes = {});

// Files rtprov wrote in an earlier apply that 'plan' no longer wants (a service or a
// feature left the profile). apply_plan() removes those it created and restores those
// it changed; plan shows them.
std::vector<ManagedFile> stale_entries(const fs::Root& root, const State& state,
                                       const core::Plan& plan);

// Whether apply_plan() (with 'plan') or rollback() would leave every file of 'root' as it
// is: read-only, so that a disk image is not opened for writing only to find that out.
// When unsure (a killed run's traces), false.
bool apply_changes_nothing(const fs::Root& root, const core::Plan& plan);
bool rollback_changes_nothing(const fs::Root& root);

enum class DriftPolicy { refuse, overwrite };

// What would make apply_plan() with 'plan', or rollback(), refuse (a state not this
// root's or forged, a hand edit it would lose, a missing original), checked read-only:
// they check it again themselves, but a disk image is opened for writing only when they
// would not refuse, so a refusal changes no byte of it. Throws Error as they do.
void check_apply(const fs::Root& root, const core::Plan& plan);
void check_rollback(const fs::Root& root, DriftPolicy drift);
// check_rollback's refusal as text, "" when rollback would not refuse.
std::string rollback_refusal(const fs::Root& root, DriftPolicy drift);

struct RollbackResult {
    std::vector<std::string> restored;  // changed files put back
    std::vector<std::string> removed;   // created files and folders removed
    std::vector<std::string> kept_dirs; // created folders left because they are not empty
    std::vector<std::string> ran;       // regeneration commands run again, as text
    std::vector<std::string> not_run;   // those that were not (no runner given)
    // Command-line files restored with others' edits since kept: path, and what they did.
    std::vector<std::pair<std::string, std::string>> kept_edits;
    bool nothing_to_do = false; // no state: nothing was applied here
};

// Puts every file rtprov changed back to its original bytes, mode and owner, removes
// what it created, runs the boot regeneration commands of the apply again with 'run'
// (when given), then removes its own state. Files changed by hand since rtprov wrote
// them are refused (rtprov::Error naming them) unless 'drift' is overwrite. A failing
// command stops the rollback with the state kept, so it can run again.
RollbackResult rollback(fs::Root& root, const fs::RootLock& lock, DriftPolicy drift,
                        const CommandRunner& run = {});

// "update-grub", "kernel-install add 6.12 /boot/vmlinuz-6.12": argv as one line.
std::string command_text(const std::vector<std::string>& argv);

// none: as rtprov left it. foreign_edit: a command-line file whose rtprov part is as
// rtprov left it while others changed other tokens (rollback keeps their edits).
// modified: changed by hand where rtprov wrote. missing: gone.
enum class Drift { none, foreign_edit, modified, missing };

struct FileStatus {
    ManagedFile file;
    Drift drift = Drift::none;
    std::string detail; // foreign edits ("took out 'root=ROOTDEV', put in ..."), or how
                        // rtprov's part changed
};

struct Status {
    std::optional<State> state;
    std::vector<FileStatus> files;
    std::string foreign; // why the state does not belong to this root; "" when it does
    // Why rollback, and rollback with --force, would refuse (rollback_refusal); "" when it
    // would not. Filled by who needs them (status --json): they read the backup archive.
    std::string rollback_refused;
    std::string rollback_force_refused;
};

// What is applied and which managed files changed since (checksums).
Status read_status(const fs::Root& root);

// Refuses a root that is not an installed system's root (no /etc or /var/lib), with a
// message that says which folder to pass instead.
void check_is_system_root(const fs::Root& root);

} // namespace rtprov::target
