// SPDX-License-Identifier: Apache-2.0
#include "provisioner/cli/target_options.hpp"

#include "provisioner/core/text.hpp"
#include "provisioner/pipeline/target_root.hpp"

#include <cstdlib>
#include <iostream>

namespace rtprov::cli {

void add_target_options(CLI::App& command, TargetOptions& o) {
    command.add_option("--root", o.root, "Root of the target image (a mounted image or folder)")
        ->type_name("DIR");
    command
        .add_option("--image", o.image,
                    "A whole disk image (MBR or GPT, not compressed): rtprov mounts its root "
                    "and boot partitions where its fstab says, in a mount namespace of its own, "
                    "and unmounts them when done; read-only for plan and status")
        ->type_name("FILE");
    command.add_flag("--live", o.live, "Work on this running machine ('/')");
}

pipeline::TargetSession open_target(const TargetOptions& o, bool required,
                                    pipeline::Access access) {
    pipeline::TargetSession target =
        pipeline::TargetSession::open({o.root, o.image, o.live}, required, access);
    if (const pipeline::DiskImage* image = target.image()) {
        std::cerr << "rtprov: opened " << image->image() << " read-only: ";
        for (std::size_t i = 0; i < image->mounted().size(); ++i)
            std::cerr << (i ? ", " : "") << image->mounted()[i];
        std::cerr << "\n";
        for (const std::string& warning : image->warnings())
            std::cerr << "rtprov: warning: " << warning << "\n";
    }
    return target;
}

std::string rtprov_command(const std::string& verb, const std::vector<std::string>& options) {
    std::vector<std::string> argv{"rtprov", verb};
    argv.insert(argv.end(), options.begin(), options.end());
    return core::shell_command(argv);
}

std::optional<std::int64_t> write_time(const TargetOptions& o) {
    if (!o.live)
        return source_date_epoch();
    if (std::getenv("SOURCE_DATE_EPOCH"))
        std::cerr << "rtprov: warning: SOURCE_DATE_EPOCH ignored: --live changes the running "
                     "system, whose files keep real times\n";
    return std::nullopt;
}

std::string applied_at(std::optional<std::int64_t> epoch) {
    return utc_text(std::time_t(epoch.value_or(now_unix())));
}

void prepare_writes(fs::Root& root, std::optional<std::int64_t> epoch) {
    if (epoch)
        root.set_source_date_epoch(*epoch);
    set_test_kill_hook(root);
}

std::string files_text(std::size_t n) {
    return std::to_string(n) + (n == 1 ? " file" : " files");
}

target::CommandRunner command_runner(const TargetOptions& o, const fs::Root& root) {
    return pipeline::command_runner(
        root, o.live, [](const std::string& line) { std::cerr << "rtprov: " << line << "\n"; });
}

void print_done(const systemd::OnlineResult& online) {
    for (const systemd::OnlineStep& done : online.done)
        std::cout << "systemd: " << done.text() << "\n";
}

} // namespace rtprov::cli
