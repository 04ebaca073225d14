// SPDX-License-Identifier: Apache-2.0
#include "provisioner/pipeline/trial.hpp"

#include "provisioner/core/error.hpp"
#include "provisioner/core/plan.hpp"
#include "provisioner/core/text.hpp"
#include "provisioner/pipeline/health.hpp"
#include "provisioner/system/sysroot.hpp"

#include <algorithm>
#include <cstdlib>

namespace rtprov::pipeline {

namespace {

// What a trial boot's check leaves the commit, after the gate: the plain apply and its
// boot regeneration (update-grub, kernel-install).
constexpr unsigned k_trial_commit_s = 120;

// How long the trial boot's check may judge: rtprov-trial-deadline.target's job timeout
// (core::k_trial_deadline_s) counts from the start of the boot and reboots into the
// default when it runs out, so the gate ends before it, leaving the commit its time.
// /proc/uptime says how much of it the boot took (a little more than the job has run);
// nullopt where it cannot be read (the gate's own bound then holds alone).
std::optional<unsigned> trial_time_left(const std::string& sysroot) {
    system::Fact<std::string> uptime = system::SysRoot(sysroot).value("/proc/uptime");
    if (!uptime)
        return std::nullopt;
    const double up = std::strtod(uptime->c_str(), nullptr);
    const double left = double(core::k_trial_deadline_s) - up - k_trial_commit_s;
    return left > 0 ? static_cast<unsigned>(left) : 0u;
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
    // The health gate's judgement (pipeline/health.hpp): one verdict rule for both.
    target::TrialRecord record = *seen.record;
    HealthRequest gate;
    gate.reports_dir = core::k_trial_reports_dir;
    gate.at_most_s = trial_time_left(machine.sysroot);
    const Health health = judge_health(machine, gate);
    record.selftest = health.selftest.outcome;
    record.audit = health.audit.outcome;
    if (health.verdict == HealthVerdict::healthy)
        return commit(machine, record);
    const std::string why = core::join(health.reasons, "; ");
    end_trial(machine, record, "fell-back", why + " (reports in " + gate.reports_dir + ")");
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
