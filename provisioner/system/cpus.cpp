// SPDX-License-Identifier: Apache-2.0
#include "provisioner/system/cpus.hpp"

namespace rtprov::system {

Cpus read_cpus(const SysRoot& root) {
    Cpus cpus;
    cpus.present = root.cpu_list("/sys/devices/system/cpu/present");
    cpus.online = root.cpu_list("/sys/devices/system/cpu/online");
    cpus.isolated = root.cpu_list("/sys/devices/system/cpu/isolated");
    cpus.nohz_full = root.cpu_list("/sys/devices/system/cpu/nohz_full");
    return cpus;
}

std::optional<unsigned> layout_cpu_count(const Cpus& cpus) {
    if (!cpus.present || cpus.present->empty())
        return std::nullopt;
    return static_cast<unsigned>(cpus.present->size());
}

} // namespace rtprov::system
