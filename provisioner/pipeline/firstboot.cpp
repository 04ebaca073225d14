// SPDX-License-Identifier: Apache-2.0
#include "provisioner/pipeline/firstboot.hpp"

#include "provisioner/audit/system_view.hpp"
#include "provisioner/boot/loader.hpp"
#include "provisioner/core/board_match.hpp"
#include "provisioner/core/error.hpp"
#include "provisioner/core/text.hpp"
#include "provisioner/live/board_facts.hpp"
#include "provisioner/pipeline/applied_system.hpp"
#include "provisioner/pipeline/profile_search.hpp"
#include "provisioner/pipeline/trial.hpp"
#include "provisioner/profile/app_loader.hpp"
#include "provisioner/profile/firstboot_config.hpp"
#include "provisioner/profile/profile_loader.hpp"

#include <filesystem>

namespace stdfs = std::filesystem;

namespace rtprov::pipeline {

namespace {

// The exit codes of the children (rtprov(1)): 0 passed, 3 ran and did not pass.
std::string outcome_word(int rc) {
    return rc == 0 ? "passed" : rc == 3 ? "did not pass" : "error";
}

// The profile named in the configuration, or the one whose board.match fits best, looked
// up as 'rtprov plan --live' does (no --profile-dir at first boot).
std::string choose_profile(Machine& machine, const FirstbootData& data,
                           const profile::FirstbootConfig& config, const core::BoardFacts& facts) {
    if (!config.profile.empty())
        return config.profile;
    const profile::SearchPath path = profile_search_path({}, &machine.root, data.builtin_profiles);
    std::vector<core::BoardCandidate> candidates;
    for (const profile::ProfileEntry& entry : profile::list_profiles(path)) {
        if (entry.hidden)
            continue;
        try {
            candidates.push_back({entry.name, profile::load_profile(entry.name, path).board.match});
        } catch (const Error& e) {
            machine.log.warning("profile " + quoted(entry.name) +
                                " left out of board detection: " + e.what());
        }
    }
    return core::choose_board(candidates, facts);
}

// The steps after the state said where to go on from; throws what fails.
FirstbootOutcome go_on(Machine& machine, const FirstbootData& data, target::FirstbootState& state) {
    fs::Root& root = machine.root;
    FlowLog& log = machine.log;
    auto save = [&](const std::string& phase) {
        state.phase = phase;
        state.updated_at = machine.utc_now();
        target::write_firstboot_state(root, state);
    };
    profile::FirstbootConfig config;
    if (auto file = root.read(target::k_firstboot_config, fs::caps::k_config))
        config = profile::parse_firstboot_config(file->content, target::k_firstboot_config);
    core::BoardFacts facts = live::read_board_facts(machine.sysroot);
    if (state.phase.empty()) {
        log.progress("choosing the profile for " + core::describe(facts));
        state.profile = choose_profile(machine, data, config, facts);
        log.event(FlowEvent::firstboot_start, Priority::info,
                  "applying profile '" + state.profile + "' on " + core::describe(facts));
        std::vector<std::string> args = {"apply", "--live", "--profile", state.profile,
                                         "--regenerate-boot=now"};
        for (const std::string& set : config.sets)
            args.insert(args.end(), {"--set", set});
        if (config.trial)
            args.push_back("--trial"); // every boot loader rtprov writes for has one
        if (config.install_packages)
            args.push_back("--install-packages");
        if (int rc = machine.rtprov.run(args); rc != 0)
            throw Error("'rtprov apply' failed (exit " + std::to_string(rc) +
                        "); its messages are in 'journalctl -u rtprov-firstboot'; fix the "
                        "cause, then '" +
                        core::shell_command({"rm", "-r", target::k_firstboot_dir}) +
                        "' and reboot to run first boot again");
    }
    TrialView trial = trial_view(root, machine.sysroot, true);
    if (state.phase == "rebooting" && trial.record) {
        // rtprov-trial.service ran before (it judges the trial boot); its verdict is
        // first boot's.
        const target::TrialRecord& r = *trial.record;
        state.trial = r.phase == "committed" ? "committed"
                      : r.phase == "armed"   ? "did not come up: this boot is not the trial's"
                                             : r.phase + ": " + r.reason;
        if (r.phase != "committed")
            log.event(FlowEvent::firstboot_missing, Priority::warning,
                      "the trial of the new boot configuration " + state.trial +
                          "; the box stays on its previous boot configuration");
    }
    auto applied = load_applied_system(machine.sysroot, data.apps);
    if (!applied)
        throw Error("no applied profile in /etc/rtprov/profile.yaml after apply");
    const audit::SystemView kernel = audit::read_kernel_view(machine.sysroot);
    if (!kernel.cmdline)
        throw Error("cannot tell whether the running kernel has the planned parameters: " +
                    kernel.cmdline.problem);
    Missing missing = missing_in_running_kernel(*applied, kernel);
    target::RebootDecision decision =
        target::decide_reboot(state, missing.reboot_helps, config.reboot);
    auto elapsed_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::steady_clock::now() - data.started)
                          .count();
    log.event(FlowEvent::firstboot_applied, Priority::info,
              "profile '" + state.profile + "' applied in " + std::to_string(elapsed_ms) + " ms",
              "RTPROV_ELAPSED_MS=" + std::to_string(elapsed_ms));
    if (decision.reboot) {
        state.reboots += 1;
        state.reboot_cause = "the running kernel lacks " + missing.reboot_helps;
        if (trial.record && trial.record->phase == "armed")
            state.reboot_cause += "; the next boot tries it once (a trial)";
        save("rebooting");
        log.event(FlowEvent::firstboot_reboot, Priority::notice,
                  "rebooting once: " + state.reboot_cause);
        // A trial may be a one-shot flag of the reboot itself (the Pi firmware's
        // tryboot): the loader's row says which.
        const boot::Loader* loader = trial.record && trial.record->phase == "armed"
                                         ? boot::find_loader(trial.record->loader)
                                         : nullptr;
        machine.manager.reboot(loader ? loader->trial_reboot_argument : "");
        return FirstbootOutcome::rebooting;
    }
    // No reboot tries the trial this first boot's apply armed: taken back, so that the
    // next reboot, days on, is not a trial no one asked for.
    if (trial.boot == target::TrialBoot::not_yet) {
        log.progress("taking back the trial: " + decision.untried);
        take_back_trial(machine, decision.untried);
        state.trial = "not run: " + decision.untried;
    }
    state.cmdline = decision.cmdline;
    if (!missing.reboot_cannot_help.empty())
        state.cmdline = (decision.cmdline == "ok" ? std::string() : decision.cmdline + "; ") +
                        "missing, a reboot would not help: " + missing.reboot_cannot_help;
    if (state.cmdline != "ok")
        log.event(FlowEvent::firstboot_missing, Priority::warning,
                  "the running kernel: " + state.cmdline);

    const std::string dir = target::k_firstboot_dir, host_dir = root.host_path(dir);
    stdfs::create_directories(host_dir);
    // The players' buffers, chosen from what this boot measures and proven by the
    // underrun test before they are written (docs/audio-buffers.md).
    const std::vector<core::AppKnowledge> apps = profile::load_apps(data.apps);
    if (!auto_players(*applied, apps).empty()) {
        if (!data.read_report) {
            state.buffers = "not chosen: this rtprov cannot read its self-test reports";
        } else {
            BufferChoiceOutcome chosen = choose_player_buffers(
                machine, *applied, apps, data.read_report, state.profile, config.sets, host_dir,
                config.selftest_s > 0 ? config.selftest_s : k_buffer_test_s);
            state.buffers = chosen.summary;
            core::FileState details;
            details.content = chosen.details;
            root.write(dir + "/buffers.txt", details);
        }
    }
    state.selftest = "not run";
    if (config.selftest_s > 0) {
        log.progress("self-test");
        state.selftest = outcome_word(machine.rtprov.run(
            selftest_command(machine.sysroot, {"--duration", std::to_string(config.selftest_s),
                                               "--pi-probe", std::to_string(config.pi_probe_s),
                                               "--json", host_dir + "/selftest.json"})));
    }
    log.progress("audit");
    int rc = machine.rtprov.run({"audit", "--json"}, host_dir + "/.audit.json.tmp");
    stdfs::rename(host_dir + "/.audit.json.tmp", host_dir + "/audit.json");
    state.audit = outcome_word(rc);
    save("done");
    bool passed = (state.trial.empty() || state.trial == "committed" ||
                   state.trial.starts_with("not run: ")) &&
                  state.cmdline == "ok" && state.selftest != "did not pass" &&
                  state.selftest != "error" && state.audit == "passed";
    std::string summary = "done: profile '" + state.profile + "', kernel command line " +
                          state.cmdline + ", self-test " + state.selftest + ", audit " +
                          state.audit + (state.trial.empty() ? "" : ", trial " + state.trial) +
                          "; reports in " + dir;
    log.event(FlowEvent::firstboot_done, passed ? Priority::info : Priority::warning, summary);
    return passed ? FirstbootOutcome::passed : FirstbootOutcome::not_passed;
}

} // namespace

Firstboot run_firstboot(Machine& machine, const FirstbootData& data) {
    Firstboot out;
    out.state = target::read_firstboot_state(machine.root).value_or(target::FirstbootState{});
    if (out.state.phase == "done" || out.state.phase == "failed") {
        out.outcome = FirstbootOutcome::already_ran;
        return out;
    }
    try {
        out.outcome = go_on(machine, data, out.state);
        return out;
    } catch (const std::exception& e) {
        out.state.reason = e.what();
        try {
            out.state.phase = "failed";
            out.state.updated_at = machine.utc_now();
            target::write_firstboot_state(machine.root, out.state);
        } catch (const std::exception& also) {
            machine.log.warning(std::string("cannot record the failure: ") + also.what());
        }
        if (!machine.log.failed(e.what()))
            throw;
        out.outcome = FirstbootOutcome::failed;
        return out;
    }
}

} // namespace rtprov::pipeline
