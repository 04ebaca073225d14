// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/core/plan.hpp"
#include "provisioner/core/profile.hpp"
#include "provisioner/fs/root.hpp"
#include "provisioner/fs/root_lock.hpp"
#include "provisioner/live/irq_tune.hpp"
#include "provisioner/systemd/online.hpp"
#include "provisioner/target/journal.hpp"

#include <functional>
#include <optional>
#include <string>
#include <vector>

// plan, apply and rollback as the commands (and first boot, through them) run them:
// from the user's request to the plan, and from the plan to the files and, on the
// running system, to what systemd is told.
namespace rtprov::pipeline {

// What a command asks to be planned.
struct PlanRequest {
    std::string profile;                   // a name or a path
    std::vector<std::string> profile_dirs; // --profile-dir, searched first
    std::vector<std::string> sets;         // --set KEY=VALUE, in order
    bool live = false;                     // the root is the running system
    core::PlanOptions options;
    std::string builtin_profiles; // the built-in data: board profiles, searched last
    std::string apps;             // and what rtprov knows about audio apps
    // apply --firstboot: first boot's own keys of firstboot.yaml, as --firstboot-set
    // KEY=VALUE gives them; nullopt: no --firstboot.
    std::optional<std::vector<std::string>> firstboot;
};

struct Planned {
    core::Profile profile;
    std::string profile_yaml; // the resolved profile, as /etc/rtprov/profile.yaml holds it
    core::Plan plan;
    std::optional<core::ResolvedCores> cores; // nullopt: the CPUs are not known (offline)
    std::string trial_id; // apply --trial: the trial's id (core::PlanOptions::trial_id)
};

// Loads the profile (profile_search_path, then the --set overrides), reads the target
// (pipeline::probe) and plans. An applied profile that cannot be read is a warning in
// the plan: the keys it put on the command line that the new profile drops stay there.
// With request.firstboot, first boot's configuration is planned too (firstboot_config):
// a refusal in the plan when first boot would not find the same profile. Throws
// rtprov::UsageError for --firstboot on the running system, rtprov::Error for a wrong
// --firstboot-set.
Planned make_plan(const PlanRequest& request, const fs::Root& root);

// firstboot.yaml as 'apply --firstboot' writes it for 'request' (its --profile, --set and
// --firstboot-set) and the profile it loaded ('profile_name'): rtprov's header, then
// every key (profile::write_firstboot_config). Throws rtprov::Error for a wrong
// --firstboot-set.
std::string firstboot_config(const PlanRequest& request, const std::string& profile_name);

// The system manager that apply and rollback --live tell what changed, and that first
// boot and a trial's check ask for a reboot: systemd over D-Bus (SystemdBus), or a fake
// in tests.
class ServiceManager {
  public:
    virtual ~ServiceManager() = default;
    virtual systemd::OnlineResult tell(const systemd::OnlineActions& actions) = 0;
    // What rtprov-irq-tune@.service changed in the running kernel, put back
    // (live::restore_irqs).
    virtual live::IrqTuneResult restore_irqs() = 0;
    // Asks for a reboot, with 'argument' for the boot loader (the Pi firmware's tryboot
    // flag, "0 tryboot") or "" (systemd::request_reboot). Throws rtprov::Error when refused.
    virtual void reboot(const std::string& argument) = 0;
};

class SystemdBus final : public ServiceManager {
  public:
    systemd::OnlineResult tell(const systemd::OnlineActions& actions) override {
        return systemd::apply_online(actions);
    }
    live::IrqTuneResult restore_irqs() override {
        return live::restore_irqs("/", live::real_kernel_calls(), live::k_irq_tune_state);
    }
    void reboot(const std::string& argument) override { systemd::request_reboot(argument); }
};

struct LiveOptions {
    bool live = false;    // tell 'manager' what changed
    bool runtime = false; // --runtime: the cpuset properties too, without a reboot
};

struct Applied {
    target::ApplyResult result;
    systemd::OnlineResult online; // what systemd was told; empty offline
    // The trial record was damaged (why): a trial apply replaced it, a plain one left it.
    std::string damaged_trial_record;
};

// target::apply_plan, which, for a trial, writes its record ('armed'; on the running system
// with this boot's id, so that only a later boot can be the trial) before the first file, so
// that nothing arms a trial the record does not name; after a plain apply that ended an armed
// trial, the record says so ('aborted'); then, live, what systemd must learn of it
// (online_actions, with the files apply retired). When apply_plan throws after writing some
// files, systemd is still told about them: 'told_before_error' gets what came of that, and the
// error is thrown again.
Applied apply(fs::Root& root, const fs::RootLock& lock, const Planned& planned,
              const target::ApplyInfo& info, const target::CommandRunner& run,
              const LiveOptions& live, ServiceManager& manager,
              const std::function<void(const systemd::OnlineResult&)>& told_before_error);

struct RolledBack {
    target::RollbackResult result;
    systemd::OnlineResult online; // what systemd was told; empty offline or when nothing went
    // live, when the rollback removed rtprov-irq-tune@.service: the IRQ threads' values
    // put back
    std::optional<live::IrqTuneResult> irqs;
};

// target::rollback, then, live, what systemd must learn of the files put back and removed.
RolledBack rollback(fs::Root& root, const fs::RootLock& lock, target::DriftPolicy drift,
                    const target::CommandRunner& run, bool live, ServiceManager& manager);

} // namespace rtprov::pipeline
