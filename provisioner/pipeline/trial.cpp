// SPDX-License-Identifier: Apache-2.0
#include "provisioner/pipeline/trial.hpp"

#include "provisioner/core/error.hpp"
#include "provisioner/core/plan.hpp"
#include "provisioner/core/text.hpp"
#include "provisioner/pipeline/applied_system.hpp"
#include "provisioner/system/sysroot.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>

namespace stdfs = std::filesystem;

namespace rtprov::pipeline {

namespace {

// The exit codes of the children (rtprov(1)): 0 passed, 3 ran and did not pass.
constexpr int k_passed = 0;
constexpr int k_not_passed = 3;

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

void end_trial(Machine& machine, target::TrialRecord record, const std::string& phase,
               const std::string& reason) {
    record.phase = phase;
    record.reason = reason;
    record.updated_at = machine.utc_now();
    target::write_trial_record(machine.root, record);
}

// A plain apply of the applied profile, as a child: its boot configuration becomes the
// default, and the trial's files are retired. What a commit runs, and first boot when it
// takes back a trial no boot tried.
int run_plain_apply(Machine& machine) {
    return machine.rtprov.run(
        {"apply", "--live", "--profile", core::k_applied_profile_path, "--regenerate-boot=now"});
}

// The trial boot passed: a plain apply of the applied profile makes its boot
// configuration the default (and retires the trial's files).
TrialCheck commit(Machine& machine, target::TrialRecord record) {
    int rc = run_plain_apply(machine);
    if (rc != 0) {
        // What the commit wrote may already be the default (apply keeps what it wrote):
        // no reboot into a configuration no one has judged; the box stays up, as it came
        // up in the trial, and the way on is named.
        end_trial(machine, record, "commit-failed",
                  "the trial boot passed, but committing it failed ('rtprov apply --live' exit " +
                      std::to_string(rc) +
                      ", see 'journalctl -u rtprov-trial'); what it wrote is recorded: run '" +
                      core::shell_command({"rtprov", "apply", "--live", "--profile",
                                           core::k_applied_profile_path}) +
                      "' to finish it, or 'rtprov rollback --live' to undo everything; not "
                      "rebooted");
        machine.log.event(FlowEvent::trial_fell_back, Priority::error,
                          "commit failed: " + target::read_trial_record(machine.root)->reason);
        return TrialCheck::commit_failed;
    }
    end_trial(machine, record, "committed", "");
    machine.log.event(FlowEvent::trial_committed, Priority::info,
                      "committed profile '" + record.profile +
                          "': its boot configuration is the default");
    return TrialCheck::committed;
}

// What the loader's flag says when this boot is not the trial (the Pi firmware: not a
// tryboot).
std::string not_trial_hint(const target::TrialRecord& record) {
    const boot::Loader* loader = boot::find_loader(record.loader);
    return loader && loader->trial_boot_flag ? loader->trial_boot_flag->not_trial_hint : "";
}

} // namespace

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

std::string disarm_trial(fs::Root& root, const std::string& loader,
                         const target::CommandRunner& run_command) {
    const boot::Loader* row = boot::find_loader(loader);
    if (!row || !row->disarm)
        return "";
    const boot::TrialDisarm& how = *row->disarm;
    if (!how.argv.empty()) {
        if (!run_command)
            return "";
        if (run_command(how.argv) != 0)
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

TrialCheck check_trial(Machine& machine, TrialView& view) {
    fs::Root& root = machine.root;
    view = trial_view(root, machine.sysroot, machine.booted);
    const TrialView& seen = view;
    switch (seen.boot) {
    case target::TrialBoot::none:
    case target::TrialBoot::not_yet:
        return TrialCheck::nothing;
    case target::TrialBoot::did_not_start:
        // Disarmed first, then recorded: a kill in between leaves the record armed, and the
        // next boot records this again; the other way round it would leave a record that
        // says the trial is over while GRUB still boots it, and no one would judge it.
        disarm_trial(root, seen.record->loader, machine.run_command);
        end_trial(machine, *seen.record, "fell-back",
                  "did not come up: this boot is not the trial's (no " +
                      std::string(core::k_trial_param) + "=" + seen.record->id +
                      " on the kernel command line): the trial boot panicked, hung and was "
                      "reset, did not finish its check in time, or was not booted; the default "
                      "boot configuration stays (the rest of the profile stays applied: "
                      "'rtprov status')" +
                      (seen.tryboot && !*seen.tryboot ? "; " + not_trial_hint(*seen.record)
                                                      : std::string()));
        machine.log.event(FlowEvent::trial_fell_back, Priority::warning,
                          "fell back: " + target::read_trial_record(root)->reason);
        return TrialCheck::did_not_come_up;
    case target::TrialBoot::trial:
        break;
    }
    if (!machine.running)
        throw UsageError("--root",
                         "a trial boot is checked on the running system: run 'rtprov trial "
                         "check' without --root and --sysroot");
    target::TrialRecord record = *seen.record;
    const std::string dir = core::k_trial_reports_dir, host_dir = root.host_path(dir);
    stdfs::create_directories(host_dir);
    int selftest = machine.rtprov.run(
        selftest_command(machine.sysroot, {"--json", host_dir + "/selftest.json"}),
        host_dir + "/selftest.txt");
    int audit = machine.rtprov.run({"audit"}, host_dir + "/audit.txt");
    auto word = [](int rc) {
        return rc == k_passed ? "passed" : rc == k_not_passed ? "did not pass" : "error";
    };
    record.selftest = word(selftest);
    record.audit = word(audit);
    if (selftest == k_passed && audit == k_passed)
        return commit(machine, record);
    std::string why;
    if (selftest != k_passed)
        why = "self-test " + record.selftest + ": " + failing_lines(host_dir + "/selftest.txt", 4);
    if (audit != k_passed)
        why += (why.empty() ? "" : "; ") + std::string("audit ") + record.audit + ": " +
               failing_lines(host_dir + "/audit.txt", 4);
    end_trial(machine, record, "fell-back", why + " (reports in " + dir + ")");
    machine.log.event(FlowEvent::trial_fell_back, Priority::warning,
                      "fell back: " + why + "; rebooting into the default boot configuration");
    machine.manager.reboot("");
    return TrialCheck::fell_back;
}

std::optional<TrialCheck> commit_trial(Machine& machine, TrialView& view) {
    view = trial_view(machine.root, machine.sysroot, machine.booted);
    if (!machine.running)
        throw UsageError("--root", "a trial is committed on the running system, from its own "
                                   "/proc: leave out --root and --sysroot");
    if (view.boot != target::TrialBoot::trial)
        return std::nullopt;
    return commit(machine, *view.record);
}

TrialAbort abort_trial(Machine& machine) {
    fs::Root& root = machine.root;
    TrialAbort out;
    try {
        out.record = target::read_trial_record(root);
    } catch (const Error& e) {
        // A damaged record: the trial ends anyway, and a new record says so.
        machine.log.warning(e.what());
        out.record =
            target::TrialRecord{"armed", "0", "unknown", "unknown", "", "", "", "", "", ""};
    }
    if (!out.record || out.record->phase != "armed")
        return out;
    // A damaged record does not say which loader was armed: every one that may be is (one
    // whose disarm runs a command only where that command is installed).
    std::vector<std::string> loaders = {out.record->loader};
    if (out.record->loader == "unknown") {
        loaders.clear();
        for (const boot::Loader* l : boot::loaders())
            if (l->disarm && (l->disarm->executable.empty() || root.exists(l->disarm->executable)))
                loaders.push_back(l->name());
    }
    for (const std::string& loader : loaders)
        if (std::string done = disarm_trial(root, loader, machine.run_command); !done.empty())
            machine.log.line(done + ": the next boot is the default");
    end_trial(machine, *out.record, "aborted", "aborted by hand ('rtprov trial abort')");
    out.aborted = true;
    return out;
}

void take_back_trial(Machine& machine, const std::string& why) {
    std::optional<target::TrialRecord> record = target::read_trial_record(machine.root);
    if (!record || record->phase != "armed")
        return;
    // Disarmed, then recorded, then retired: at every step in between the next boot is
    // either not the trial or a recorded one, which rtprov-trial.service judges.
    disarm_trial(machine.root, record->loader, machine.run_command);
    end_trial(machine, *record, "aborted",
              "taken back by first boot: " + why +
                  "; no boot tried it, and a plain apply makes the profile's boot configuration "
                  "the default");
    if (int rc = run_plain_apply(machine); rc != 0)
        throw Error("'rtprov apply --live --profile " + std::string(core::k_applied_profile_path) +
                    "', which makes the profile's boot configuration the default instead of the "
                    "trial first boot took back (" +
                    why + "), failed (exit " + std::to_string(rc) +
                    "); its messages are in 'journalctl -u rtprov-firstboot'; fix the cause and "
                    "run it again, or 'rtprov rollback --live' to undo everything");
}

} // namespace rtprov::pipeline
