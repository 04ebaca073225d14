// SPDX-License-Identifier: Apache-2.0
// rtprov firstboot, run by rtprov-firstboot.service until it has finished once: choose
// the profile, apply it live, reboot once if the running kernel lacks what was planned,
// then self-test and audit, keep the reports and record the outcome. Each step is an
// rtprov command run as a child, so its output lands in the unit's journal as it would
// on a terminal, and the steps are the ones an admin runs by hand.
#include "provisioner/audit/system_view.hpp"
#include "provisioner/boot/loader.hpp"
#include "provisioner/cli/child_rtprov.hpp"
#include "provisioner/cli/commands.hpp"
#include "provisioner/cli/firstboot_output.hpp"
#include "provisioner/cli/flow_log.hpp"
#include "provisioner/core/board_match.hpp"
#include "provisioner/core/error.hpp"
#include "provisioner/core/text.hpp"
#include "provisioner/fs/root_lock.hpp"
#include "provisioner/live/board_facts.hpp"
#include "provisioner/pipeline/applied_system.hpp"
#include "provisioner/pipeline/profile_search.hpp"
#include "provisioner/pipeline/target_root.hpp"
#include "provisioner/pipeline/trial.hpp"
#include "provisioner/profile/firstboot_config.hpp"
#include "provisioner/profile/profile_loader.hpp"
#include "provisioner/systemd/libsystemd.hpp"
#include "provisioner/systemd/online.hpp"
#include "provisioner/target/firstboot_state.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <syslog.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

namespace stdfs = std::filesystem;

namespace rtprov::cli {

namespace {

// Journal message ids (journalctl MESSAGE_ID=...), documented in docs/firstboot.md.
constexpr const char* k_id_start = "8d2f6c1a4b7e4e0f9a3c5d7e1f2a4b6c";
constexpr const char* k_id_applied = "3e9a1c5f7b2d4a6e8c0f1a3b5d7e9f1b";
constexpr const char* k_id_reboot = "c4a7e2f9d1b34c6a8e5f7a9b1c3d5e7f";
constexpr const char* k_id_missing = "a1f3c5e7b9d24f6a8c0e2b4d6f8a1c3e";
constexpr const char* k_id_done = "5f7b9d1e3a6c4e8f0b2d4f6a8c1e3a5d";
constexpr const char* k_id_failed = "e6c8a0f2b4d64a8c1e3f5b7d9a2c4e6f";

// True when file descriptor 'fd' is the journal stream systemd gave the unit
// ($JOURNAL_STREAM, systemd.exec(5)).
bool is_journal(int fd) {
    const char* stream = std::getenv("JOURNAL_STREAM");
    struct stat st {};
    return stream && ::fstat(fd, &st) == 0 &&
           is_journal_stream(stream, std::uint64_t(st.st_dev), std::uint64_t(st.st_ino));
}

// Progress for 'systemctl status' (sd_notify STATUS=, needs NotifyAccess=main in a
// oneshot unit, systemd.service(5)) and a line on stdout, which is the journal in the unit.
void progress(const std::string& status) {
    systemd::notify("rtprov first boot: " + status);
    std::cout << "rtprov firstboot: " << status << std::endl;
}

// A step worth finding later: the status line, and a structured journal entry with
// 'id' (docs/firstboot.md); printed too only where stdout is not the journal, so the
// journal has it once.
// The message is one line (core::one_line) in the journal as on stdout: it is sent past
// the output filter, and may name the board as its firmware does.
void report(const char* id, int priority, const std::string& text,
            const std::string& extra_field = "") {
    const std::string message = core::one_line(text);
    systemd::notify("rtprov first boot: " + message);
    Delivery delivery = deliver(is_journal(STDOUT_FILENO));
    if (delivery.send) {
        std::vector<std::string> fields = {"MESSAGE=rtprov first boot: " + message,
                                           std::string("MESSAGE_ID=") + id,
                                           "PRIORITY=" + std::to_string(priority)};
        if (!extra_field.empty())
            fields.push_back(extra_field);
        if (!systemd::journal_send(fields))
            delivery.print = true; // not sent: the message on stdout at least
    }
    if (delivery.print)
        std::cout << "rtprov firstboot: " << message << std::endl;
}

// As 'rtprov plan --live' looks profiles up (no --profile-dir at first boot).
profile::SearchPath search_path() {
    static const fs::Root system_root("/");
    return pipeline::profile_search_path({}, &system_root, data_dir("profiles"));
}

// The profile named in the configuration, or the one whose board.match fits best.
std::string choose_profile(const profile::FirstbootConfig& config, const core::BoardFacts& facts) {
    if (!config.profile.empty())
        return config.profile;
    std::vector<core::BoardCandidate> candidates;
    for (const profile::ProfileEntry& entry : profile::list_profiles(search_path())) {
        if (entry.hidden)
            continue;
        try {
            candidates.push_back(
                {entry.name, profile::load_profile(entry.name, search_path()).board.match});
        } catch (const Error& e) {
            std::cerr << "rtprov: warning: profile " << quoted(entry.name)
                      << " left out of board detection: " << e.what() << "\n";
        }
    }
    return core::choose_board(candidates, facts);
}

} // namespace

void add_firstboot_options(CLI::App& command, FirstbootCommand& c) {
    c.app = &command;
}

int run_firstboot(const FirstbootCommand&) {
    auto started = std::chrono::steady_clock::now();
    fs::Root root("/");
    fs::RootLock lock(root);
    target::FirstbootState state =
        target::read_firstboot_state(root).value_or(target::FirstbootState{});
    if (state.phase == "done" || state.phase == "failed") {
        std::cout << "rtprov firstboot: already ran (" << state.phase << " at " << state.updated_at
                  << "); 'rtprov status' shows the outcome\n";
        return k_exit_ok;
    }
    auto save = [&](const std::string& phase) {
        state.phase = phase;
        state.updated_at = utc_now();
        target::write_firstboot_state(root, state);
    };
    try {
        profile::FirstbootConfig config;
        if (auto file = root.read(target::k_firstboot_config, fs::caps::k_config))
            config = profile::parse_firstboot_config(file->content, target::k_firstboot_config);
        core::BoardFacts facts = live::read_board_facts("/");
        if (state.phase.empty()) {
            progress("choosing the profile for " + core::describe(facts));
            state.profile = choose_profile(config, facts);
            report(k_id_start, LOG_INFO,
                   "applying profile '" + state.profile + "' on " + core::describe(facts));
            std::vector<std::string> args = {"apply", "--live", "--profile", state.profile,
                                             "--regenerate-boot=now"};
            for (const std::string& set : config.sets)
                args.insert(args.end(), {"--set", set});
            if (config.trial)
                args.push_back("--trial"); // every boot loader rtprov writes for has one
            if (config.install_packages)
                args.push_back("--install-packages");
            if (int rc = run_rtprov(lock.fd(), args); rc != 0)
                throw Error("'rtprov apply' failed (exit " + std::to_string(rc) +
                            "); its messages are in 'journalctl -u rtprov-firstboot'; fix the "
                            "cause, then '" +
                            core::shell_command({"rm", "-r", target::k_firstboot_dir}) +
                            "' and reboot to run first boot again");
        }
        pipeline::TrialView trial = pipeline::trial_view(root, "/", true);
        if (state.phase == "rebooting" && trial.record) {
            // rtprov-trial.service ran before (it judges the trial boot); its verdict is
            // first boot's.
            const target::TrialRecord& r = *trial.record;
            state.trial = r.phase == "committed" ? "committed"
                          : r.phase == "armed"   ? "did not come up: this boot is not the trial's"
                                                 : r.phase + ": " + r.reason;
            if (r.phase != "committed")
                report(k_id_missing, LOG_WARNING,
                       "the trial of the new boot configuration " + state.trial +
                           "; the box stays on its previous boot configuration");
        }
        auto applied = pipeline::load_applied_system("/", data_dir("apps"));
        if (!applied)
            throw Error("no applied profile in /etc/rtprov/profile.yaml after apply");
        const audit::SystemView kernel = audit::read_kernel_view("/");
        if (!kernel.cmdline)
            throw Error("cannot tell whether the running kernel has the planned parameters: " +
                        kernel.cmdline.problem);
        pipeline::Missing missing = pipeline::missing_in_running_kernel(*applied, kernel);
        target::RebootDecision decision =
            target::decide_reboot(state, missing.reboot_helps, config.reboot);
        auto elapsed_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                              std::chrono::steady_clock::now() - started)
                              .count();
        report(k_id_applied, LOG_INFO,
               "profile '" + state.profile + "' applied in " + std::to_string(elapsed_ms) + " ms",
               "RTPROV_ELAPSED_MS=" + std::to_string(elapsed_ms));
        if (decision.reboot) {
            state.reboots += 1;
            state.reboot_cause = "the running kernel lacks " + missing.reboot_helps;
            if (trial.record && trial.record->phase == "armed")
                state.reboot_cause += "; the next boot tries it once (a trial)";
            save("rebooting");
            report(k_id_reboot, LOG_NOTICE, "rebooting once: " + state.reboot_cause);
            // A trial may be a one-shot flag of the reboot itself (the Pi firmware's
            // tryboot): the loader's row says which.
            const boot::Loader* loader = trial.record && trial.record->phase == "armed"
                                             ? boot::find_loader(trial.record->loader)
                                             : nullptr;
            systemd::request_reboot(loader ? loader->trial_reboot_argument : "");
            return k_exit_ok;
        }
        // No reboot tries the trial this first boot's apply armed: taken back, so that the
        // next reboot, days on, is not a trial no one asked for.
        if (trial.boot == target::TrialBoot::not_yet) {
            progress("taking back the trial: " + decision.untried);
            ChildRtprov rtprov(lock);
            pipeline::SystemdBus manager;
            FirstbootLog log;
            pipeline::Machine machine{
                root,   lock,    "/",
                true,   true,    pipeline::command_runner(root, true, [](const std::string&) {}),
                rtprov, manager, log,
                utc_now};
            pipeline::take_back_trial(machine, decision.untried);
            state.trial = "not run: " + decision.untried;
        }
        state.cmdline = decision.cmdline;
        if (!missing.reboot_cannot_help.empty())
            state.cmdline = (decision.cmdline == "ok" ? std::string() : decision.cmdline + "; ") +
                            "missing, a reboot would not help: " + missing.reboot_cannot_help;
        if (state.cmdline != "ok")
            report(k_id_missing, LOG_WARNING, "the running kernel: " + state.cmdline);

        stdfs::create_directories(target::k_firstboot_dir);
        const std::string dir = target::k_firstboot_dir;
        state.selftest = "not run";
        if (config.selftest_s > 0) {
            progress("self-test");
            int rc =
                run_rtprov(lock.fd(), {"selftest", "--duration", std::to_string(config.selftest_s),
                                       "--pi-probe", std::to_string(config.pi_probe_s), "--json",
                                       dir + "/selftest.json"});
            state.selftest = rc == k_exit_ok           ? "passed"
                             : rc == k_exit_not_passed ? "did not pass"
                                                       : "error";
        }
        progress("audit");
        int rc = run_rtprov(lock.fd(), {"audit", "--json"}, dir + "/.audit.json.tmp");
        stdfs::rename(dir + "/.audit.json.tmp", dir + "/audit.json");
        state.audit = rc == k_exit_ok           ? "passed"
                      : rc == k_exit_not_passed ? "did not pass"
                                                : "error";
        save("done");
        bool passed = (state.trial.empty() || state.trial == "committed" ||
                       state.trial.starts_with("not run: ")) &&
                      state.cmdline == "ok" && state.selftest != "did not pass" &&
                      state.selftest != "error" && state.audit == "passed";
        std::string summary = "done: profile '" + state.profile + "', kernel command line " +
                              state.cmdline + ", self-test " + state.selftest + ", audit " +
                              state.audit + (state.trial.empty() ? "" : ", trial " + state.trial) +
                              "; reports in " + dir;
        report(k_id_done, passed ? LOG_INFO : LOG_WARNING, summary);
        return passed ? k_exit_ok : k_exit_not_passed;
    } catch (const std::exception& e) {
        state.reason = e.what();
        try {
            save("failed");
        } catch (const std::exception& also) {
            std::cerr << "rtprov: warning: cannot record the failure: " << also.what() << "\n";
        }
        const bool sent = systemd::journal_send(
            {std::string("MESSAGE=rtprov first boot: failed: ") + e.what(),
             std::string("MESSAGE_ID=") + k_id_failed, "PRIORITY=" + std::to_string(LOG_ERR)});
        systemd::notify(std::string("rtprov first boot failed: ") + e.what());
        // On a terminal main() prints the error; where stderr is the journal the entry
        // above is that message already, unless it could not be sent.
        if (!sent || !is_journal(STDERR_FILENO))
            throw;
        return k_exit_failed;
    }
}

} // namespace rtprov::cli
