// SPDX-License-Identifier: Apache-2.0
// rtprov apply: the plan made real under the root's lock (pipeline::apply), then, live,
// what systemd must learn; on an image, only after a read-only look found something to
// write and room for it (pipeline::prepare_image_apply).
#include "provisioner/boot/loader.hpp"
#include "provisioner/cli/commands.hpp"
#include "provisioner/cli/plan_options.hpp"
#include "provisioner/cli/render.hpp"
#include "provisioner/cli/target_options.hpp"
#include "provisioner/core/error.hpp"
#include "provisioner/core/sha256.hpp"

#include <iostream>

namespace rtprov::cli {

namespace {

// "nothing to change: image 'x.img' already matches profile 'pi4'"
void print_nothing_to_change(const pipeline::TargetSession& target, const std::string& profile) {
    std::cout << "nothing to change: " << target.described() << " already matches profile '"
              << profile << "'\n";
}

// A refused plan, shown on stderr with the error that ends the apply.
[[noreturn]] void refuse(const pipeline::Planned& p, const std::string& target, bool live) {
    PlanView view{p.profile.name, target, live, &p.plan, {}};
    std::cerr << plan_text(view);
    throw Error("apply refused: the plan has errors (above); nothing was written");
}

void print_findings_to_stderr(const core::Plan& plan) {
    for (const core::Finding& f : plan.findings)
        if (f.severity != core::Severity::info)
            std::cerr << "rtprov: " << core::to_string(f.severity) << ": " << f.message << "\n";
}

void print_applied(const ApplyCommand& c, const pipeline::Planned& p,
                   const target::ApplyResult& result, const std::string& undo, bool live) {
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
    if (c.plan.trial) {
        // A trial may be armed by the reboot into it (the Pi firmware's tryboot).
        const std::string& argument = boot::loader(p.plan.boot_loader).trial_reboot_argument;
        std::cout << "trial armed: "
                  << (!argument.empty() ? "reboot into it with: systemctl reboot '" + argument + "'"
                      : live            ? "the next boot, and only that one, is the trial"
                                        : "the image's first boot is the trial")
                  << "; 'rtprov trial status' follows it\n";
    }
}

int apply_on(const TargetOptions& o, const ApplyCommand& c, pipeline::TargetSession& target,
             std::optional<std::int64_t> epoch) {
    target::check_is_system_root(*target.root());
    if (target.image()) {
        // An image is planned read-only first: a refused plan, one its file systems have
        // no room for, or one that changes nothing leaves every byte of it as it was.
        pipeline::ImageApply image = pipeline::prepare_image_apply(target, plan_request(o, c.plan));
        if (image.outcome == pipeline::ImageApply::Outcome::refused)
            refuse(*image.planned, o.image, false);
        if (image.outcome == pipeline::ImageApply::Outcome::nothing_to_change) {
            print_nothing_to_change(target, image.planned->profile.name);
            return k_exit_ok;
        }
        std::cerr << "rtprov: writing to " << target.image()->image() << "\n";
        target::check_is_system_root(*target.root());
    }
    fs::Root& root = *target.root();
    // Planned under the lock too: what the plan read is what apply changes.
    std::optional<fs::RootLock> lock;
    lock.emplace(root, inherited_lock_fd());
    pipeline::Planned p = pipeline::make_plan(plan_request(o, c.plan), root);
    if (p.plan.refused())
        refuse(p, target.name(), o.live);
    print_findings_to_stderr(p.plan);
    prepare_writes(root, epoch);
    target::ApplyInfo info{p.profile.name, core::sha256_hex(p.profile_yaml), applied_at(epoch),
                           core::to_string(p.plan.boot_loader)};
    if (c.runtime && !o.live)
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
        pipeline::apply(root, *lock, p, info, command_runner(o, root), {o.live, c.runtime},
                        systemd_bus, told_before_error);
    const target::ApplyResult& result = applied.result;
    print_done(applied.online);
    if (!applied.damaged_trial_record.empty())
        std::cerr << "rtprov: warning: " << applied.damaged_trial_record
                  << (c.plan.trial ? " (replaced by the new trial's record)"
                                   : " (left as it is: 'rtprov trial abort' replaces it)")
                  << "\n";
    // Files written and recorded but systemd not told: say what is done, what is not, and
    // how to finish or undo; the apply did not finish, so it fails (exit 1).
    if (!applied.online.complete())
        throw Error(unfinished_live_apply(p.profile.name, result, applied.online));
    if (result.stale_temporaries_removed > 0)
        std::cerr << "rtprov: info: removed " << result.stale_temporaries_removed
                  << " temporary file(s) left by an interrupted run\n";
    const std::string undo = rtprov_command("rollback", target.options());
    // Written back and unmounted before the command says it succeeded.
    target.close(&lock, "apply wrote " + files_text(result.written.size()) + " into the image");
    if (result.nothing_to_do) {
        print_nothing_to_change(target, p.profile.name);
        return k_exit_ok;
    }
    print_applied(c, p, result, undo, o.live);
    return k_exit_ok;
}

} // namespace

void add_apply_options(CLI::App& command, TargetOptions& target, ApplyCommand& c) {
    add_plan_target_options(command, target, c.plan);
    command.add_flag("--runtime", c.runtime,
                     "With --live and the cpuset method: also set AllowedCPUs= on the running "
                     "slices now, without a reboot");
    add_plan_switches(command, c.plan);
}

int run_apply(const TargetOptions& o, const ApplyCommand& c) {
    const std::optional<std::int64_t> epoch = write_time(o);
    pipeline::TargetSession target = open_target(o, true, pipeline::Access::writable);
    const int rc = apply_on(o, c, target, epoch);
    target.close();
    return rc;
}

} // namespace rtprov::cli
