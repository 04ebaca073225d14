// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/system/sysroot.hpp"

#include <optional>

// The CPUs of the running system, read once (Documentation/ABI/testing/sysfs-devices-system-cpu
// and Documentation/admin-guide/cputopology.rst in the kernel tree).
namespace rtprov::system {

struct Cpus {
    Fact<core::CpuList> present;   // /sys/devices/system/cpu/present
    Fact<core::CpuList> online;    // .../online: what can be measured now
    Fact<core::CpuList> isolated;  // .../isolated (isolcpus=)
    Fact<core::CpuList> nohz_full; // .../nohz_full
};

Cpus read_cpus(const SysRoot& root);

// The one rule for how many CPUs a profile's 'auto' core layout is resolved on, for
// apply, first boot, the self-test and the audit alike: the CPUs present. Boot parameters
// name CPUs for every boot, and a CPU offline now (taken down, or kept down with
// maxcpus=) is still one they must name; the self-test measures only the online ones of
// the cores so resolved. nullopt when 'present' cannot be read or is empty.
std::optional<unsigned> layout_cpu_count(const Cpus& cpus);

} // namespace rtprov::system
