// SPDX-License-Identifier: Apache-2.0
#include "provisioner/cli/plan_options.hpp"

#include "provisioner/cli/target_options.hpp"
#include "provisioner/pipeline/target_root.hpp"

namespace rtprov::cli {

void add_profile_options(CLI::App& command, std::vector<std::string>& profile_dirs,
                         std::vector<std::string>& sets) {
    command
        .add_option("--profile-dir", profile_dirs,
                    "Also look for profiles here, before the target's and the built-in ones")
        ->type_name("DIR");
    command.add_option("--set", sets, "Override one profile key, e.g. tuning.cores.reserved=2-3")
        ->type_name("KEY=VALUE");
}

void add_plan_target_options(CLI::App& command, TargetOptions& target, PlanOptions& o) {
    add_target_options(command, target);
    command
        .add_option("--profile", o.profile, "Profile name (see 'rtprov profiles') or .yaml file")
        ->type_name("NAME");
    add_profile_options(command, o.profile_dirs, o.sets);
}

void add_plan_switches(CLI::App& command, PlanOptions& o) {
    command
        .add_option("--regenerate-boot", o.regenerate,
                    "When to regenerate the boot configuration (grub.cfg, systemd-boot "
                    "entries): now (in the target; offline through a chroot), first-boot "
                    "(default offline), never. Default live: now")
        ->check(CLI::IsMember({"now", "first-boot", "never"}));
    command.add_flag("--force-priority", o.force_priority,
                     "Allow a unit-wide real-time priority at or above an app's own real-time "
                     "threads (inverts them; see the finding)");
    command.add_flag("--trial", o.trial,
                     "Write the boot configuration as a trial (GRUB; Raspberry Pi with --live): "
                     "the next boot, and only "
                     "that one, uses the new kernel and parameters; rtprov-trial.service makes "
                     "it the default when that boot passes the self-test and audit, else the "
                     "box boots the previous one again ('rtprov trial status')");
    command.add_flag("--install-packages", o.install_packages,
                     "Install missing packages (the PREEMPT_RT kernel) with apt-get in the "
                     "target; offline through a chroot");
    auto* firstboot = command.add_flag(
        "--firstboot", o.firstboot,
        "Set up the image's first boot: write /etc/rtprov/firstboot.yaml (this --profile "
        "and --set) and enable rtprov-firstboot.service; rollback takes both out, and an "
        "apply without it retires them (not with --live)");
    command
        .add_option("--firstboot-set", o.firstboot_sets,
                    "Set a key of firstboot.yaml that is first boot's own: reboot, trial, "
                    "install_packages, selftest_s, pi_probe_s (e.g. trial=false)")
        ->type_name("KEY=VALUE")
        ->needs(firstboot);
}

pipeline::PlanRequest plan_request(const TargetOptions& target, const PlanOptions& o) {
    if (o.profile.empty())
        throw CLI::ValidationError("--profile",
                                   "name a profile: --profile NAME (see 'rtprov profiles')");
    pipeline::PlanRequest request{o.profile, o.profile_dirs,       o.sets,           target.live,
                                  {},        data_dir("profiles"), data_dir("apps"), {}};
    request.options.regenerate = pipeline::regenerate_mode(o.regenerate, target.live);
    request.options.install_packages = o.install_packages;
    request.options.force_priority = o.force_priority;
    request.options.trial = o.trial;
    if (o.firstboot)
        request.firstboot = o.firstboot_sets;
    return request;
}

} // namespace rtprov::cli
