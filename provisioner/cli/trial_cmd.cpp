// SPDX-License-Identifier: Apache-2.0
// rtprov trial: the trial of a boot configuration that 'apply --trial' armed. 'check' is
// what rtprov-trial.service runs at every boot while a trial record exists
// (pipeline::check_trial: on the trial boot the self-test and the audit as child
// processes, then the commit or the fall-back; on a later boot that was not the trial,
// the record that it never came up); 'commit' and 'abort' end it by hand.

#include "provisioner/cli/child_rtprov.hpp"
#include "provisioner/cli/commands.hpp"
#include "provisioner/cli/flow_log.hpp"
#include "provisioner/cli/json.hpp"
#include "provisioner/cli/render.hpp"
#include "provisioner/core/error.hpp"
#include "provisioner/fs/root.hpp"
#include "provisioner/fs/root_lock.hpp"
#include "provisioner/pipeline/target_root.hpp"
#include "provisioner/pipeline/trial.hpp"

#include <iostream>
#include <optional>

namespace rtprov::cli {

namespace {

// A root other than '/' with no --sysroot is an image: its next boot is the trial.
bool running(const TrialCommand& c) {
    return c.root == "/" || c.sysroot != "/";
}

// The trial's root, locked, and the machine the flows of pipeline/trial.hpp act on.
struct TrialMachine {
    explicit TrialMachine(const TrialCommand& c)
        : root(c.root), lock(prepared(root)), rtprov(lock) {}

    fs::Root root;
    fs::RootLock lock;
    ChildRtprov rtprov;
    pipeline::SystemdBus manager;
    TrialLog log;

    // The machine as --root and --sysroot name it: booted unless it is an image (running());
    // this machine's own, whose trial boot is judged here, only with both left out; bootctl
    // runs only where the root is '/'.
    pipeline::Machine machine(const TrialCommand& c) {
        target::CommandRunner run_command;
        if (root.path() == "/")
            run_command = pipeline::command_runner(root, true, [](const std::string&) {});
        return {root,        lock,   c.sysroot, running(c), c.root == "/" && c.sysroot == "/",
                run_command, rtprov, manager,   log,        utc_now};
    }

  private:
    static const fs::Root& prepared(fs::Root& root) {
        set_test_kill_hook(root);
        return root;
    }
};

int check(const TrialCommand& c) {
    if (c.root == "/" && c.sysroot != "/")
        throw UsageError("--sysroot", "the trial on this machine is judged from this machine's "
                                      "own /proc: leave out --sysroot (tests give --root too)");
    TrialMachine on(c);
    pipeline::Machine machine = on.machine(c);
    pipeline::TrialView seen;
    switch (pipeline::check_trial(machine, seen)) {
    case pipeline::TrialCheck::nothing:
        std::cout << trial_text(seen);
        return k_exit_ok;
    case pipeline::TrialCheck::did_not_come_up:
    case pipeline::TrialCheck::committed:
        return k_exit_ok;
    case pipeline::TrialCheck::commit_failed:
        return k_exit_failed;
    case pipeline::TrialCheck::fell_back:
        break;
    }
    return k_exit_not_passed;
}

int commit_by_hand(const TrialCommand& c) {
    TrialMachine on(c);
    pipeline::Machine machine = on.machine(c);
    pipeline::TrialView seen;
    std::optional<pipeline::TrialCheck> done = pipeline::commit_trial(machine, seen);
    if (!done) {
        std::string now = trial_text(seen);
        now.pop_back(); // its newline
        throw Error("this boot is not the trial (" + now +
                    "), so committing would make a boot configuration the default that has "
                    "not booted here; boot the trial first, or apply without --trial");
    }
    return *done == pipeline::TrialCheck::committed ? k_exit_ok : k_exit_failed;
}

int abort_trial(const TrialCommand& c) {
    TrialMachine on(c);
    pipeline::Machine machine = on.machine(c);
    pipeline::TrialAbort aborted = pipeline::abort_trial(machine);
    if (!aborted.aborted) {
        std::cout << "no trial to abort: "
                  << trial_text({aborted.record, target::TrialBoot::none, std::nullopt, ""});
        return k_exit_ok;
    }
    std::cout << "aborted the trial of profile '" << aborted.record->profile
              << "'; its files stay until 'rtprov apply' or 'rtprov rollback'\n";
    return k_exit_ok;
}

} // namespace

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
        pipeline::TrialView seen = pipeline::trial_view(root, c.sysroot, running(c));
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
                       trial_prometheus(pipeline::trial_view(root, c.sysroot, running(c))));
        }
        return rc;
    }
    if (c.commit->parsed())
        return commit_by_hand(c);
    return abort_trial(c);
}

} // namespace rtprov::cli
