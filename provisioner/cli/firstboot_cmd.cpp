// SPDX-License-Identifier: Apache-2.0
// rtprov firstboot, run by rtprov-firstboot.service until it has finished once
// (pipeline::run_firstboot): choose the profile, apply it live, reboot once if the running
// kernel lacks what was planned, then self-test and audit, keep the reports and record
// the outcome. Each step is an rtprov command run as a child, so its output lands in the
// unit's journal as it would on a terminal; first boot's own steps go to the journal once
// (FirstbootLog).
#include "provisioner/cli/child_rtprov.hpp"
#include "provisioner/cli/commands.hpp"
#include "provisioner/cli/flow_log.hpp"
#include "provisioner/cli/selftest_render.hpp"
#include "provisioner/fs/root_lock.hpp"
#include "provisioner/pipeline/firstboot.hpp"
#include "provisioner/pipeline/target_root.hpp"

#include <chrono>
#include <iostream>

namespace rtprov::cli {

void add_firstboot_options(CLI::App& command, FirstbootCommand& c) {
    c.app = &command;
}

int run_firstboot(const FirstbootCommand&) {
    const auto started = std::chrono::steady_clock::now();
    fs::Root root("/");
    fs::RootLock lock(root);
    ChildRtprov rtprov(lock);
    pipeline::SystemdBus manager;
    FirstbootLog log;
    pipeline::Machine machine{
        root,   lock,    "/",
        true,   true,    pipeline::command_runner(root, true, [](const std::string&) {}),
        rtprov, manager, log,
        utc_now};
    const pipeline::ReadSelftestReport read_report = [](const std::string& host_path) {
        auto file = fs::read_host_file(host_path, fs::caps::k_report);
        if (!file)
            throw Error("'" + host_path + "' is not there");
        return read_selftest_json(*file, host_path);
    };
    const pipeline::Firstboot done = pipeline::run_firstboot(
        machine, {data_dir("profiles"), data_dir("apps"), started, read_report});
    switch (done.outcome) {
    case pipeline::FirstbootOutcome::already_ran:
        std::cout << "rtprov firstboot: already ran (" << done.state.phase << " at "
                  << done.state.updated_at << "); 'rtprov status' shows the outcome\n";
        return k_exit_ok;
    case pipeline::FirstbootOutcome::rebooting:
    case pipeline::FirstbootOutcome::passed:
        return k_exit_ok;
    case pipeline::FirstbootOutcome::not_passed:
        return k_exit_not_passed;
    case pipeline::FirstbootOutcome::failed:
        break;
    }
    return k_exit_failed;
}

} // namespace rtprov::cli
