// SPDX-License-Identifier: Apache-2.0
#include "provisioner/live/board_facts.hpp"

#include "provisioner/core/os_release.hpp"
#include "provisioner/system/cpus.hpp"

namespace rtprov::live {

core::BoardFacts read_board_facts(const std::string& sysroot) {
    const system::SysRoot root(sysroot);
    core::BoardFacts facts;
    auto known = [](system::Fact<std::string> fact) { return fact.value; };
    facts.device_tree_model = known(root.value("/proc/device-tree/model"));
    facts.dmi_product_name = known(root.value("/sys/class/dmi/id/product_name"));
    auto os = root.text("/etc/os-release");
    if (!os)
        os = root.text("/usr/lib/os-release");
    if (os) {
        core::OsRelease release = core::parse_os_release(*os);
        if (!release.id.empty())
            facts.os_ids.push_back(release.id);
        facts.os_ids.insert(facts.os_ids.end(), release.id_like.begin(), release.id_like.end());
    }
    // The CPUs the core layout is resolved on, by the rule apply uses.
    facts.cpu_count = system::layout_cpu_count(system::read_cpus(root)).value_or(0);
    return facts;
}

} // namespace rtprov::live
