// SPDX-License-Identifier: Apache-2.0
// rtprov rollback: every file rtprov changed restored and what it made removed
// (pipeline::rollback), then, live, what systemd must forget; an image is written only
// when there is something to roll back (pipeline::prepare_image_rollback).
#include "provisioner/cli/commands.hpp"
#include "provisioner/cli/render.hpp"
#include "provisioner/cli/target_options.hpp"
#include "provisioner/core/error.hpp"

#include <iostream>

namespace rtprov::cli {

namespace {

int rollback_on(const TargetOptions& o, const RollbackCommand& c, pipeline::TargetSession& target,
                std::optional<std::int64_t> epoch) {
    const target::DriftPolicy drift =
        c.force ? target::DriftPolicy::overwrite : target::DriftPolicy::refuse;
    auto nothing = [&] {
        std::cout << "nothing to roll back: rtprov has not applied anything to "
                  << target.described() << "\n";
        return k_exit_ok;
    };
    // an image is written only when there is something to roll back
    if (target.image()) {
        if (pipeline::prepare_image_rollback(target, drift))
            return nothing();
        std::cerr << "rtprov: writing to " << target.image()->image() << "\n";
    }
    fs::Root& root = *target.root();
    std::optional<fs::RootLock> lock;
    lock.emplace(root, inherited_lock_fd());
    prepare_writes(root, epoch);
    pipeline::SystemdBus systemd_bus;
    pipeline::RolledBack rolled = pipeline::rollback(
        root, *lock, drift,
        c.regenerate == "never" ? target::CommandRunner{} : command_runner(o, root), o.live,
        systemd_bus);
    const target::RollbackResult& result = rolled.result;
    // On the running system, systemd forgets the units and drop-ins rtprov removed.
    print_done(rolled.online);
    if (!rolled.online.complete())
        throw Error(unfinished_live_rollback(result, rolled.online));
    if (result.nothing_to_do)
        return nothing();
    target.close(&lock, "rollback restored " + files_text(result.restored.size()) +
                            " in the image and removed what rtprov made");
    for (const std::string& path : result.restored)
        std::cout << "restored " << path << "\n";
    for (const auto& [path, edits] : result.kept_edits)
        std::cout << "kept edits made since rtprov in " << path << ": " << edits << "\n";
    for (const std::string& path : result.removed)
        std::cout << "removed " << path << "\n";
    if (rolled.irqs) {
        for (const std::string& line : rolled.irqs->done)
            std::cout << "put back " << line << "\n";
        for (const std::string& line : rolled.irqs->findings)
            std::cerr << "rtprov: warning: " << line << "\n";
        if (!rolled.irqs->ok)
            std::cerr << "rtprov: warning: some IRQ values could not be put back (above); they "
                         "return to the kernel's defaults at the next boot, or run 'rtprov "
                         "irq-tune --restore' again\n";
    }
    for (const std::string& command : result.ran)
        std::cout << "ran " << command << "\n";
    for (const std::string& command : result.not_run)
        std::cerr << "rtprov: warning: not run (--regenerate-boot=never): '" << command
                  << "'; run it in the target before the next boot\n";
    for (const std::string& path : result.kept_dirs)
        std::cerr << "rtprov: warning: kept folder " << path
                  << ": it holds files the apply did not write\n";
    std::cout << "rolled back: every file rtprov changed is as it was before"
              << (result.kept_edits.empty() ? "" : ", with the edits others made since kept")
              << "\n";
    return k_exit_ok;
}

} // namespace

void add_rollback_options(CLI::App& command, TargetOptions& target, RollbackCommand& c) {
    add_target_options(command, target);
    command.add_flag("--force", c.force, "Roll back even files changed by hand since");
    command
        .add_option("--regenerate-boot", c.regenerate,
                    "Run the boot regeneration of the apply again after restoring: now "
                    "(default) or never")
        ->check(CLI::IsMember({"now", "never"}));
}

int run_rollback(const TargetOptions& o, const RollbackCommand& c) {
    const std::optional<std::int64_t> epoch = write_time(o);
    pipeline::TargetSession target = open_target(o, true, pipeline::Access::writable);
    const int rc = rollback_on(o, c, target, epoch);
    target.close();
    return rc;
}

} // namespace rtprov::cli
