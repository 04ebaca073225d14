// SPDX-License-Identifier: Apache-2.0
// rtprov profiles: the profiles rtprov finds (--profile-dir, the target's, the built-in
// ones), and with 'show NAME' one of them fully resolved.
#include "provisioner/cli/commands.hpp"
#include "provisioner/cli/plan_options.hpp"
#include "provisioner/cli/render.hpp"
#include "provisioner/cli/target_options.hpp"
#include "provisioner/pipeline/profile_search.hpp"
#include "provisioner/profile/profile_loader.hpp"

#include <iostream>

namespace rtprov::cli {

void add_profiles_options(CLI::App& command, TargetOptions& target, ProfilesCommand& c) {
    add_target_options(command, target);
    add_profile_options(command, c.profile_dirs, c.sets);
    command.add_flag("--json", c.json, "Print JSON");
    c.show = command.add_subcommand("show", "Print a profile fully resolved (extends, --set)");
    c.show->fallthrough(); // --root, --set and --profile-dir belong to "profiles"
    c.show->add_option("name", c.show_name, "Profile name or .yaml file")->required();
}

int run_profiles(const TargetOptions& target_options, const ProfilesCommand& c) {
    pipeline::TargetSession target = open_target(target_options, false);
    auto path = pipeline::profile_search_path(c.profile_dirs, target.root(), data_dir("profiles"));
    if (c.show->parsed()) {
        if (c.json)
            throw CLI::ValidationError("--json", "'profiles show' prints YAML; --json is for the "
                                                 "list");
        std::vector<profile::Override> overrides;
        for (const std::string& set : c.sets)
            overrides.push_back({set});
        std::cout << profile::to_yaml(profile::load_profile(c.show_name, path, overrides));
        return k_exit_ok;
    }
    if (!c.sets.empty())
        throw CLI::ValidationError("--set", "--set changes a profile: use it with 'profiles "
                                            "show NAME', 'plan' or 'apply'");
    auto entries = profile::list_profiles(path);
    std::cout << (c.json ? profiles_json(entries) : profiles_text(entries));
    return k_exit_ok;
}

} // namespace rtprov::cli
