// SPDX-License-Identifier: Apache-2.0
#include "provisioner/boot/kernel_params.hpp"

#include "provisioner/boot/kernel_config.hpp"
#include "provisioner/core/text.hpp"

#include <algorithm>

namespace rtprov::boot {

using core::Finding;
using core::Severity;

std::vector<std::string> owned_keys(const core::Profile& profile) {
    std::vector<std::string> keys = {"isolcpus", "nohz_full", "rcu_nocbs", "irqaffinity"};
    // threadirqs only where the profile tunes IRQs: without that, one set by hand stays.
    if (profile.tuning.irqs.enabled())
        keys.push_back("threadirqs");
    for (const std::string& token : profile.tuning.kernel.extra) {
        std::string key = CmdlineToken{token}.key();
        if (std::find(keys.begin(), keys.end(), key) == keys.end())
            keys.push_back(key);
    }
    return keys;
}

namespace {

// Decides one of nohz_full= / rcu_nocbs=. Returns whether to write it.
bool decide_feature(const char* key, const char* option, core::KernelFeature setting,
                    const core::Profile& profile, const std::vector<core::InstalledKernel>& kernels,
                    std::vector<Finding>& findings) {
    if (setting == core::KernelFeature::off)
        return false;
    FeatureSupport support = kernel_support(kernels, option);
    const std::string name = key;
    // as it is written: 'nohz_full=', or the bare 'threadirqs'
    const std::string shown = name == "threadirqs" ? name : name + "=";
    if (support.support == Support::yes)
        return true;
    if (support.support == Support::no) {
        std::string kernels_text = (support.lacking.size() == 1 ? "kernel " : "kernels ") +
                                   core::quoted_list(support.lacking);
        if (setting == core::KernelFeature::on) {
            findings.push_back({Severity::warning, name + "-unsupported",
                                shown + " written as the profile says 'on', but " + kernels_text +
                                    " lack" + (support.lacking.size() == 1 ? "s " : " ") + option +
                                    ": it has no effect there"});
            return true;
        }
        findings.push_back({Severity::info, name + "-skipped",
                            shown + " skipped: " + kernels_text + " ha" +
                                (support.lacking.size() == 1 ? "s" : "ve") + " no " + option});
        return false;
    }
    // Unknown: no readable config. The profile decides (tuning.kernel.missing_config).
    std::string why = support.no_config.empty() ? "no kernel found in /boot"
                                                : "no kernel config (/boot/config-<version>) for " +
                                                      core::quoted_list(support.no_config);
    if (setting == core::KernelFeature::on ||
        profile.tuning.kernel.missing_config == core::MissingKernelConfig::assume) {
        findings.push_back({Severity::warning, name + "-assumed",
                            shown + " written without proof: " + why +
                                "; the profile assumes the kernel has " + option});
        return true;
    }
    findings.push_back({Severity::warning, name + "-unknown",
                        shown + " skipped: " + why +
                            "; set tuning.kernel.missing_config to 'assume' to write it anyway"});
    return false;
}

} // namespace

ParamDecision kernel_params(const core::Profile& profile,
                            const std::optional<core::ResolvedCores>& cores,
                            const std::vector<core::InstalledKernel>& kernels) {
    ParamDecision d;
    const core::KernelParams& k = profile.tuning.kernel;
    if (cores && !cores->reserved.empty()) {
        const std::string reserved = cores->reserved.to_string();
        if (profile.tuning.reserve_method == core::ReserveMethod::isolcpus) {
            std::string value;
            for (const std::string& flag : k.isolcpus_flags)
                value += flag + ",";
            d.params.push_back({"isolcpus", value + reserved, false});
        }
        bool nohz = decide_feature("nohz_full", "CONFIG_NO_HZ_FULL", k.nohz_full, profile, kernels,
                                   d.findings);
        if (nohz && cores->reserved.contains(0)) {
            // "The boot CPU will be forced outside the range" (kernel-parameters.txt).
            d.findings.push_back({Severity::error, "nohz-boot-cpu",
                                  "nohz_full= cannot take CPU 0, the boot CPU; reserve other "
                                  "cores or set tuning.kernel.nohz_full to 'off'"});
            nohz = false;
        }
        if (nohz)
            d.params.push_back({"nohz_full", reserved, false});
        if (decide_feature("rcu_nocbs", "CONFIG_RCU_NOCB_CPU", k.rcu_nocbs, profile, kernels,
                           d.findings))
            d.params.push_back({"rcu_nocbs", reserved, false});
        if (k.irqaffinity)
            d.params.push_back({"irqaffinity", cores->housekeeping.to_string(), false});
    }
    // Threaded interrupts, so that IRQ threads have priorities to set: forced on by
    // PREEMPT_RT, by 'threadirqs' elsewhere where the kernel has CONFIG_IRQ_FORCED_THREADING
    // (kernel-parameters.txt).
    if (profile.tuning.irqs.enabled() &&
        decide_feature("threadirqs", "CONFIG_IRQ_FORCED_THREADING", profile.tuning.irqs.threaded,
                       profile, kernels, d.findings))
        d.params.push_back({"threadirqs", "", true});
    for (const std::string& token : k.extra) {
        CmdlineToken t{token};
        d.params.push_back({t.key(), t.value().value_or(""), !t.value()});
    }
    return d;
}

} // namespace rtprov::boot
