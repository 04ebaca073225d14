// SPDX-License-Identifier: Apache-2.0
#include "provisioner/boot/kernel_config.hpp"

#include "provisioner/boot/version_sort.hpp"

#include <algorithm>
#include <string_view>

namespace rtprov::boot {

std::map<std::string, std::string> parse_kernel_config(const std::string& text) {
    // A distribution config has ~8000 options; this walks it once without copying lines.
    std::map<std::string, std::string> options;
    std::string_view rest(text);
    while (!rest.empty()) {
        std::size_t end = rest.find('\n');
        std::string_view line = rest.substr(0, end);
        rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
        if (line.substr(0, 7) != "CONFIG_")
            continue;
        std::size_t equals = line.find('=');
        if (equals == std::string_view::npos)
            continue;
        std::string_view name = line.substr(0, equals);
        if (!name.starts_with("CONFIG_NO_HZ") && !name.starts_with("CONFIG_RCU_NOCB") &&
            !name.starts_with("CONFIG_PREEMPT") && name != "CONFIG_IRQ_FORCED_THREADING" &&
            name != "CONFIG_HIGH_RES_TIMERS" && name != "CONFIG_HZ_PERIODIC" &&
            !(name.starts_with("CONFIG_ARM64_") && name.ends_with("K_PAGES")))
            continue;
        options.emplace(std::string(name), std::string(line.substr(equals + 1, 64)));
    }
    return options;
}

FeatureSupport kernel_support(const std::vector<core::InstalledKernel>& kernels,
                              const std::string& option) {
    FeatureSupport result;
    bool any_image = std::any_of(kernels.begin(), kernels.end(),
                                 [](const core::InstalledKernel& k) { return k.has_image; });
    bool counted = false;
    for (const core::InstalledKernel& kernel : kernels) {
        if (any_image && !kernel.has_image)
            continue; // a config left behind by a removed kernel never boots
        counted = true;
        if (!kernel.config)
            result.no_config.push_back(kernel.version);
        else if (auto it = kernel.config->find(option);
                 it == kernel.config->end() || it->second != "y")
            result.lacking.push_back(kernel.version);
    }
    if (!result.lacking.empty())
        result.support = Support::no;
    else if (!counted || !result.no_config.empty())
        result.support = Support::unknown;
    else
        result.support = Support::yes;
    return result;
}

const core::InstalledKernel*
newest_kernel(const std::vector<core::InstalledKernel>& kernels,
              const std::function<bool(const core::InstalledKernel&)>& takes) {
    const core::InstalledKernel* newest = nullptr;
    for (const core::InstalledKernel& k : kernels)
        if (k.has_image && takes(k) &&
            (!newest || compare_kernel_versions(k.version, newest->version) > 0))
            newest = &k;
    return newest;
}

bool is_preempt_rt(const core::InstalledKernel& kernel) {
    if (kernel.config) {
        auto it = kernel.config->find("CONFIG_PREEMPT_RT");
        return it != kernel.config->end() && it->second == "y";
    }
    return kernel.version.find("-rt-") != std::string::npos || kernel.version.ends_with("-rt");
}

} // namespace rtprov::boot
