// SPDX-License-Identifier: Apache-2.0
// rtprov trial: the trial of a boot configuration that 'apply --trial' armed. 'check' is
// what rtprov-trial.service runs at every boot while a trial record exists: on the trial
// boot it runs the self-test and the audit as child processes (as first boot does) and
// commits the trial with a plain 'apply --live' of the applied profile, or records why
// not and reboots into the default; on a later boot that was not the trial it records
// that the trial never came up.

#include "provisioner/boot/loader.hpp"
#include "provisioner/cli/commands.hpp"
#include "provisioner/cli/json.hpp"
#include "provisioner/cli/render.hpp"
#include "provisioner/core/error.hpp"
#include "provisioner/core/plan.hpp"
#include "provisioner/core/text.hpp"
#include "provisioner/fs/root.hpp"
#include "provisioner/fs/root_lock.hpp"
#include "provisioner/pipeline/target_root.hpp"
#include "provisioner/system/sysroot.hpp"
#include "provisioner/systemd/libsystemd.hpp"
#include "provisioner/systemd/online.hpp"
#include "provisioner/target/trial_record.hpp"

#include <syslog.h>

#include <algorithm>
#include <cctype>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>

namespace stdfs = std::filesystem;

namespace rtprov::cli {

namespace {

// Journal message ids (journalctl MESSAGE_ID=...), documented in rtprov(1).
constexpr const char* k_id_committed = "2b8e4f6a1c3d4e5f9a7b8c0d1e2f3a4b";
constexpr const char* k_id_fell_back = "9c1d3e5f7a2b4c6d8e0f1a3b5c7d9e2f";

// One line in the journal and on stdout alike: the message is sent past the output
// filter, and names the system gave (in a report's failing lines) stay on it.
void report(const char* id, int priority, const std::string& text) {
    const std::string message = core::one_line(text);
    systemd::journal_send({"MESSAGE=rtprov trial: " + message, std::string("MESSAGE_ID=") + id,
                           "PRIORITY=" + std::to_string(priority)});
    std::cout << "rtprov trial: " << message << std::endl;
}

// The lines of a report that say what failed, at most 'max' of them.
std::string failing_lines(const std::string& path, std::size_t max) {
    std::ifstream in(path);
    std::string line, out;
    std::size_t n = 0;
    while (n < max && std::getline(in, line)) {
        std::string lower = line;
        for (char& ch : lower)
            ch = char(std::tolower(static_cast<unsigned char>(ch)));
        if (lower.find("fail") == std::string::npos && lower.find("over") == std::string::npos)
            continue;
        std::size_t start = line.find_first_not_of(" \t");
        out += (out.empty() ? "" : "; ") + line.substr(start == std::string::npos ? 0 : start);
        ++n;
    }
    return out;
}

// A root other than '/' with no --sysroot is an image: its next boot is the trial.
bool running(const TrialCommand& c) {
    return c.root == "/" || c.sysroot != "/";
}

void end_trial(fs::Root& root, target::TrialRecord record, const std::string& phase,
               const std::string& reason) {
    record.phase = phase;
    record.reason = reason;
    record.updated_at = utc_now();
    target::write_trial_record(root, record);
}

// A plain apply of the applied profile, as a child: its boot configuration becomes the
// default, and the trial's files are retired. What a commit runs, and first boot when it
// takes back a trial no boot tried.
int run_plain_apply(const fs::RootLock& lock) {
    return run_rtprov(lock.fd(), {"apply", "--live", "--profile", core::k_applied_profile_path,
                                  "--regenerate-boot=now"});
}

// The trial boot passed: a plain apply of the applied profile makes its boot
// configuration the default (and retires the trial's files).
int commit(fs::Root& root, const fs::RootLock& lock, target::TrialRecord record) {
    int rc = run_plain_apply(lock);
    if (rc != 0) {
        // What the commit wrote may already be the default (apply keeps what it wrote):
        // no reboot into a configuration no one has judged; the box stays up, as it came
        // up in the trial, and the way on is named.
        end_trial(root, record, "commit-failed",
                  "the trial boot passed, but committing it failed ('rtprov apply --live' exit " +
                      std::to_string(rc) +
                      ", see 'journalctl -u rtprov-trial'); what it wrote is recorded: run '" +
                      core::shell_command({"rtprov", "apply", "--live", "--profile",
                                           core::k_applied_profile_path}) +
                      "' to finish it, or 'rtprov rollback --live' to undo everything; not "
                      "rebooted");
        report(k_id_fell_back, LOG_ERR,
               "commit failed: " + target::read_trial_record(root)->reason);
        return k_exit_failed;
    }
    end_trial(root, record, "committed", "");
    report(k_id_committed, LOG_INFO,
           "committed profile '" + record.profile + "': its boot configuration is the default");
    return k_exit_ok;
}

// Disarms the trial of boot loader 'loader' as its row says (boot::Loader::disarm): takes
// next_entry=rtprov-trial out of GRUB's environment block, if it is there, or, on the
// running machine, removes systemd-boot's one-shot ('bootctl set-oneshot ""'): a trial that
// ended must not be booted later. Returns what it did, "" for nothing.
std::string disarm(fs::Root& root, const std::string& loader) {
    const boot::Loader* row = boot::find_loader(loader);
    if (!row || !row->disarm)
        return "";
    const boot::TrialDisarm& how = *row->disarm;
    if (!how.argv.empty()) {
        if (root.path() != "/")
            return "";
        auto run = pipeline::command_runner(root, true, [](const std::string&) {});
        if (run(how.argv) != 0)
            throw Error(how.failed);
        return how.done;
    }
    if (how.file.empty() || !how.disarmed)
        return "";
    auto file = root.read_entry(how.file, fs::caps::k_config);
    if (!file || file->symlink)
        return "";
    std::optional<std::string> disarmed = how.disarmed(file->content);
    if (!disarmed)
        return "";
    file->content = std::move(*disarmed);
    root.write(how.file, *file);
    return how.done + root.host_path(how.file);
}

// What the loader's flag says when this boot is not the trial (the Pi firmware: not a
// tryboot).
std::string not_trial_hint(const target::TrialRecord& record) {
    const boot::Loader* loader = boot::find_loader(record.loader);
    return loader && loader->trial_boot_flag ? loader->trial_boot_flag->not_trial_hint : "";
}

int check(const TrialCommand& c) {
    if (c.root == "/" && c.sysroot != "/")
        throw UsageError("--sysroot", "the trial on this machine is judged from this machine's "
                                      "own /proc: leave out --sysroot (tests give --root too)");
    fs::Root root(c.root);
    set_test_kill_hook(root);
    fs::RootLock lock(root);
    TrialView seen = trial_view(root, c.sysroot, running(c));
    switch (seen.boot) {
    case target::TrialBoot::none:
    case target::TrialBoot::not_yet:
        std::cout << trial_text(seen);
        return k_exit_ok;
    case target::TrialBoot::did_not_start:
        // Disarmed first, then recorded: a kill in between leaves the record armed, and the
        // next boot records this again; the other way round it would leave a record that
        // says the trial is over while GRUB still boots it, and no one would judge it.
        disarm(root, seen.record->loader);
        end_trial(root, *seen.record, "fell-back",
                  "did not come up: this boot is not the trial's (no " +
                      std::string(core::k_trial_param) + "=" + seen.record->id +
                      " on the kernel command line): the trial boot panicked, hung and was "
                      "reset, did not finish its check in time, or was not booted; the default "
                      "boot configuration stays (the rest of the profile stays applied: "
                      "'rtprov status')" +
                      (seen.tryboot && !*seen.tryboot ? "; " + not_trial_hint(*seen.record)
                                                      : std::string()));
        report(k_id_fell_back, LOG_WARNING,
               "fell back: " + target::read_trial_record(root)->reason);
        return k_exit_ok;
    case target::TrialBoot::trial:
        break;
    }
    if (c.root != "/" || c.sysroot != "/")
        throw UsageError("--root",
                         "a trial boot is checked on the running system: run 'rtprov trial "
                         "check' without --root and --sysroot");
    target::TrialRecord record = *seen.record;
    stdfs::create_directories(core::k_trial_reports_dir);
    const std::string dir = core::k_trial_reports_dir;
    int selftest = run_rtprov(lock.fd(), {"selftest", "--json", dir + "/selftest.json"},
                              dir + "/selftest.txt");
    int audit = run_rtprov(lock.fd(), {"audit"}, dir + "/audit.txt");
    auto word = [](int rc) {
        return rc == k_exit_ok ? "passed" : rc == k_exit_not_passed ? "did not pass" : "error";
    };
    record.selftest = word(selftest);
    record.audit = word(audit);
    if (selftest == k_exit_ok && audit == k_exit_ok)
        return commit(root, lock, record);
    std::string why;
    if (selftest != k_exit_ok)
        why = "self-test " + record.selftest + ": " + failing_lines(dir + "/selftest.txt", 4);
    if (audit != k_exit_ok)
        why += (why.empty() ? "" : "; ") + std::string("audit ") + record.audit + ": " +
               failing_lines(dir + "/audit.txt", 4);
    end_trial(root, record, "fell-back", why + " (reports in " + dir + ")");
    report(k_id_fell_back, LOG_WARNING,
           "fell back: " + why + "; rebooting into the default boot configuration");
    systemd::request_reboot();
    return k_exit_not_passed;
}

int commit_by_hand(const TrialCommand& c) {
    fs::Root root(c.root);
    set_test_kill_hook(root);
    fs::RootLock lock(root);
    TrialView seen = trial_view(root, c.sysroot, running(c));
    if (c.root != "/" || c.sysroot != "/")
        throw UsageError("--root", "a trial is committed on the running system, from its own "
                                   "/proc: leave out --root and --sysroot");
    if (seen.boot != target::TrialBoot::trial) {
        std::string now = trial_text(seen);
        now.pop_back(); // its newline
        throw Error("this boot is not the trial (" + now +
                    "), so committing would make a boot configuration the default that has "
                    "not booted here; boot the trial first, or apply without --trial");
    }
    return commit(root, lock, *seen.record);
}

int abort_trial(const TrialCommand& c) {
    fs::Root root(c.root);
    set_test_kill_hook(root);
    fs::RootLock lock(root);
    std::optional<target::TrialRecord> record;
    try {
        record = target::read_trial_record(root);
    } catch (const Error& e) {
        // A damaged record: the trial ends anyway, and a new record says so.
        std::cerr << "rtprov: warning: " << e.what() << "\n";
        record = target::TrialRecord{"armed", "0", "unknown", "unknown", "", "", "", "", "", ""};
    }
    if (!record || record->phase != "armed") {
        std::cout << "no trial to abort: "
                  << trial_text({record, target::TrialBoot::none, std::nullopt, ""});
        return k_exit_ok;
    }
    // A damaged record does not say which loader was armed: every one that may be is (one
    // whose disarm runs a command only where that command is installed).
    std::vector<std::string> loaders = {record->loader};
    if (record->loader == "unknown") {
        loaders.clear();
        for (const boot::Loader* l : boot::loaders())
            if (l->disarm && (l->disarm->executable.empty() || root.exists(l->disarm->executable)))
                loaders.push_back(l->name());
    }
    for (const std::string& loader : loaders)
        if (std::string done = disarm(root, loader); !done.empty())
            std::cout << done << ": the next boot is the default\n";
    end_trial(root, *record, "aborted", "aborted by hand ('rtprov trial abort')");
    std::cout << "aborted the trial of profile '" << record->profile
              << "'; its files stay until 'rtprov apply' or 'rtprov rollback'\n";
    return k_exit_ok;
}

} // namespace

void take_back_trial(fs::Root& root, const fs::RootLock& lock, const std::string& why) {
    std::optional<target::TrialRecord> record = target::read_trial_record(root);
    if (!record || record->phase != "armed")
        return;
    // Disarmed, then recorded, then retired: at every step in between the next boot is
    // either not the trial or a recorded one, which rtprov-trial.service judges.
    disarm(root, record->loader);
    end_trial(root, *record, "aborted",
              "taken back by first boot: " + why +
                  "; no boot tried it, and a plain apply makes the profile's boot configuration "
                  "the default");
    if (int rc = run_plain_apply(lock); rc != 0)
        throw Error("'rtprov apply --live --profile " + std::string(core::k_applied_profile_path) +
                    "', which makes the profile's boot configuration the default instead of the "
                    "trial first boot took back (" +
                    why + "), failed (exit " + std::to_string(rc) +
                    "); its messages are in 'journalctl -u rtprov-firstboot'; fix the cause and "
                    "run it again, or 'rtprov rollback --live' to undo everything");
}

TrialView trial_view(const fs::Root& root, const std::string& sysroot, bool running) {
    TrialView seen;
    seen.record = target::read_trial_record(root);
    if (!seen.record || seen.record->phase != "armed")
        return seen;
    if (!running) {
        seen.boot = target::TrialBoot::not_yet;
        return seen;
    }
    system::SysRoot sys(sysroot);
    system::Fact<std::string> cmdline = sys.text("/proc/cmdline");
    if (!cmdline)
        throw Error("cannot tell whether this boot is the trial: " + cmdline.problem);
    system::Fact<std::string> boot_id = sys.value("/proc/sys/kernel/random/boot_id");
    if (!boot_id && !seen.record->armed_boot.empty())
        throw Error("cannot tell whether this boot is the one the trial was armed in: " +
                    boot_id.problem + "; nothing was judged");
    seen.boot = target::classify_boot(seen.record, *cmdline, boot_id ? *boot_id : "");
    if (const boot::Loader* loader = boot::find_loader(seen.record->loader);
        loader && loader->trial_boot_flag)
        read_tryboot_flag(seen, sysroot, *loader->trial_boot_flag);
    return seen;
}

void read_tryboot_flag(TrialView& view, const std::string& sysroot,
                       const boot::TrialBootFlag& flag) {
    const std::string path = flag.node + "/" + flag.property;
    system::Fact<std::string> cell = system::SysRoot(sysroot).text(path);
    if (!cell) {
        view.tryboot_problem = path + ": " + cell.problem + "; " + flag.unreadable_hint;
        return;
    }
    if (cell->size() != 4) {
        view.tryboot_problem =
            path + " holds " + std::to_string(cell->size()) + " bytes, not one 32-bit cell";
        return;
    }
    view.tryboot = std::any_of(cell->begin(), cell->end(), [](char c) { return c != 0; });
}

void add_trial_options(CLI::App& command, TrialCommand& c) {
    c.app = &command;
    c.app->require_subcommand(1);
    c.status = c.app->add_subcommand("status", "Show the trial and what this boot is to it");
    c.status->add_flag("--json", c.json, "Print JSON");
    c.check = c.app->add_subcommand(
        "check", "At boot: judge the trial boot (self-test, audit) and commit it or fall back; "
                 "on a later boot, record that the trial did not come up");
    c.commit = c.app->add_subcommand(
        "commit", "Make the trial's boot configuration the default now (in the trial boot)");
    c.abort = c.app->add_subcommand("abort", "End an armed trial before its boot");
    for (CLI::App* sub : {c.status, c.check})
        sub->add_option("--prometheus", c.prometheus_file,
                        "Also write the trial's outcome as a Prometheus textfile (node-exporter's "
                        "textfile collector), atomically; the folder must exist")
            ->check(output_file_name_problem);
    for (CLI::App* sub : {c.status, c.check, c.commit, c.abort}) {
        sub->add_option("--root", c.root, "Root the trial is recorded in (default '/')");
        sub->add_option("--sysroot", c.sysroot,
                        "Where /proc of the running system is (default '/'; tests give a "
                        "copied tree)");
    }
}

int run_trial(const TrialCommand& c) {
    if (c.status->parsed()) {
        fs::Root root(c.root);
        TrialView seen = trial_view(root, c.sysroot, running(c));
        if (!c.prometheus_file.empty())
            write_file(c.prometheus_file, trial_prometheus(seen));
        std::cout << (c.json
                          ? "{" + json_schema("trial") + ", \"trial\": " + trial_json(seen) + "}\n"
                          : trial_text(seen));
        return k_exit_ok;
    }
    if (c.check->parsed()) {
        int rc = check(c);
        if (!c.prometheus_file.empty()) {
            fs::Root root(c.root);
            write_file(c.prometheus_file,
                       trial_prometheus(trial_view(root, c.sysroot, running(c))));
        }
        return rc;
    }
    if (c.commit->parsed())
        return commit_by_hand(c);
    return abort_trial(c);
}

} // namespace rtprov::cli
