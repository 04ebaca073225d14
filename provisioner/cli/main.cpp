// SPDX-License-Identifier: Apache-2.0
// rtprov's command line: the only code that reads argv and the environment, prints,
// or exits. Everything it does is a call into the library folders.
#include "provisioner/boot/loader.hpp"
#include "provisioner/cli/commands.hpp"
#include "provisioner/cli/render.hpp"
#include "provisioner/core/error.hpp"
#include "provisioner/core/sha256.hpp"
#include "provisioner/core/text.hpp"
#include "provisioner/fs/root_lock.hpp"
#include "provisioner/live/cpu_dma_latency.hpp"
#include "provisioner/live/cpuset_partition.hpp"
#include "provisioner/live/sched_features.hpp"
#include "provisioner/pipeline/apply.hpp"
#include "provisioner/pipeline/profile_search.hpp"
#include "provisioner/pipeline/target_root.hpp"
#include "provisioner/profile/profile_loader.hpp"
#include "provisioner/systemd/libsystemd.hpp"
#include "provisioner/systemd/online.hpp"
#include "provisioner/target/disk_image.hpp"
#include "provisioner/target/journal.hpp"

#include <CLI/CLI.hpp>
#include <syslog.h>

#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>

namespace stdfs = std::filesystem;
using namespace rtprov;

// Built-in data sits in ../share/rtprov next to the binary, both where it is installed
// and in the build tree, which mirrors the install layout. Without /proc (a bare
// chroot into an image), the folder the package installs it to.
std::string rtprov::cli::data_dir(const char* sub) {
    std::error_code ec;
    stdfs::path exe = stdfs::read_symlink("/proc/self/exe", ec);
    if (ec)
        return (stdfs::path(RTPROV_INSTALL_DATADIR) / sub).string();
    return (exe.parent_path().parent_path() / "share/rtprov" / sub).string();
}

// Test hook (documented in docs/ARCHITECTURE.md): RTPROV_TEST_KILL_AT_STEP=N makes
// rtprov SIGKILL itself before its Nth durable step, to prove that an interrupted run
// converges.
void rtprov::cli::set_test_kill_hook(fs::Root& root) {
    const char* at = std::getenv("RTPROV_TEST_KILL_AT_STEP");
    if (!at)
        return;
    long target_step = std::strtol(at, nullptr, 10);
    root.set_step_hook([target_step, count = 0L]() mutable {
        if (++count == target_step)
            std::raise(SIGKILL);
    });
}

namespace {

using cli::k_exit_failed;
using cli::k_exit_ok;
using cli::k_exit_usage;

const char* const k_exit_codes = R"(Exit codes:
  0  success (for plan: the plan was made, whether or not it changes anything)
  1  failure, or a plan with refusals; the message says why and what to do
  2  wrong usage (unknown option, missing --root)
  3  selftest or audit ran and did not pass (the report says which part and why);
     status found drift: a managed file changed by hand or missing, a command of the
     last apply that did not finish (pending: update-grub), or an apply or rollback
     that stopped half way (status --diff shows what changed)

See rtprov(1) for every command and option; the profile format, the JSON outputs, first
boot and the image-builder and Ansible plugins are described in )" RTPROV_INSTALL_DOCDIR
                                 R"( (profile-format.md, json.md, firstboot.md, plugin-*.md).)";

struct Options {
    std::string root;
    std::string image; // --image FILE: a disk image, opened for the command (target::ImageSession)
    bool live = false;
    std::string profile;
    std::vector<std::string> profile_dirs;
    std::vector<std::string> sets;
    bool json = false;
    bool force = false;
    std::string show_name;
    std::string regenerate; // now | first-boot | never; "" = the mode's default
    bool install_packages = false;
    bool packages = false; // plan --packages
    bool force_priority = false;
    bool runtime = false;                    // apply --live --runtime
    bool trial = false;                      // plan/apply --trial
    bool firstboot = false;                  // plan/apply --firstboot
    std::vector<std::string> firstboot_sets; // --firstboot-set KEY=VALUE
};

using cli::data_dir;

profile::SearchPath search_path(const Options& o, const fs::Root* root) {
    return pipeline::profile_search_path(o.profile_dirs, root, data_dir("profiles"));
}

std::vector<profile::Override> overrides(const Options& o) {
    std::vector<profile::Override> out;
    for (const std::string& set : o.sets)
        out.push_back({set});
    return out;
}

// The disk image a command works on (--image), open until the command ends.
std::optional<target::ImageSession> g_image;

// The target root: --root DIR, --live, or the root of --image FILE, opened writable for
// 'writable' commands (apply, rollback) and read-only for the others.
std::unique_ptr<fs::Root> open_root(const Options& o, bool required, bool writable = false) {
    if (o.image.empty())
        return pipeline::open_target(o.root, o.live, required);
    if (!o.root.empty() || o.live)
        throw UsageError("--image", "--image FILE is the target; drop --root or --live");
    g_image.emplace(o.image, writable);
    std::cerr << "rtprov: opened " << g_image->image() << " read-only: ";
    for (std::size_t i = 0; i < g_image->mounted().size(); ++i)
        std::cerr << (i ? ", " : "") << g_image->mounted()[i];
    std::cerr << "\n";
    for (const std::string& warning : g_image->warnings())
        std::cerr << "rtprov: warning: " << warning << "\n";
    return pipeline::open_target(g_image->root(), false, required);
}

// An image's root, read so far, opened again with its file systems read-write. The lock
// on the image is held throughout: what was read is what is written.
std::unique_ptr<fs::Root> reopen_writable(std::unique_ptr<fs::Root> root) {
    root.reset(); // lets go of the read-only mounts
    g_image->make_writable();
    std::cerr << "rtprov: writing to " << g_image->image() << "\n";
    return pipeline::open_target(g_image->root(), false, true);
}

// Refuses an apply the image's file systems have no room for, before anything is
// written: each file rtprov writes takes whole 4 KiB blocks, twice while the new one
// replaces the old, and its state and backups (/var/lib/rtprov) take more on the root.
void check_image_space(const target::ImageSession& image, const core::Plan& plan) {
    constexpr std::uint64_t k_block = 4096, k_state = 256 * 1024;
    std::map<std::string, std::uint64_t> needed{{"/", k_state}};
    std::map<std::string, std::uint64_t> files{{"/", 16}}; // the state, its backups, folders
    for (const core::FileChange& change : plan.changes) {
        needed[image.mount_of(change.path)] +=
            2 * ((change.next.content.size() + k_block - 1) / k_block + 1) * k_block;
        files[image.mount_of(change.path)] += 2;
    }
    for (const auto& [mount, count] : files)
        if (const std::uint64_t free = image.room(mount).inodes; free < count)
            throw Error("the image's file system on " + mount + " can make " +
                        std::to_string(free) + " more files, and the changes need about " +
                        std::to_string(count) +
                        ": free some, or make the file system with more "
                        "inodes; nothing was written");
    for (const auto& [mount, bytes] : needed)
        if (const std::uint64_t free = image.room(mount).bytes; free < bytes)
            throw Error("the image's file system on " + mount + " has " + std::to_string(free) +
                        " bytes free, and the changes need about " + std::to_string(bytes) +
                        ": grow it first (the image file: '" +
                        core::shell_command({"truncate", "-s", "+64M", image.image()}) +
                        "', then the partition and its file system, e.g. with growpart and "
                        "resize2fs); nothing was written");
}

// What a command calls its target: the image file, or the root folder.
std::string target_name(const Options& o, const fs::Root& root) {
    return o.image.empty() ? root.path() : o.image;
}

// The options that name the target, as a command rtprov prints for the user takes them:
// --live, --image FILE or --root DIR.
std::vector<std::string> target_options(const Options& o, const fs::Root& root) {
    if (o.live)
        return {"--live"};
    return o.image.empty() ? std::vector<std::string>{"--root", root.path()}
                           : std::vector<std::string>{"--image", o.image};
}

// A command the user is told to run: the words as a shell reads them back
// (core::shell_command), so that a root named 'odd $(id) dir' is one word, not a command.
std::string rtprov_command(const std::string& verb, const std::vector<std::string>& options) {
    std::vector<std::string> argv{"rtprov", verb};
    argv.insert(argv.end(), options.begin(), options.end());
    return core::shell_command(argv);
}

// The time apply and rollback give what they write and record: SOURCE_DATE_EPOCH's,
// read before the target is opened, so a value refused leaves an image as it was. None
// with --live: the running system's files keep real times.
std::optional<std::int64_t> write_time(const Options& o) {
    if (!o.live)
        return cli::source_date_epoch();
    if (std::getenv("SOURCE_DATE_EPOCH"))
        std::cerr << "rtprov: warning: SOURCE_DATE_EPOCH ignored: --live changes the running "
                     "system, whose files keep real times\n";
    return std::nullopt;
}

// "2026-11-30T01:00:00Z": the time an apply records, SOURCE_DATE_EPOCH's or the clock's.
std::string applied_at(std::optional<std::int64_t> epoch) {
    return cli::utc_text(std::time_t(epoch.value_or(cli::now_unix())));
}

// What apply and rollback write takes 'epoch' as its time when there is one (an image
// built twice has the same file times).
void prepare_writes(fs::Root& root, std::optional<std::int64_t> epoch) {
    if (epoch)
        root.set_source_date_epoch(*epoch);
    cli::set_test_kill_hook(root);
}

// Writes an image (--image) back and unmounts it before a command says it succeeded: a
// failure to is the command's, told after what was done ('done'). The root and its lock
// go first: a descriptor open in a file system keeps it from being unmounted.
void close_image(std::unique_ptr<fs::Root>& root, std::optional<fs::RootLock>& lock,
                 const std::string& done) {
    if (!g_image)
        return;
    lock.reset();
    root.reset();
    try {
        g_image->close();
    } catch (const Error& e) {
        throw Error(done + ", but " + e.what());
    }
}

// "3 files", "1 file"
std::string files_text(std::size_t n) {
    return std::to_string(n) + (n == 1 ? " file" : " files");
}

void print_findings_to_stderr(const core::Plan& plan) {
    for (const core::Finding& f : plan.findings)
        if (f.severity != core::Severity::info)
            std::cerr << "rtprov: " << core::to_string(f.severity) << ": " << f.message << "\n";
}

target::CommandRunner command_runner(const Options& o, const fs::Root& root) {
    return pipeline::command_runner(
        root, o.live, [](const std::string& line) { std::cerr << "rtprov: " << line << "\n"; });
}

// RTPROV_ROOT_LOCK_FD: the locked root folder a parent rtprov (first boot) passes to
// the rtprov it runs, which would otherwise find the root locked by its own parent.
std::optional<int> inherited_lock_fd() {
    const char* text = std::getenv(cli::k_lock_fd_variable);
    if (!text || *text == '\0')
        return std::nullopt;
    char* end = nullptr;
    long fd = std::strtol(text, &end, 10);
    if (*end != '\0' || fd < 0 || fd > 65535)
        return std::nullopt;
    return int(fd);
}

pipeline::Planned make_plan(const Options& o, const fs::Root& root) {
    if (o.profile.empty())
        throw CLI::ValidationError("--profile",
                                   "name a profile: --profile NAME (see 'rtprov profiles')");
    pipeline::PlanRequest request{o.profile, o.profile_dirs,       o.sets,           o.live,
                                  {},        data_dir("profiles"), data_dir("apps"), {}};
    request.options.regenerate = pipeline::regenerate_mode(o.regenerate, o.live);
    request.options.install_packages = o.install_packages;
    request.options.force_priority = o.force_priority;
    request.options.trial = o.trial;
    if (o.firstboot)
        request.firstboot = o.firstboot_sets;
    return pipeline::make_plan(request, root);
}

void print_done(const systemd::OnlineResult& online) {
    for (const systemd::OnlineStep& done : online.done)
        std::cout << "systemd: " << done.text() << "\n";
}

int run_profiles(const Options& o, bool show) {
    auto root = open_root(o, false);
    auto path = search_path(o, root.get());
    if (show) {
        if (o.json)
            throw CLI::ValidationError("--json", "'profiles show' prints YAML; --json is for the "
                                                 "list");
        std::cout << profile::to_yaml(profile::load_profile(o.show_name, path, overrides(o)));
        return k_exit_ok;
    }
    if (!o.sets.empty())
        throw CLI::ValidationError("--set", "--set changes a profile: use it with 'profiles "
                                            "show NAME', 'plan' or 'apply'");
    auto entries = profile::list_profiles(path);
    std::cout << (o.json ? cli::profiles_json(entries) : cli::profiles_text(entries));
    return k_exit_ok;
}

int run_plan(const Options& o) {
    auto root = open_root(o, true);
    target::check_is_system_root(*root);
    pipeline::Planned p = make_plan(o, *root);
    if (o.packages) {
        // Only the package list goes to stdout (the pi-gen stage writes it to a file); a
        // warning about what planning could not read still reaches the user.
        for (const core::Finding& f : p.plan.findings)
            if (f.code == "applied-profile-unreadable")
                std::cerr << "rtprov: warning: " << f.message << "\n";
        for (const std::string& package : p.plan.packages)
            std::cout << package << "\n";
        return k_exit_ok;
    }
    cli::PlanView view{p.profile.name, target_name(o, *root), o.live, &p.plan, {}};
    if (auto state = target::read_state(*root))
        for (const target::ManagedFile& file : target::stale_entries(*root, *state, p.plan))
            view.retired.push_back(file.path);
    std::cout << (o.json ? cli::plan_json(view) : cli::plan_text(view));
    return p.plan.refused() ? k_exit_failed : k_exit_ok;
}

// "nothing to change: image 'x.img' already matches profile 'pi4'"
void print_nothing_to_change(const Options& o, const std::string& target,
                             const std::string& profile) {
    std::cout << "nothing to change: "
              << (o.live ? "this machine" : (o.image.empty() ? "root '" : "image '") + target + "'")
              << " already matches profile '" << profile << "'\n";
}

int run_apply(const Options& o) {
    const std::optional<std::int64_t> epoch = write_time(o);
    auto root = open_root(o, true, true);
    target::check_is_system_root(*root);
    if (g_image) {
        // An image is planned read-only first: a refused plan, one its file systems have
        // no room for, or one that changes nothing leaves every byte of it as it was.
        pipeline::Planned p = make_plan(o, *root);
        if (p.plan.refused()) {
            cli::PlanView view{p.profile.name, o.image, false, &p.plan, {}};
            std::cerr << cli::plan_text(view);
            throw Error("apply refused: the plan has errors (above); nothing was written");
        }
        // (what a journal not yet replayed holds is seen only read-write)
        if (g_image->warnings().empty() && target::apply_changes_nothing(*root, p.plan)) {
            print_nothing_to_change(o, target_name(o, *root), p.profile.name);
            return k_exit_ok;
        }
        target::check_apply(*root, p.plan);
        check_image_space(*g_image, p.plan);
        root = reopen_writable(std::move(root));
        target::check_is_system_root(*root);
    }
    // Planned under the lock too: what the plan read is what apply changes.
    std::optional<fs::RootLock> lock;
    lock.emplace(*root, inherited_lock_fd());
    pipeline::Planned p = make_plan(o, *root);
    if (p.plan.refused()) {
        cli::PlanView view{p.profile.name, target_name(o, *root), o.live, &p.plan, {}};
        std::cerr << cli::plan_text(view);
        throw Error("apply refused: the plan has errors (above); nothing was written");
    }
    print_findings_to_stderr(p.plan);
    prepare_writes(*root, epoch);
    target::ApplyInfo info{p.profile.name, core::sha256_hex(p.profile_yaml), applied_at(epoch),
                           core::to_string(p.profile.board.boot.loader)};
    if (o.runtime && !o.live)
        throw CLI::ValidationError("--runtime", "--runtime changes the running system: use it "
                                                "with --live");
    // On the running system, systemd learns about the new units and drop-ins, even when a
    // command after the files failed.
    pipeline::SystemdBus systemd_bus;
    auto told_before_error = [](const systemd::OnlineResult& online) {
        print_done(online);
        if (!online.complete())
            std::cerr << "rtprov: warning: systemd was not told about the files written "
                         "so far: "
                      << online.failure
                      << "; to tell it by hand: " << systemd::systemctl_commands(online.not_done)
                      << "\n";
    };
    pipeline::Applied applied =
        pipeline::apply(*root, *lock, p, info, command_runner(o, *root), {o.live, o.runtime},
                        systemd_bus, told_before_error);
    const target::ApplyResult& result = applied.result;
    print_done(applied.online);
    if (!applied.damaged_trial_record.empty())
        std::cerr << "rtprov: warning: " << applied.damaged_trial_record
                  << (o.trial ? " (replaced by the new trial's record)"
                              : " (left as it is: 'rtprov trial abort' replaces it)")
                  << "\n";
    // Files written and recorded but systemd not told: say what is done, what is not, and
    // how to finish or undo; the apply did not finish, so it fails (exit 1).
    if (!applied.online.complete())
        throw Error(cli::unfinished_live_apply(p.profile.name, result, applied.online));
    if (result.stale_temporaries_removed > 0)
        std::cerr << "rtprov: info: removed " << result.stale_temporaries_removed
                  << " temporary file(s) left by an interrupted run\n";
    const std::string target = target_name(o, *root),
                      undo = rtprov_command("rollback", target_options(o, *root));
    close_image(root, lock, "apply wrote " + files_text(result.written.size()) + " into the image");
    if (result.nothing_to_do) {
        print_nothing_to_change(o, target, p.profile.name);
        return k_exit_ok;
    }
    for (const std::string& path : result.written)
        std::cout << "wrote " << path << "\n";
    for (const std::string& path : result.retired)
        std::cout << "retired " << path << " (no longer in the profile)\n";
    for (const std::string& command : result.ran)
        std::cout << "ran " << command << "\n";
    for (const std::string& command : result.recorded)
        std::cout << "recorded " << command << " for first boot ("
                  << core::k_pending_regeneration_path << "): the last apply did not finish it\n";
    std::cout << "applied profile '" << p.profile.name << "': " << files_text(result.written.size())
              << " changed";
    if (!result.ran.empty())
        std::cout << ", " << result.ran.size()
                  << (result.ran.size() == 1 ? " command" : " commands") << " run";
    if (!result.recorded.empty())
        std::cout << ", " << result.recorded.size()
                  << (result.recorded.size() == 1 ? " command" : " commands")
                  << " left to first boot";
    std::cout << "; '" << undo << "' undoes it\n";
    if (o.trial) {
        // A trial may be armed by the reboot into it (the Pi firmware's tryboot).
        const std::string& argument =
            boot::loader(p.profile.board.boot.loader).trial_reboot_argument;
        std::cout << "trial armed: "
                  << (!argument.empty() ? "reboot into it with: systemctl reboot '" + argument + "'"
                      : o.live          ? "the next boot, and only that one, is the trial"
                                        : "the image's first boot is the trial")
                  << "; 'rtprov trial status' follows it\n";
    }
    return k_exit_ok;
}

// 'rtprov status' (cli/status_cmd.cpp) on the target of --root, --live or --image.
int run_status(const Options& o, cli::StatusCommand c) {
    auto root = open_root(o, true);
    c.live = o.live;
    return cli::run_status(*root, target_name(o, *root), c);
}

target::DriftPolicy drift_policy(const Options& o) {
    return o.force ? target::DriftPolicy::overwrite : target::DriftPolicy::refuse;
}

int run_rollback(const Options& o) {
    const std::optional<std::int64_t> epoch = write_time(o);
    auto root = open_root(o, true, true);
    auto nothing = [&] {
        std::cout << "nothing to roll back: rtprov has not applied anything to "
                  << (o.live
                          ? "this machine"
                          : (o.image.empty() ? "root '" : "image '") + target_name(o, *root) + "'")
                  << "\n";
        return k_exit_ok;
    };
    // an image is written only when there is something to roll back
    if (g_image) {
        if (g_image->warnings().empty() && target::rollback_changes_nothing(*root))
            return nothing();
        target::check_rollback(*root, drift_policy(o));
        root = reopen_writable(std::move(root));
    }
    std::optional<fs::RootLock> lock;
    lock.emplace(*root, inherited_lock_fd());
    prepare_writes(*root, epoch);
    pipeline::SystemdBus systemd_bus;
    pipeline::RolledBack rolled = pipeline::rollback(
        *root, *lock, drift_policy(o),
        o.regenerate == "never" ? target::CommandRunner{} : command_runner(o, *root), o.live,
        systemd_bus);
    const target::RollbackResult& result = rolled.result;
    // On the running system, systemd forgets the units and drop-ins rtprov removed.
    print_done(rolled.online);
    if (!rolled.online.complete())
        throw Error(cli::unfinished_live_rollback(result, rolled.online));
    if (result.nothing_to_do)
        return nothing();
    close_image(root, lock,
                "rollback restored " + files_text(result.restored.size()) +
                    " in the image and removed what rtprov made");
    for (const std::string& path : result.restored)
        std::cout << "restored " << path << "\n";
    for (const auto& [path, edits] : result.kept_edits)
        std::cout << "kept edits made since rtprov in " << path << ": " << edits << "\n";
    for (const std::string& path : result.removed)
        std::cout << "removed " << path << "\n";
    if (rolled.irqs) {
        for (const std::string& line : rolled.irqs->done)
            std::cout << "put back " << line << "\n";
        for (const std::string& line : rolled.irqs->findings)
            std::cerr << "rtprov: warning: " << line << "\n";
        if (!rolled.irqs->ok)
            std::cerr << "rtprov: warning: some IRQ values could not be put back (above); they "
                         "return to the kernel's defaults at the next boot, or run 'rtprov "
                         "irq-tune --restore' again\n";
    }
    for (const std::string& command : result.ran)
        std::cout << "ran " << command << "\n";
    for (const std::string& command : result.not_run)
        std::cerr << "rtprov: warning: not run (--regenerate-boot=never): '" << command
                  << "'; run it in the target before the next boot\n";
    for (const std::string& path : result.kept_dirs)
        std::cerr << "rtprov: warning: kept folder " << path
                  << ": it holds files the apply did not write\n";
    std::cout << "rolled back: every file rtprov changed is as it was before"
              << (result.kept_edits.empty() ? "" : ", with the edits others made since kept")
              << "\n";
    return k_exit_ok;
}

// rtprov-sched-features.service: the RT_PUSH_IPI guard at every boot. What it found
// and did goes to the journal as one structured entry when systemd runs it.
int run_sched_features() {
    live::PushIpiResult result = live::ensure_rt_push_ipi({}, live::mount_debugfs);
    static const char* k_actions[] = {"leave-rt-kernel", "already-on", "enable", "unknown"};
    const char* action = k_actions[static_cast<int>(result.action)];
    // Started by systemd: one structured journal entry (stdout would log it twice);
    // printed when it is not (or cannot be) sent.
    if (!std::getenv("INVOCATION_ID") ||
        !systemd::journal_send({"MESSAGE=rtprov sched-features: " + result.message,
                                "MESSAGE_ID=5b0c2a1e6f3d4c8e9a7b1d2c3e4f5a6b",
                                "PRIORITY=" + std::to_string(result.ok ? LOG_INFO : LOG_ERR),
                                std::string("RTPROV_RT_PUSH_IPI=") + action}))
        (result.ok ? std::cout : std::cerr) << "rtprov sched-features: " << result.message << "\n";
    return result.ok ? k_exit_ok : k_exit_failed;
}

// rtprov-cpu-dma-latency.service: holds /dev/cpu_dma_latency at 0 until stopped.
int run_hold_cpu_dma_latency() {
    core::Fd held = live::hold_cpu_dma_latency();
    std::cout << "rtprov: holding /dev/cpu_dma_latency at 0 until stopped" << std::endl;
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGTERM);
    sigaddset(&signals, SIGINT);
    sigprocmask(SIG_BLOCK, &signals, nullptr);
    int received = 0;
    sigwait(&signals, &received);
    held.reset(); // ends the request
    return k_exit_ok;
}

// rtprov-cpuset-partition.service: SLICE becomes a cpuset partition of type MODE.
int run_cpuset_partition(const std::string& slice, const std::string& mode) {
    if (slice.find('/') != std::string::npos || !slice.ends_with(".slice"))
        throw CLI::ValidationError("SLICE", "a slice name such as rtprov.slice");
    live::PartitionResult result = live::set_cpuset_partition("/sys/fs/cgroup/" + slice, mode);
    if (!std::getenv("INVOCATION_ID") ||
        !systemd::journal_send({"MESSAGE=rtprov cpuset-partition: " + result.message,
                                "PRIORITY=" + std::to_string(result.ok ? LOG_INFO : LOG_ERR)}))
        (result.ok ? std::cout : std::cerr)
            << "rtprov cpuset-partition: " << result.message << "\n";
    return result.ok ? k_exit_ok : k_exit_failed;
}

void add_target_options(CLI::App* cmd, Options& o) {
    cmd->add_option("--root", o.root, "Root of the target image (a mounted image or folder)")
        ->type_name("DIR");
    cmd->add_option("--image", o.image,
                    "A whole disk image (MBR or GPT, not compressed): rtprov mounts its root "
                    "and boot partitions where its fstab says, in a mount namespace of its own, "
                    "and unmounts them when done; read-only for plan and status")
        ->type_name("FILE");
    cmd->add_flag("--live", o.live, "Work on this running machine ('/')");
}

void add_profile_options(CLI::App* cmd, Options& o) {
    cmd->add_option("--profile-dir", o.profile_dirs,
                    "Also look for profiles here, before the target's and the built-in ones")
        ->type_name("DIR");
    cmd->add_option("--set", o.sets, "Override one profile key, e.g. tuning.cores.reserved=2-3")
        ->type_name("KEY=VALUE");
}

// Everything rtprov prints may carry text from a hostile image or profile (a path, a
// token, a description, a process name): no control character of it reaches the
// terminal, where an escape sequence could rewrite the screen or a title. Newlines and
// tabs pass; other bytes below 0x20 and DEL are written as \xNN, and so are the C1
// controls U+0080..U+009F in UTF-8 (0xC2 0x80..0x9F: U+009B is a CSI to some terminals).
// (The self-test's own progress line goes to stderr with fprintf, past this filter.)
class PrintableBuf : public std::streambuf {
  public:
    explicit PrintableBuf(std::streambuf* to) : m_to(to) {}

  protected:
    int_type overflow(int_type ch) override {
        if (traits_type::eq_int_type(ch, traits_type::eof()))
            return m_to->pubsync() == 0 ? traits_type::not_eof(ch) : traits_type::eof();
        const char c = traits_type::to_char_type(ch);
        return xsputn(&c, 1) == 1 ? ch : traits_type::eof();
    }
    // A whole string at once: one write of it, not one a byte (stderr has no buffer).
    std::streamsize xsputn(const char* s, std::streamsize n) override {
        static const char k_hex[] = "0123456789abcdef";
        auto escaped = [](std::string& out, unsigned char c) {
            out += {'\\', 'x', k_hex[c >> 4], k_hex[c & 15]};
        };
        std::string out;
        out.reserve(std::size_t(n));
        for (std::streamsize i = 0; i < n; ++i) {
            const auto c = static_cast<unsigned char>(s[i]);
            // a 0xC2 waits for the next byte, which may come in the next call
            if (m_held_c2) {
                m_held_c2 = false;
                if (c >= 0x80 && c <= 0x9f) {
                    escaped(out, 0xc2);
                    escaped(out, c);
                    continue;
                }
                out += char(0xc2);
            }
            if (c == 0xc2)
                m_held_c2 = true;
            else if ((c >= 0x20 && c != 0x7f) || c == '\n' || c == '\t')
                out += char(c);
            else
                escaped(out, c);
        }
        const auto size = std::streamsize(out.size());
        return m_to->sputn(out.data(), size) == size ? n : 0;
    }
    int sync() override { return m_to->pubsync(); }

  private:
    std::streambuf* m_to;
    bool m_held_c2 = false; // a lone 0xC2 at the very end is not written: not valid UTF-8
};

} // namespace

int main(int argc, char** argv) {
    std::streambuf* const stdout_buf = std::cout.rdbuf();
    std::streambuf* const stderr_buf = std::cerr.rdbuf();
    PrintableBuf printable_out(stdout_buf), printable_err(stderr_buf);
    std::cout.rdbuf(&printable_out);
    std::cerr.rdbuf(&printable_err);
    // The filters live in this frame: the streams get their own buffers back before it
    // ends (static destructors flush std::cout after main returns).
    struct Restore {
        std::streambuf* out;
        std::streambuf* err;
        ~Restore() {
            std::cout.flush();
            std::cerr.flush();
            std::cout.rdbuf(out);
            std::cerr.rdbuf(err);
        }
    } restore{stdout_buf, stderr_buf};
    CLI::App app{"rtprov makes Linux audio machines real-time ready and proves it: it applies "
                 "a board profile (reserved cores, pinning, real-time priorities, boot "
                 "parameters) to an image root or this machine, and can undo it byte for byte.",
                 "rtprov"};
    app.set_version_flag("--version", std::string("rtprov ") + RTPROV_VERSION);
    app.footer(k_exit_codes);
    app.require_subcommand(1);
    Options o;

    auto* profiles = app.add_subcommand("profiles", "List the profiles rtprov can find");
    add_target_options(profiles, o);
    add_profile_options(profiles, o);
    profiles->add_flag("--json", o.json, "Print JSON");
    auto* show =
        profiles->add_subcommand("show", "Print a profile fully resolved (extends, --set)");
    show->fallthrough(); // --root, --set and --profile-dir belong to "profiles"
    show->add_option("name", o.show_name, "Profile name or .yaml file")->required();

    auto* plan = app.add_subcommand("plan", "Show what apply would change; writes nothing");
    auto* apply =
        app.add_subcommand("apply", "Make the planned changes (a second run changes nothing)");
    for (auto* cmd : {plan, apply}) {
        add_target_options(cmd, o);
        cmd->add_option("--profile", o.profile,
                        "Profile name (see 'rtprov profiles') or .yaml file")
            ->type_name("NAME");
        add_profile_options(cmd, o);
    }
    plan->add_flag("--json", o.json, "Print the plan as JSON");
    apply->add_flag("--runtime", o.runtime,
                    "With --live and the cpuset method: also set AllowedCPUs= on the running "
                    "slices now, without a reboot");
    plan->add_flag("--packages", o.packages,
                   "Print only the packages the profile needs in the target, installed or not (one "
                   "per line), for image builders");
    for (auto* cmd : {plan, apply}) {
        cmd->add_option("--regenerate-boot", o.regenerate,
                        "When to regenerate the boot configuration (grub.cfg, systemd-boot "
                        "entries): now (in the target; offline through a chroot), first-boot "
                        "(default offline), never. Default live: now")
            ->check(CLI::IsMember({"now", "first-boot", "never"}));
        cmd->add_flag("--force-priority", o.force_priority,
                      "Allow a unit-wide real-time priority at or above an app's own real-time "
                      "threads (inverts them; see the finding)");
        cmd->add_flag("--trial", o.trial,
                      "Write the boot configuration as a trial (GRUB; Raspberry Pi with --live): "
                      "the next boot, and only "
                      "that one, uses the new kernel and parameters; rtprov-trial.service makes "
                      "it the default when that boot passes the self-test and audit, else the "
                      "box boots the previous one again ('rtprov trial status')");
        cmd->add_flag("--install-packages", o.install_packages,
                      "Install missing packages (the PREEMPT_RT kernel) with apt-get in the "
                      "target; offline through a chroot");
        auto* firstboot = cmd->add_flag(
            "--firstboot", o.firstboot,
            "Set up the image's first boot: write /etc/rtprov/firstboot.yaml (this --profile "
            "and --set) and enable rtprov-firstboot.service; rollback takes both out, and an "
            "apply without it retires them (not with --live)");
        cmd->add_option("--firstboot-set", o.firstboot_sets,
                        "Set a key of firstboot.yaml that is first boot's own: reboot, trial, "
                        "install_packages, selftest_s, pi_probe_s (e.g. trial=false)")
            ->type_name("KEY=VALUE")
            ->needs(firstboot);
    }

    auto* status = app.add_subcommand("status", "Which profile is applied, when, and drift since");
    add_target_options(status, o);
    cli::StatusCommand status_cmd;
    cli::add_status_options(*status, status_cmd);

    auto* rollback = app.add_subcommand(
        "rollback", "Restore every file rtprov changed and remove what it created");
    add_target_options(rollback, o);
    rollback->add_flag("--force", o.force, "Roll back even files changed by hand since");
    rollback
        ->add_option("--regenerate-boot", o.regenerate,
                     "Run the boot regeneration of the apply again after restoring: now "
                     "(default) or never")
        ->check(CLI::IsMember({"now", "never"}));

    auto* sched = app.add_subcommand(
        "sched-features",
        "Turn RT_PUSH_IPI on if this non-PREEMPT_RT kernel has it off (run at boot by "
        "rtprov-sched-features.service)");

    auto* dma = app.add_subcommand(
        "hold-cpu-dma-latency",
        "Hold /dev/cpu_dma_latency at 0 until stopped (run by rtprov-cpu-dma-latency.service)");

    std::string partition_slice, partition_mode;
    auto* partition = app.add_subcommand(
        "cpuset-partition", "Make a slice's cgroup a cpuset partition and check it took (run by "
                            "rtprov-cpuset-partition.service)");
    partition->add_option("slice", partition_slice, "Slice, e.g. rtprov.slice")->required();
    partition->add_option("mode", partition_mode, "isolated or root")
        ->required()
        ->check(CLI::IsMember({"isolated", "root"}));

    cli::SelftestCommand selftest_cmd;
    cli::add_selftest_command(app, selftest_cmd);
    cli::ReportCommand report_cmd;
    cli::add_report_command(app, report_cmd);
    cli::AuditCommand audit_cmd;
    cli::add_audit_command(app, audit_cmd);
    cli::FirstbootCommand firstboot_cmd;
    cli::add_firstboot_command(app, firstboot_cmd);
    cli::TrialCommand trial_cmd;
    cli::add_trial_command(app, trial_cmd);
    cli::IrqTuneCommand irq_tune_cmd;
    cli::add_irq_tune_command(app, irq_tune_cmd);

    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        app.exit(e);
        return k_exit_usage;
    }

    try {
        if (*profiles)
            return run_profiles(o, bool(*show));
        // a command on an image: unmounted before rtprov ends, and a failure to write the
        // image back is the command's failure
        auto on_image = [&](int rc) {
            if (g_image)
                g_image->close();
            return rc;
        };
        if (*plan)
            return on_image(run_plan(o));
        if (*apply)
            return on_image(run_apply(o));
        if (*status)
            return on_image(run_status(o, status_cmd));
        if (*rollback)
            return on_image(run_rollback(o));
        if (*sched)
            return run_sched_features();
        if (*dma)
            return run_hold_cpu_dma_latency();
        if (*partition)
            return run_cpuset_partition(partition_slice, partition_mode);
        if (*selftest_cmd.app)
            return cli::run_selftest(selftest_cmd);
        if (*report_cmd.app)
            return cli::run_report(report_cmd);
        if (*audit_cmd.app)
            return cli::run_audit(audit_cmd);
        if (*firstboot_cmd.app)
            return cli::run_firstboot(firstboot_cmd);
        if (*trial_cmd.app)
            return cli::run_trial(trial_cmd);
        if (*irq_tune_cmd.app)
            return cli::run_irq_tune(irq_tune_cmd);
    } catch (const CLI::ValidationError& e) {
        std::cerr << "rtprov: error: " << e.what() << "\n";
        return k_exit_usage;
    } catch (const UsageError& e) {
        std::cerr << "rtprov: error: " << e.what() << "\n";
        return k_exit_usage;
    } catch (const Error& e) {
        std::string message = e.what();
        // a path under the image's private mount folder, which no one else can see, as
        // the image's: '/run/rtprov/image-PID/etc/fstab' → 'pi.img:/etc/fstab'
        // (also when the image failed to open, and g_image is not set)
        const std::string folder = target::ImageSession::mount_folder();
        if (!o.image.empty())
            for (std::size_t at = 0; (at = message.find(folder, at)) != std::string::npos;) {
                const std::size_t end = at + folder.size();
                const bool whole = end == message.size() || message[end] == '/' ||
                                   message[end] == '\'' || message[end] == ' ';
                const std::string as =
                    o.image + ":" + (end < message.size() && message[end] == '/' ? "" : "/");
                if (whole)
                    message.replace(at, folder.size(), as);
                at += whole ? as.size() : 1;
            }
        std::size_t start = 0;
        while (start < message.size()) {
            std::size_t nl = message.find('\n', start);
            if (nl == std::string::npos)
                nl = message.size();
            std::cerr << "rtprov: error: " << message.substr(start, nl - start) << "\n";
            start = nl + 1;
        }
        return k_exit_failed;
    } catch (const std::exception& e) {
        std::cerr << "rtprov: error: " << e.what() << "\n";
        return k_exit_failed;
    }
    return k_exit_usage;
}
