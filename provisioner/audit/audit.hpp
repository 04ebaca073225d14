// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/audit/check.hpp"
#include "provisioner/audit/expectation.hpp"
#include "provisioner/audit/system_view.hpp"

#include <vector>

// 'rtprov audit': read the running system once (read_system_view), then judge it
// (run_audit), with or without the applied profile. Nothing here changes the system.
namespace rtprov::audit {

struct AuditReport {
    std::vector<Check> checks;            // in the order of run_audit()
    std::vector<ServiceThreads> services; // a thread table per configured service

    // The worst status of all checks (ok when there are none).
    Status overall() const;
};

// Runs the checks. Without an expectation, the ones that hold for every audio machine:
// kernel-preemption, rt-push-ipi, rt-throttling, high-res-timers, tickless, cpu-governor,
// irq-affinity and irq-unmovable (on the CPUs the kernel isolates), sound-irq-shared,
// smt, cpu-mitigations, swappiness, audio-filesystems, and of the users who run audio
// (accounts.hpp) rt-priority, audio-group-limits and cpu-dma-latency. With one, also
// cmdline, isolated-cpus, nohz-full (when planned), reserved-cpu-tasks, rt-above-audio,
// sound-irqs (when the profile tunes the IRQs), and service-threads and service-limits
// per service. Pure.
AuditReport run_audit(const SystemView& view, const Expectation* expectation = nullptr);

} // namespace rtprov::audit
