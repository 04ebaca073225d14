// SPDX-License-Identifier: Apache-2.0
// rtprov plan: what apply would change, as diffs or JSON; writes nothing.
#include "provisioner/cli/commands.hpp"
#include "provisioner/cli/plan_options.hpp"
#include "provisioner/cli/render.hpp"
#include "provisioner/cli/target_options.hpp"
#include "provisioner/target/journal.hpp"

#include <iostream>

namespace rtprov::cli {

namespace {

int plan_on(const TargetOptions& o, const PlanCommand& c, const pipeline::TargetSession& target) {
    const fs::Root& root = *target.root();
    target::check_is_system_root(root);
    pipeline::Planned p = pipeline::make_plan(plan_request(o, c.plan), root);
    if (c.packages) {
        // Only the package list goes to stdout (the pi-gen stage writes it to a file); a
        // warning about what planning could not read still reaches the user.
        for (const core::Finding& f : p.plan.findings)
            if (f.code == "applied-profile-unreadable")
                std::cerr << "rtprov: warning: " << f.message << "\n";
        for (const std::string& package : p.plan.packages)
            std::cout << package << "\n";
        return k_exit_ok;
    }
    PlanView view{p.profile.name, target.name(), o.live, &p.plan, {}};
    if (auto state = target::read_state(root))
        for (const target::ManagedFile& file : target::stale_entries(root, *state, p.plan))
            view.retired.push_back(file.path);
    std::cout << (c.json ? plan_json(view) : plan_text(view));
    return p.plan.refused() ? k_exit_failed : k_exit_ok;
}

} // namespace

void add_plan_command_options(CLI::App& command, TargetOptions& target, PlanCommand& c) {
    add_plan_target_options(command, target, c.plan);
    command.add_flag("--json", c.json, "Print the plan as JSON");
    command.add_flag("--packages", c.packages,
                     "Print only the packages the profile needs in the target, installed or not "
                     "(one per line), for image builders");
    add_plan_switches(command, c.plan);
}

int run_plan(const TargetOptions& o, const PlanCommand& c) {
    if (c.packages && c.json)
        throw UsageError("--packages", "it prints the packages one per line, with no JSON of "
                                       "them: drop --json");
    pipeline::TargetSession target = open_target(o, true);
    const int rc = plan_on(o, c, target);
    // an image is unmounted before rtprov ends, and a failure to is the command's
    target.close();
    return rc;
}

} // namespace rtprov::cli
