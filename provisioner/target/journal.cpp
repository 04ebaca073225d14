// SPDX-License-Identifier: Apache-2.0
#include "provisioner/target/journal.hpp"

#include "provisioner/boot/boot_plan.hpp"
#include "provisioner/boot/cmdline.hpp"
#include "provisioner/boot/loader.hpp"
#include "provisioner/core/error.hpp"
#include "provisioner/core/sha256.hpp"
#include "provisioner/core/text.hpp"
#include "provisioner/systemd/units.hpp"
#include "provisioner/target/backup_archive.hpp"

#include <algorithm>
#include <functional>
#include <set>

namespace rtprov::target {

namespace {

constexpr unsigned k_private_mode = 0600; // backups may hold anything the target holds

// Where the units rtprov's enable links point to live (systemd::plan_systemd).
constexpr const char* k_owned_unit_prefix = "/etc/systemd/system/rtprov";

// Whether a link's target is a unit rtprov enables: one of its own, or the first-boot unit
// its package ships, where systemctl finds it (systemd::plan_firstboot).
bool links_to_rtprov_unit(const std::string& target) {
    if (target.rfind(k_owned_unit_prefix, 0) == 0)
        return true;
    for (const char* dir : systemd::k_unit_search_dirs)
        if (target == std::string(dir) + "/" + core::k_firstboot_unit)
            return true;
    return false;
}

core::FileState private_file(std::string content) {
    core::FileState state;
    state.content = std::move(content);
    state.mode = k_private_mode;
    return state;
}

// Temporaries left by a killed run sit next to the files it was writing.
std::set<std::string> temporary_dirs(const fs::Root& root, const std::vector<std::string>& paths) {
    std::set<std::string> dirs = {"/var/lib", k_state_dir};
    for (const std::string& path : paths)
        dirs.insert(fs::split_parent(root.resolve(path)).first);
    std::erase_if(dirs, [&](const std::string& dir) { return !root.is_directory(dir); });
    return dirs;
}

int remove_stale_temporaries(fs::Root& root, const std::vector<std::string>& paths) {
    int removed = 0;
    for (const std::string& dir : temporary_dirs(root, paths))
        removed += root.remove_stale_temporaries(dir);
    return removed;
}

bool has_stale_temporaries(const fs::Root& root, const std::vector<std::string>& paths) {
    for (const std::string& dir : temporary_dirs(root, paths))
        for (const std::string& name : root.list(dir))
            if (name.starts_with(fs::Root::k_temp_prefix))
                return true;
    return false;
}

// Checksum of a file's bytes, or of a symlink's target (marked, so a file holding the
// target's text does not match).
std::string state_sha(const core::FileState& state) {
    return core::sha256_hex(state.symlink ? "symlink -> " + state.content : state.content);
}

std::optional<std::string> current_sha(const fs::Root& root, const std::string& path) {
    auto entry = root.read_entry(path, fs::caps::k_managed);
    if (!entry)
        return std::nullopt;
    return state_sha(*entry);
}

// Where a managed path lives: a symlink rtprov makes is the entry itself; a file is
// written where its path leads, through links on the way.
std::string managed_path(const fs::Root& root, const std::string& path, bool symlink) {
    return symlink ? root.resolve_parent(path) : root.resolve(path);
}

// Where the managed entry of 'path', which a plan leaves unchanged, lives: a symlink on
// disk is the entry itself where rtprov made the link ('state' names it), else the file it
// leads to, which rtprov wrote through it (a Debian Pi's /etc/default/raspi-extra-cmdline
// linked elsewhere).
std::string unchanged_path(const fs::Root& root, const State& state, const std::string& path) {
    auto entry = root.read_entry(path, fs::caps::k_managed);
    const bool symlink = entry && entry->symlink;
    std::string link = managed_path(root, path, symlink);
    if (!symlink || std::any_of(state.files.begin(), state.files.end(),
                                [&](const ManagedFile& f) { return f.path == link; }))
        return link;
    core::Result<std::string> target = root.try_resolve(path);
    return target ? std::move(*target.value) : link;
}

void write_state(fs::Root& root, const State& state) {
    root.write(k_state_file, private_file(serialize_state(state)));
}

Backups read_backups(const fs::Root& root) {
    auto archive = root.read(k_backup_file, fs::caps::k_backup);
    return archive ? read_backup_archive(archive->content, root.shown(k_backup_file)) : Backups{};
}

boot::CmdlineScope scope_of(const core::CmdlineEdit& edit) {
    return edit.first_line_only ? boot::CmdlineScope::first_line : boot::CmdlineScope::whole_text;
}

// The tokens as 'status' shows them, each on one line (quoted(): a quoted value of a
// whole-text command line such as /etc/kernel/cmdline may hold a line break).
std::string joined(const std::vector<std::string>& tokens) {
    std::string out;
    for (const std::string& token : tokens)
        out += (out.empty() ? "" : " ") + quoted(token);
    return out.empty() ? "nothing" : out;
}

// What a managed file holds now, judged against the state. 'backups' are read when a
// command-line file needs its original.
struct FileCheck {
    Drift drift = Drift::none;
    bool holds_ours = false; // exactly what rtprov wrote, or its part of a command line
    std::string detail;      // foreign edits, or how rtprov's part changed
    bool lossless = false;   // rolling it back loses nothing (it holds its original, or
                             // a file rtprov created is gone)
    bool marked = false;     // it carries rtprov's mark (a file rtprov owns, or a link to one)
    bool exists = false;
    bool unreadable = false;                // nothing rtprov can read or replace (why: detail)
    std::optional<core::FileState> current; // kept for command-line files only
};

// rtprov's header on the first line, or on the second: a script grub-mkconfig runs starts
// with its '#!' line, and the firmware reads a command line's first line only.
bool carries_mark(const std::string& content) {
    if (content.rfind(core::k_owned_header_start, 0) == 0)
        return true;
    std::size_t second = content.find('\n');
    return second != std::string::npos &&
           content.compare(second + 1, std::string(core::k_owned_header_start).size(),
                           core::k_owned_header_start) == 0;
}

FileCheck judge_file(const fs::Root& root, const State& state, const ManagedFile& file,
                     const std::function<const Backups&()>& backups) {
    FileCheck check;
    core::Result<core::FileState> entry = root.try_read_entry(file.path, fs::caps::k_managed);
    if (!entry && !entry.absent) {
        // Nothing rtprov could have written (a folder, a FIFO, too large) or unreadable:
        // drift, and why, so that status reports it; rollback refuses it even with --force
        // (it could neither read nor replace it half way through).
        check.exists = true;
        check.drift = Drift::modified;
        check.detail = std::move(entry.problem);
        check.unreadable = true;
        return check;
    }
    check.current = std::move(entry.value);
    auto sha = check.current ? std::optional(state_sha(*check.current)) : std::nullopt;
    check.exists = check.current.has_value();
    if (check.current)
        check.marked = check.current->symlink ? links_to_rtprov_unit(check.current->content)
                                              : carries_mark(check.current->content);

    check.holds_ours = sha && *sha == file.sha256;
    if (file.runtime) {
        // Others write it by design: whatever it holds goes back to its original.
        check.drift = Drift::none;
        check.lossless = true;
        return check;
    }
    // Under way (or killed): a file may hold what came before, too.
    const bool applying = state.status != ApplyStatus::applied;
    // A command's output is the command's: rollback restores or regenerates it.
    if (check.holds_ours || file.generated || (applying && file.is_ours(sha))) {
        check.drift = Drift::none;
        return check;
    }
    if (!sha) {
        check.drift = Drift::missing;
        check.lossless = file.created;
        return check;
    }
    if (!file.created && *sha == file.original_sha256) {
        check.drift = Drift::modified;
        check.detail = "it holds its original again";
        check.lossless = true;
        return check;
    }
    if (file.cmdline && !file.created && !check.current->symlink) {
        const core::CmdlineEdit& edit = *file.cmdline;
        boot::CmdlineText text = boot::parse_cmdline_text(check.current->content, scope_of(edit));
        auto now = text.tokens;
        std::vector<std::string> part = boot::owned_part(now, edit.owned_keys);
        if (text.unclosed_quote || check.current->content.find('\0') != std::string::npos) {
            // The kernel no longer sees what follows (a NUL ends the command line; an
            // unclosed quote makes it one value), and token by token is no longer safe.
            check.drift = Drift::modified;
            check.detail = text.unclosed_quote ? "it has a '\"' that is never closed"
                                               : "it has a NUL byte, where the command line ends";
            return check;
        }
        if (part == edit.part) {
            check.holds_ours = true;
            check.drift = Drift::foreign_edit;
            auto original = backups().find(file.path);
            if (original != backups().end()) {
                auto before =
                    boot::parse_cmdline_text(original->second.content, scope_of(edit)).tokens;
                boot::ForeignEdits edits = boot::foreign_edits(before, now, edit.owned_keys);
                if (!edits.removed.empty())
                    check.detail += "took out " + joined(edits.removed);
                if (!edits.added.empty())
                    check.detail += std::string(check.detail.empty() ? "" : ", ") + "put in " +
                                    joined(edits.added);
            }
            if (check.detail.empty())
                check.detail = "changed spacing or lines rtprov does not edit";
            return check;
        }
        check.detail =
            "rtprov's parameters are " + joined(part) + " instead of " + joined(edit.part);
    }
    check.drift = Drift::modified;
    return check;
}

FileCheck check_file(const fs::Root& root, const State& state, const ManagedFile& file,
                     const std::function<const Backups&()>& backups) {
    FileCheck check = judge_file(root, state, file, backups);
    // Only a command-line file's text is needed later: a state listing many large files
    // must not hold them all at once.
    if (!file.cmdline)
        check.current.reset();
    return check;
}

// A state is this root's when at least one file it lists holds what rtprov wrote there.
// A state copied from another root, or written for a root that never had these files,
// matches none: acting on it would restore another machine's originals, or report a
// rollback that restored nothing.
void refuse_foreign(const fs::Root& root, const State& state,
                    const std::vector<FileCheck>& checks) {
    if (state.status != ApplyStatus::applied)
        return;
    std::size_t written = 0, holding = 0;
    for (std::size_t i = 0; i < state.files.size(); ++i) {
        if (state.files[i].generated)
            continue;
        ++written;
        holding += checks[i].holds_ours ? 1 : 0;
    }
    if (written == 0 || holding > 0)
        return;
    throw Error(root.shown(k_state_file) + " does not belong to this root: it lists " +
                std::to_string(written) + (written == 1 ? " file" : " files") +
                " rtprov wrote, and none of them holds what rtprov wrote there (was the state "
                "copied from another image?). Nothing was changed; if rtprov never applied "
                "anything here, move " +
                quoted(root.shown(k_state_dir)) +
                " away; if it did, restore the image from a copy");
}

// A file rtprov created carries its mark: the header of every file it owns, or, for an
// enable link, a target among rtprov's units. One holding exactly what the state says
// rtprov wrote, yet without the mark, was never rtprov's: the checksum was made for it
// (a created file edited by hand is drift instead). No --force makes rtprov remove it.
void refuse_unmarked(const fs::Root& root, const State& state,
                     const std::vector<FileCheck>& checks) {
    for (std::size_t i = 0; i < state.files.size(); ++i) {
        const ManagedFile& file = state.files[i];
        if (!file.created || file.generated || file.runtime || !checks[i].holds_ours ||
            checks[i].marked)
            continue;
        throw Error(root.shown(k_state_file) + " lists " + quoted(root.shown(file.path)) +
                    " as a file rtprov created, but it does not carry rtprov's mark, so rtprov "
                    "did not write it: the state file was forged or damaged. Nothing was "
                    "changed; restore the image from a copy, or move " +
                    quoted(root.shown(k_state_dir)) +
                    " away if rtprov never applied anything here");
    }
}

std::vector<FileCheck> check_files(const fs::Root& root, const State& state,
                                   const std::function<const Backups&()>& backups) {
    std::vector<FileCheck> checks;
    for (const ManagedFile& file : state.files)
        checks.push_back(check_file(root, state, file, backups));
    return checks;
}

// The archive, read once on first use.
std::function<const Backups&()> lazy_backups(const fs::Root& root, std::optional<Backups>& cache) {
    return [&root, &cache]() -> const Backups& {
        if (!cache)
            cache = read_backups(root);
        return *cache;
    };
}

} // namespace

std::vector<ManagedFile> stale_entries(const fs::Root& root, const State& state,
                                       const core::Plan& plan) {
    std::set<std::string> wanted;
    for (const core::FileChange& change : plan.changes)
        wanted.insert(managed_path(root, change.path, change.next.symlink));
    for (const std::vector<std::string>* paths : {&plan.unchanged, &plan.kept})
        for (const std::string& path : *paths)
            wanted.insert(unchanged_path(root, state, path));
    std::vector<ManagedFile> stale;
    for (const ManagedFile& file : state.files)
        if (!file.generated && !wanted.count(file.path))
            stale.push_back(file);
    return stale;
}

void check_is_system_root(const fs::Root& root) {
    for (const char* dir : {"/etc", "/var/lib"})
        if (!root.is_directory(dir))
            throw Error("target root " + quoted(root.name()) + " has no " + quoted(dir) +
                        ", so it is not the root of an installed system; pass the folder that "
                        "holds etc/, usr/ and var/ (in a pi-gen stage: \"${ROOTFS_DIR}\")");
}

std::optional<State> read_state(const fs::Root& root) {
    // rtprov writes its state as a regular file: a link there (dangling or not) is not
    // "nothing applied"
    auto file = root.read_entry(k_state_file, fs::caps::k_state);
    if (!file)
        return std::nullopt;
    if (file->symlink)
        throw Error(quoted(root.shown(k_state_file)) +
                    " is a symbolic link, which rtprov never writes: the state was forged or "
                    "damaged, and nothing was run or changed; move " +
                    quoted(root.shown(k_state_dir)) +
                    " away if rtprov never applied anything here");
    State state = parse_state(file->content, root.shown(k_state_file));
    // Its checksum proves only that the file is whole: anyone who can write it can make
    // it match. So what it could make rtprov do is checked against what rtprov itself
    // does: the commands it names are the ones plan_boot makes for its boot loader (a
    // state from before rtprov recorded the loader names it by its commands), and the
    // files a command generates are that command's outputs.
    const std::string forged = ": the state file was forged or damaged, and nothing was run "
                               "or changed; restore the image from a copy, or move " +
                               quoted(root.shown(k_state_dir)) +
                               " away if rtprov never applied anything here";
    std::string loader = state.loader;
    if (loader.empty())
        for (const auto* list : {&state.pending, &state.ran, &state.made})
            for (const auto& argv : *list)
                if (loader.empty())
                    loader = boot::loader_of(argv);
    std::set<std::string> outputs;
    for (const auto* list : {&state.pending, &state.ran, &state.made})
        for (const auto& argv : *list) {
            boot::CommandUse use =
                list == &state.pending ? boot::CommandUse::pending : boot::CommandUse::rerun;
            if (!boot::is_planned_command(argv, loader, use))
                throw Error(root.shown(k_state_file) + " names the command " +
                            quoted(command_text(argv)) + ", which rtprov never " +
                            (use == boot::CommandUse::pending ? "plans" : "runs again") +
                            (loader.empty() ? "" : " for a " + loader + " system") + forged);
            for (const std::string& path : boot::produces_of(argv))
                outputs.insert(root.resolve(path));
        }
    for (const ManagedFile& f : state.files)
        if (f.runtime && !boot::is_runtime_path(f.path))
            throw Error(root.shown(k_state_file) + " lists " + quoted(f.path) +
                        " as a file others change after apply, which rtprov never plans" + forged);
    for (const ManagedFile& f : state.files)
        if (f.generated && !outputs.count(f.path))
            throw Error(root.shown(k_state_file) + " lists " + quoted(f.path) +
                        " as written by a command, but no command it names writes it" + forged);
    return state;
}

namespace {

// Everything that could stop apply_plan() on a root with a 'previous' state, before its
// first change: the state must be this root's, and a file the profile no longer needs is
// retired only if not changed by hand since. Returns the previous state's file checks.
std::vector<FileCheck> apply_checks(const fs::Root& root, const std::optional<State>& previous,
                                    const core::Plan& plan) {
    if (!previous)
        return {};
    std::optional<Backups> cache;
    std::vector<FileCheck> checks = check_files(root, *previous, lazy_backups(root, cache));
    refuse_foreign(root, *previous, checks);
    refuse_unmarked(root, *previous, checks);
    // Retiring a file removes it or puts its original back: never over a hand edit.
    for (const ManagedFile& file : stale_entries(root, *previous, plan))
        for (std::size_t i = 0; i < previous->files.size(); ++i)
            if (previous->files[i].path == file.path &&
                (checks[i].drift == Drift::modified || checks[i].drift == Drift::missing) &&
                !checks[i].lossless)
                throw Error(quoted(root.shown(file.path)) +
                            ", which the profile no longer needs, was changed by hand since "
                            "rtprov wrote it, and retiring it would lose that change; save it, "
                            "then run 'rtprov rollback --force' on the same target, or restore "
                            "it. Nothing was changed");
    return checks;
}

// Takes the commands 'plan' records for first boot off the pending list of 'state';
// returns those that were on it, as text. One whose output the state records as
// generated (update-grub's grub.cfg, its checksum unknown since it did not finish) stays
// named among the commands that made it: rollback then puts back the original from
// before rtprov, as for any such file still as the command left it.
std::vector<std::string> hand_to_first_boot(State& state, const core::Plan& plan) {
    std::vector<std::string> handed;
    for (const auto& argv : plan.recorded_for_first_boot) {
        if (std::erase(state.pending, argv) == 0)
            continue;
        if (!boot::produces_of(argv).empty() &&
            std::find(state.made.begin(), state.made.end(), argv) == state.made.end())
            state.made.push_back(argv);
        handed.push_back(command_text(argv));
    }
    return handed;
}

} // namespace

bool apply_changes_nothing(const fs::Root& root, const core::Plan& plan) {
    if (!plan.changes.empty() || !plan.commands.empty())
        return false;
    const std::optional<State> state = read_state(root);
    if (!state || state->status != ApplyStatus::applied ||
        !stale_entries(root, *state, plan).empty())
        return false;
    for (const auto& argv : plan.recorded_for_first_boot)
        if (std::find(state->pending.begin(), state->pending.end(), argv) != state->pending.end())
            return false; // taking it off the pending list changes the state
    std::vector<std::string> paths;
    for (const ManagedFile& file : state->files) {
        if (!file.previous_sha256.empty())
            return false; // a run killed after its last write: apply records its end
        paths.push_back(file.path);
    }
    return !has_stale_temporaries(root, paths);
}

bool rollback_changes_nothing(const fs::Root& root) {
    return !read_state(root) && !has_stale_temporaries(root, {});
}

ApplyResult apply_plan(fs::Root& root, const fs::RootLock&, const core::Plan& plan,
                       const ApplyInfo& info, const CommandRunner& run,
                       const std::function<void()>& before_writes) {
    if (plan.refused())
        throw Error("the plan has refusals (see 'rtprov plan'); nothing was written");
    check_is_system_root(root);
    require_backup_library(); // before the first change, not halfway
    ApplyResult result;
    std::optional<State> previous = read_state(root);

    std::vector<std::string> paths;
    for (const core::FileChange& change : plan.changes)
        paths.push_back(change.path);
    // and next to what an earlier apply wrote: a killed retire leaves its temporary there
    for (const ManagedFile& file : previous ? previous->files : std::vector<ManagedFile>{})
        paths.push_back(file.path);
    result.stale_temporaries_removed = remove_stale_temporaries(root, paths);

    const std::vector<FileCheck> previous_checks = apply_checks(root, previous, plan);
    State next = previous.value_or(State{});
    next.profile = info.profile;
    next.profile_sha256 = info.profile_sha256;
    next.applied_at = info.applied_at;
    next.loader = info.loader;
    auto cmdline_edit = [&](const std::string& path) -> std::optional<core::CmdlineEdit> {
        auto it = plan.cmdline_edits.find(path);
        return it == plan.cmdline_edits.end() ? std::nullopt : std::optional(it->second);
    };

    // Files already as planned: what is on disk is what rtprov means to be there. This
    // also settles the checksums a killed apply recorded but never wrote.
    for (const std::string& path : plan.unchanged) {
        std::string resolved = unchanged_path(root, next, path);
        auto file = std::find_if(next.files.begin(), next.files.end(),
                                 [&](const ManagedFile& f) { return f.path == resolved; });
        if (file == next.files.end())
            continue;
        if (auto sha = current_sha(root, resolved))
            file->sha256 = *sha;
        file->previous_sha256.clear();
        file->cmdline = cmdline_edit(path);
        file->runtime = plan.runtime.count(path) > 0;
    }

    const std::vector<ManagedFile> stale =
        previous ? stale_entries(root, *previous, plan) : std::vector<ManagedFile>{};
    if (plan.changes.empty() && plan.commands.empty() && stale.empty()) {
        // A run killed after its last write still has to record that it finished, and
        // a command left to first boot whose record is written already leaves the pending
        // list.
        if (previous) {
            result.recorded = hand_to_first_boot(next, plan);
            if (previous->status == ApplyStatus::applied && result.recorded.empty())
                next.applied_at = previous->applied_at; // nothing was applied now
            next.status = ApplyStatus::applied;
            for (ManagedFile& file : next.files)
                file.previous_sha256.clear();
            if (!(next == *previous))
                write_state(root, next);
        }
        result.nothing_to_do = result.recorded.empty();
        return result;
    }

    // 1. Record every file about to change, and keep its original.
    Backups backups;
    bool new_backups = false;
    if (previous && root.exists(k_backup_file))
        backups = read_backup_archive(root.read(k_backup_file, fs::caps::k_backup)->content,
                                      root.shown(k_backup_file));
    std::vector<std::string> resolved;
    for (const core::FileChange& change : plan.changes) {
        std::string path = managed_path(root, change.path, change.next.symlink);
        resolved.push_back(path);
        for (const std::string& dir : root.missing_directories(fs::split_parent(path).first))
            // The state folder is rtprov's own, recorded by 'state-dir' and removed last.
            if (dir != k_state_dir && std::find(next.created_dirs.begin(), next.created_dirs.end(),
                                                dir) == next.created_dirs.end())
                next.created_dirs.push_back(dir);
        std::string sha = state_sha(change.next);
        auto known = std::find_if(next.files.begin(), next.files.end(),
                                  [&](const ManagedFile& f) { return f.path == path; });
        if (known != next.files.end()) {
            // The original stays the one from before rtprov. Until this apply ends, the
            // file holds what is on disk now (whatever an earlier, maybe killed, apply
            // left there) or the new content.
            known->previous_sha256 = change.old ? state_sha(*change.old) : std::string();
            known->sha256 = sha;
            known->cmdline = cmdline_edit(change.path);
            known->runtime = plan.runtime.count(change.path) > 0;
            continue;
        }
        ManagedFile file{path, !change.old, sha, "", "", false, false, std::nullopt};
        file.cmdline = cmdline_edit(change.path);
        file.runtime = plan.runtime.count(change.path) > 0;
        if (change.old) {
            file.original_sha256 = state_sha(*change.old);
            backups[path] = *change.old;
            new_backups = true;
        }
        next.files.push_back(std::move(file));
    }
    // Entries from an attempt killed before it recorded them are not ours to keep.
    for (auto it = backups.begin(); it != backups.end();) {
        const ManagedFile* file = next.find(it->first);
        it = file && !file->created ? std::next(it) : backups.erase(it);
    }
    next.status = ApplyStatus::applying;
    // Commands are pending from before the first write: a run killed after writing the
    // files that need them still knows they have to run.
    for (const core::Command& command : plan.commands)
        if (std::find(next.pending.begin(), next.pending.end(), command.argv) == next.pending.end())
            next.pending.push_back(command.argv);

    if (!root.exists(k_state_dir)) {
        // The state folder appears whole or not at all: built under a temporary name,
        // then renamed, so a kill leaves no half-made state behind.
        next.state_dir_created = true;
        std::string temp = root.temporary_name("/var/lib");
        root.make_directories(temp);
        if (!backups.empty())
            root.write(temp + "/backup.tar", private_file(write_backup_archive(backups)));
        root.write(temp + "/state", private_file(serialize_state(next)));
        root.rename(temp, k_state_dir);
    } else {
        if (new_backups)
            root.write(k_backup_file, private_file(write_backup_archive(backups)));
        write_state(root, next);
    }
    if (before_writes)
        before_writes();

    // 2. Write every file, each atomically. A failure part way leaves what was written
    // recorded: say so, and how to go on.
    try {
        for (std::size_t i = 0; i < plan.changes.size(); ++i) {
            root.make_directories(fs::split_parent(resolved[i]).first);
            root.write(resolved[i], plan.changes[i].next);
            result.written.push_back(resolved[i]);
        }
    } catch (const Error& e) {
        const std::string written = core::join(result.written, ", ");
        throw Error(std::string(e.what()) + "; " +
                    (written.empty() ? std::string("no file was written yet")
                                     : "already written: " + written) +
                    ", and recorded in " + root.shown(k_state_file) +
                    ": fix the cause and run 'rtprov apply' again to finish, or 'rtprov "
                    "rollback' to undo");
    }

    // 3. Files the profile no longer wants: created ones go, changed ones get their
    // original back; then they leave the state. One that arms a trial (GRUB's environment
    // block) goes back first: the trial is disarmed before the units that judge it go.
    std::vector<ManagedFile> retiring = stale;
    std::stable_partition(retiring.begin(), retiring.end(),
                          [](const ManagedFile& f) { return f.runtime; });
    for (const ManagedFile& file : retiring) {
        if (file.created) {
            root.remove_file(file.path);
        } else if (auto original = backups.find(file.path); original != backups.end()) {
            root.write(file.path, original->second);
            backups.erase(original);
        }
        result.retired.push_back(file.path);
        next.files.erase(std::find(next.files.begin(), next.files.end(), file));
    }
    for (auto dir = next.created_dirs.rbegin(); dir != next.created_dirs.rend();) {
        bool used = std::any_of(next.files.begin(), next.files.end(), [&](const ManagedFile& f) {
            return f.path.rfind(*dir + "/", 0) == 0;
        });
        // (one a killed run removed already is gone from the record too)
        if (!used && !stale.empty() && (!root.exists(*dir) || root.remove_directory(*dir))) {
            dir = decltype(dir)(next.created_dirs.erase(std::next(dir).base()));
            continue;
        }
        ++dir;
    }

    // 4. The files are done; the commands are pending until each succeeds, and those
    // recorded for first boot (written above) are first boot's.
    next.status = ApplyStatus::applied;
    for (ManagedFile& file : next.files)
        file.previous_sha256.clear();
    result.recorded = hand_to_first_boot(next, plan);
    write_state(root, next);

    // 5. Commands: install packages, regenerate boot configuration. What any of them
    // writes is recorded, its original kept, before the first runs: a package's own
    // hooks may already rewrite it (a kernel's postinst runs update-grub).
    bool new_originals = false, new_outputs = false;
    for (const core::Command& command : plan.commands)
        for (const std::string& path : command.produces) {
            std::string output = root.resolve(path);
            auto known = std::find_if(next.files.begin(), next.files.end(),
                                      [&](const ManagedFile& f) { return f.path == output; });
            if (known != next.files.end()) {
                known->sha256.clear(); // unknown until the command finishes
                new_outputs = true;
                continue;
            }
            auto current = root.read_entry(output, fs::caps::k_managed);
            ManagedFile file{output, !current, "", "", "", true, false, std::nullopt};
            if (current) {
                file.original_sha256 = state_sha(*current);
                backups[output] = *current;
                new_originals = true;
            }
            next.files.push_back(std::move(file));
            new_outputs = true;
        }
    if (new_originals)
        root.write(k_backup_file, private_file(write_backup_archive(backups)));
    if (new_outputs)
        write_state(root, next);
    for (const core::Command& command : plan.commands) {
        if (!run)
            throw Error("cannot run " + quoted(command_text(command.argv)) +
                        ": no way to run commands in this target");
        std::vector<std::string> produced;
        for (const std::string& path : command.produces)
            produced.push_back(root.resolve(path));
        const std::string after =
            "; the files are written and the command is recorded as pending ('rtprov status' "
            "shows it): the next 'rtprov apply' runs it with --regenerate-boot=now (the default "
            "with --live) or records a boot regeneration for first boot, and 'rtprov rollback' "
            "undoes everything";
        int status = 0;
        try {
            status = run(command.argv);
        } catch (const Error& e) {
            throw Error(std::string(e.what()) + after);
        }
        if (status != 0)
            throw Error(quoted(command_text(command.argv)) + " failed in the target (exit " +
                        std::to_string(status) + ")" + after);
        next.pending.erase(std::find(next.pending.begin(), next.pending.end(), command.argv));
        for (ManagedFile& file : next.files)
            if (std::find(produced.begin(), produced.end(), file.path) != produced.end())
                file.sha256 = current_sha(root, file.path).value_or("");
        auto& list = produced.empty() ? next.ran : next.made;
        if (command.rerun_on_rollback &&
            std::find(list.begin(), list.end(), command.argv) == list.end())
            list.push_back(command.argv);
        write_state(root, next);
        result.ran.push_back(command_text(command.argv));
    }
    return result;
}

std::string command_text(const std::vector<std::string>& argv) {
    return core::shell_command(argv);
}

namespace {

struct RollbackInputs {
    State state;
    Backups backups;
    std::vector<FileCheck> checks;
};

// Everything that could stop a rollback of 'state', checked before the first change
// (and read-only, before a disk image is opened for writing), so a refusal leaves every
// file as it was.
RollbackInputs rollback_inputs(const fs::Root& root, State of, DriftPolicy drift) {
    // The archive is read whole, the state must be this root's, hand edits are named, and
    // each original rtprov needs is there.
    RollbackInputs in{std::move(of), read_backups(root), {}};
    in.checks = check_files(root, in.state, [&]() -> const Backups& { return in.backups; });
    const std::vector<FileCheck>& checks = in.checks;
    const State* state = &in.state;
    refuse_foreign(root, *state, checks);
    std::vector<std::string> unreadable;
    for (const FileCheck& check : checks)
        if (check.unreadable)
            unreadable.push_back(check.detail);
    if (!unreadable.empty())
        throw Error("rollback refused, also with --force: " + core::join(unreadable, "; ") +
                    ". Move " + (unreadable.size() == 1 ? "it" : "them") +
                    " out of the way (keep what you need of it), then run the rollback "
                    "again. Nothing was changed");
    std::vector<std::string> drifted;
    for (std::size_t i = 0; i < state->files.size(); ++i)
        if ((checks[i].drift == Drift::modified || checks[i].drift == Drift::missing) &&
            !checks[i].lossless)
            drifted.push_back(quoted(root.shown(state->files[i].path)) +
                              (checks[i].detail.empty() ? "" : " (" + checks[i].detail + ")"));
    if (!drifted.empty() && drift == DriftPolicy::refuse) {
        throw Error("rollback refused: " + core::join(drifted, ", ") +
                    (drifted.size() == 1 ? " was" : " were") +
                    " changed by hand since rtprov wrote " + (drifted.size() == 1 ? "it" : "them") +
                    ", and rolling back would lose those changes; save them, then run "
                    "'rtprov rollback --force' on the same target. Nothing was changed");
    }
    refuse_unmarked(root, *state, checks);
    std::vector<std::string> unrestorable;
    for (const ManagedFile& file : state->files) {
        if (file.created)
            continue;
        auto original = in.backups.find(file.path);
        bool usable =
            original != in.backups.end() && state_sha(original->second) == file.original_sha256;
        // Still the original (a run killed before writing it): nothing to restore.
        if (!usable && current_sha(root, file.path) != file.original_sha256)
            unrestorable.push_back(quoted(root.shown(file.path)));
    }
    if (!unrestorable.empty()) {
        throw Error(root.shown(k_backup_file) + ": the original" +
                    (unrestorable.size() == 1 ? " of " : "s of ") + core::join(unrestorable, ", ") +
                    (unrestorable.size() == 1 ? " is" : " are") +
                    " missing or damaged, so rollback cannot restore " +
                    (unrestorable.size() == 1 ? "it" : "them") + ". Nothing was changed; restore " +
                    (unrestorable.size() == 1 ? "that file" : "those files") +
                    " from a copy of the image, then move " + quoted(root.shown(k_state_dir)) +
                    " away");
    }

    return in;
}

} // namespace

void check_apply(const fs::Root& root, const core::Plan& plan) {
    apply_checks(root, read_state(root), plan);
}

void check_rollback(const fs::Root& root, DriftPolicy drift) {
    if (std::optional<State> state = read_state(root))
        rollback_inputs(root, std::move(*state), drift);
}

std::string rollback_refusal(const fs::Root& root, DriftPolicy drift) {
    try {
        check_rollback(root, drift);
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}

RollbackResult rollback(fs::Root& root, const fs::RootLock&, DriftPolicy drift,
                        const CommandRunner& run) {
    require_backup_library(); // before the first change, not halfway
    RollbackResult result;
    std::optional<State> state = read_state(root);
    std::vector<std::string> paths;
    for (const ManagedFile& file : state ? state->files : std::vector<ManagedFile>{})
        paths.push_back(file.path);
    // Also when there is no state: a killed first apply or a killed rollback leaves its
    // temporary state folder in /var/lib.
    remove_stale_temporaries(root, paths);
    if (!state) {
        result.nothing_to_do = true;
        return result;
    }

    const RollbackInputs in = rollback_inputs(root, *state, drift);
    const Backups& backups = in.backups;
    const std::vector<FileCheck>& checks = in.checks;

    // From here on files change: a rollback killed now is finished by the next one,
    // which must not take the originals it finds for a state of another root.
    if (state->status != ApplyStatus::rolling_back) {
        State marked = *state;
        marked.status = ApplyStatus::rolling_back;
        write_state(root, marked);
    }

    bool regenerate = false; // a generated file changed since: make it again instead
    // A failure part way leaves the state kept: say what was done, and how to go on.
    auto unfinished = [&](const std::string& why) {
        std::vector<std::string> changed = result.restored;
        changed.insert(changed.end(), result.removed.begin(), result.removed.end());
        const std::string done = core::join(changed, ", ");
        return Error(why + "; " +
                     (done.empty() ? std::string("nothing was restored yet")
                                   : "already restored or removed: " + done) +
                     ", and the state is kept: fix the cause and run 'rtprov rollback' again");
    };
    try {
        for (std::size_t n = state->files.size(); n-- > 0;) {
            const ManagedFile& file = state->files[n];
            const FileCheck& check = checks[n];
            if (file.generated) {
                // Empty: its command failed or was killed, so what is there is not known to
                // be anyone else's: the original from before rtprov goes back.
                bool as_left = file.sha256.empty() || check.holds_ours;
                // Created, with a loader installed since that reads it (an image whose only
                // grub.cfg rtprov's update-grub made): made again from the restored inputs,
                // not removed, or the box would not boot.
                bool read_by_loader =
                    file.created && check.exists && !file.sha256.empty() &&
                    std::ranges::any_of(boot::readers_of(file.path),
                                        [&](const std::string& p) { return root.exists(p); });
                if (!as_left || read_by_loader) {
                    regenerate = true;
                    continue;
                }
            }
            if (file.created) {
                if (root.remove_file(file.path))
                    result.removed.push_back(file.path);
                continue;
            }
            auto original = backups.find(file.path);
            if (original == backups.end() || state_sha(original->second) != file.original_sha256)
                continue; // still the original (checked above)
            core::FileState restored = original->second;
            // A loader's runtime file (GRUB's environment block): what others set since a
            // trial armed it stays.
            for (const boot::Loader* loader : boot::loaders()) {
                const auto& runtime = loader->runtime_file;
                if (!file.runtime || !runtime || file.path != root.resolve(runtime->path))
                    continue;
                if (auto now = root.read_entry(file.path, fs::caps::k_managed);
                    now && !now->symlink) {
                    std::string kept;
                    restored.content =
                        runtime->rolled_back(original->second.content, now->content, kept);
                    if (!kept.empty())
                        result.kept_edits.push_back({file.path, kept + runtime->kept_note});
                }
            }
            // A command line others edited since: rtprov's part out, its keys' originals back,
            // their edits kept (pi-gen's export puts the real root= in after rtprov ran).
            if (file.cmdline && check.current && !check.current->symlink &&
                (check.drift == Drift::foreign_edit ||
                 (check.drift == Drift::modified && drift == DriftPolicy::overwrite))) {
                const core::CmdlineEdit& edit = *file.cmdline;
                auto before =
                    boot::parse_cmdline_text(original->second.content, scope_of(edit)).tokens;
                restored.content =
                    boot::render(boot::merge_cmdline(boot::parse_cmdline_text(
                                                         check.current->content, scope_of(edit)),
                                                     before, {}, edit.owned_keys)
                                     .text);
                if (restored.content != original->second.content)
                    result.kept_edits.push_back(
                        {file.path, check.detail + " (rtprov's parameters taken out, the "
                                                   "originals of its keys put back)"});
            }
            if (auto now = root.read_entry(file.path, fs::caps::k_managed);
                now && now->same_as(restored))
                continue;
            root.write(file.path, restored);
            result.restored.push_back(file.path);
        }
        for (auto it = state->created_dirs.rbegin(); it != state->created_dirs.rend(); ++it) {
            if (!root.exists(*it))
                continue;
            if (root.remove_directory(*it))
                result.removed.push_back(*it);
            else
                result.kept_dirs.push_back(*it);
        }
    } catch (const Error& e) {
        throw unfinished(e.what());
    }

    // Boot configuration made from the files just restored is made again.
    std::vector<std::vector<std::string>> again = state->ran;
    if (regenerate)
        again.insert(again.end(), state->made.begin(), state->made.end());
    for (const auto& argv : again) {
        if (!run) {
            result.not_run.push_back(command_text(argv));
            continue;
        }
        int status = run(argv);
        if (status != 0)
            throw Error(quoted(command_text(argv)) + " failed in the target (exit " +
                        std::to_string(status) +
                        "); the files are restored and the state is kept: fix it and run "
                        "'rtprov rollback' again");
        result.ran.push_back(command_text(argv));
    }

    // The state goes last: until then a killed rollback can simply run again. The folder
    // apply made for it goes with it in one rename, unless it holds more than the apply's
    // own (its state, backup and trial, rtprov's temporaries), such as kept self-test
    // reports or first boot's record: then only the state goes, and the folder stays.
    auto holds_more = [&] {
        for (const std::string& name : root.list(k_state_dir)) {
            const std::string path = std::string(k_state_dir) + "/" + name;
            if (path != k_state_file && path != k_backup_file &&
                path != core::k_trial_record_path && path != core::k_trial_reports_dir &&
                !name.starts_with(fs::Root::k_temp_prefix))
                return true;
        }
        return false;
    };
    if (state->state_dir_created && !holds_more()) {
        std::string temp = root.temporary_name("/var/lib");
        root.rename(k_state_dir, temp);
        root.remove_tree(temp);
    } else {
        root.remove_file(k_backup_file);
        root.remove_file(k_state_file);
        if (state->state_dir_created)
            result.kept_dirs.push_back(k_state_dir);
    }
    return result;
}

Status read_status(const fs::Root& root) {
    Status status;
    status.state = read_state(root);
    if (!status.state)
        return status;
    std::optional<Backups> cache;
    std::vector<FileCheck> checks = check_files(root, *status.state, lazy_backups(root, cache));
    // what would make apply and rollback refuse the state makes status say so (exit 1)
    try {
        refuse_foreign(root, *status.state, checks);
        refuse_unmarked(root, *status.state, checks);
    } catch (const Error& e) {
        status.foreign = e.what();
    }
    for (std::size_t i = 0; i < checks.size(); ++i)
        status.files.push_back({status.state->files[i], checks[i].drift, checks[i].detail});
    return status;
}

} // namespace rtprov::target
