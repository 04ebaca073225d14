// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/audit/check.hpp"
#include "provisioner/audit/expectation.hpp"
#include "provisioner/audit/system_view.hpp"

// Checks of what may run on the reserved CPUs: interrupts and tasks. Pure functions of
// the gathered view. The reserved CPUs are the profile's; without a profile, the CPUs
// the kernel isolates (/sys/devices/system/cpu/isolated and nohz_full).
namespace rtprov::audit {

// The reserved CPUs and the rest, as these checks see them.
struct CpuSplit {
    core::CpuList reserved;
    core::CpuList housekeeping;
};
CpuSplit cpu_split(const SystemView& view, const Expectation* expectation);

// How an IRQ may be placed: the rules are in reserved_cpu_checks.cpp.
enum class IrqPlacement { movable, per_cpu, fixed };
IrqPlacement irq_placement(const Irq& irq);

// 'irq-affinity': warns about IRQs that can be moved but are delivered to reserved CPUs.
Check check_irq_affinity(const SystemView& view, const Expectation* expectation);

// 'irq-unmovable': IRQs on reserved CPUs that cannot be moved; per-CPU ones are listed
// for information (ok), others warn.
Check check_unmovable_irqs(const SystemView& view, const Expectation* expectation);

// 'reserved-cpu-tasks': tasks allowed on reserved CPUs other than the profile's services
// and per-CPU kernel threads. User-space tasks fail, unbound kernel threads warn.
Check check_reserved_cpu_tasks(const SystemView& view, const Expectation& expectation);

// 'rt-above-audio': real-time tasks allowed on reserved CPUs at or above the audio
// threads' priority. A service's own other threads there fail (they invert its audio
// threads); other tasks warn.
Check check_rt_above_audio(const SystemView& view, const Expectation& expectation);

} // namespace rtprov::audit
