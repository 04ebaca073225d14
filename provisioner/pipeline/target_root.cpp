// SPDX-License-Identifier: Apache-2.0
#include "provisioner/pipeline/target_root.hpp"

#include "provisioner/core/error.hpp"
#include "provisioner/target/run_in_root.hpp"

#include <chrono>

namespace rtprov::pipeline {

std::unique_ptr<fs::Root> open_target(const std::string& root, bool live, bool required,
                                      std::optional<std::string> display) {
    if (live) {
        if (!root.empty() && !fs::is_running_system(fs::Root(root)))
            throw UsageError("--live", "--live works on this machine's '/'; drop --root " +
                                           quoted(root) + " or --live");
        return std::make_unique<fs::Root>("/");
    }
    if (root.empty()) {
        if (required)
            throw UsageError("--root", "give --root DIR for an image root, or --live for this "
                                       "machine");
        return nullptr;
    }
    auto opened = std::make_unique<fs::Root>(root, std::move(display));
    if (fs::is_running_system(*opened))
        throw Error("refusing --root " + quoted(root) +
                    ": that is the running system; pass --live to change it");
    return opened;
}

core::Regenerate regenerate_mode(std::string_view word, bool live) {
    if (word == "now")
        return core::Regenerate::now;
    if (word == "never")
        return core::Regenerate::never;
    if (word == "first-boot")
        return core::Regenerate::first_boot;
    return live ? core::Regenerate::now : core::Regenerate::first_boot;
}

target::CommandRunner command_runner(const fs::Root& root, bool live,
                                     std::function<void(const std::string&)> say) {
    const auto mode = live ? target::RunMode::live : target::RunMode::chroot;
    return [&root, mode, say = std::move(say)](const std::vector<std::string>& argv) {
        const std::string text = target::command_text(argv);
        say("running '" + text + "' in the target");
        const auto started = std::chrono::steady_clock::now();
        const int result = target::run_in_root(root, argv, mode);
        const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::steady_clock::now() - started)
                            .count();
        say("'" + text + "' took " + std::to_string(ms) + " ms");
        return result;
    };
}

} // namespace rtprov::pipeline
