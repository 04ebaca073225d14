// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/audit/proc_text.hpp"
#include "provisioner/audit/system_view.hpp"
#include "provisioner/boot/cmdline.hpp"
#include "provisioner/core/app.hpp"
#include "provisioner/core/irq_layout.hpp"
#include "provisioner/core/plan.hpp"
#include "provisioner/core/profile.hpp"

#include <optional>
#include <set>
#include <string>
#include <vector>

// What the applied profile promises about the running system, worked out the way
// 'rtprov apply' worked it out, so that the audit compares like with like.
namespace rtprov::audit {

struct ThreadSched {
    ThreadPolicy policy = core::SchedPolicy::other;
    int priority = 0; // 0 for the non-real-time policies
    friend bool operator==(const ThreadSched&, const ThreadSched&) = default;
};

// 'fifo 40', 'other'.
std::string to_string(const ThreadSched& sched);

struct ServiceExpectation {
    std::string unit;                      // 'mpd.service'
    std::string app_name;                  // 'MPD', or the unit when the app is not known
    std::string app_threads;               // 'rtio and output:* threads', for messages
    std::string profile_key;               // 'mpd': tuning.services.mpd
    std::optional<core::CpuList> cpus;     // CPUAffinity= the profile pins it to
    std::optional<ThreadSched> unit_sched; // a unit-wide policy (the profile's, not 'app')
    std::optional<ThreadSched> app_sched;  // the policy the app gives its own RT threads
    std::vector<std::string> rt_threads;   // globs for the names of those threads
    std::optional<int> min_rtprio;         // soft RLIMIT_RTPRIO must be at least this
    std::optional<LimitValue> memlock;     // soft RLIMIT_MEMLOCK must be at least this
    std::string memlock_setting;           // as the profile says it: 'infinity', '64M'

    // The priority the service's audio threads run at (the app's own, else the
    // unit-wide real-time one); nullopt when they are not real-time.
    std::optional<int> audio_priority() const;
    // True when 'comm' matches one of rt_threads (fnmatch(3)).
    bool names_rt_thread(const std::string& comm) const;
    // True when 'thread' of this service is one of its audio threads: it matches
    // rt_threads; or, for an app whose thread names are not known, it runs at the app's
    // policy and priority or above; or, with no app knowledge, at the unit-wide real-time
    // policy and priority.
    bool is_audio_thread(const Thread& thread) const;
};

struct Expectation {
    std::string profile_name;
    core::ResolvedCores cores;
    core::ReserveMethod reserve_method = core::ReserveMethod::isolcpus;
    std::vector<std::string> isolcpus_flags;
    bool irqaffinity = true;
    std::vector<boot::KernelParam> kernel_params; // planned, as boot::kernel_params() says
    bool realtime = false;                        // tuning.kernel.realtime
    std::vector<std::string> rt_packages;         // board.kernel.rt_packages, for fixes
    std::vector<std::string> rt_kernels; // installed kernels with CONFIG_PREEMPT_RT=y, for fixes
    core::BootLoader boot_loader = core::BootConfig{}.loader;
    bool rt_push_ipi_guard = true;
    std::optional<std::string> cpu_governor;
    std::vector<ServiceExpectation> services;
    // tuning.irqs: the layout rtprov-irq-tune@.service sets (core::irq_layout, as the plan
    // computed it); nullopt when the profile leaves the IRQs alone or the layout was refused.
    std::optional<core::IrqLayout> irqs;
    core::CpuList sound_irq_cpus;         // where the sound path's IRQs go (tuning.irqs.sound_cpus)
    std::vector<std::string> sound_names; // tuning.irqs.sound_names
    // tuning.housekeeping_workqueues: rtprov-irq-tune@boot keeps the unbound workqueues
    // on the housekeeping CPUs
    bool housekeeping_workqueues = false;

    // The planned parameter 'key', or nullptr.
    const boot::KernelParam* param(const std::string& key) const;

    // The priority the IRQ layout (irqs) gives kernel thread 'comm' — an IRQ thread of
    // 'sound_irqs' the sound path's, another IRQ thread the others', ktimers/N the timer
    // threads' — as rtprov-irq-tune@.service sets them; nullopt for a thread it leaves
    // alone.
    std::optional<ThreadSched> planned_kernel_thread(const std::string& comm,
                                                     const std::set<unsigned>& sound_irqs) const;
};

// Builds the expectation of 'profile' on 'cores' (core::resolve_cores with the running
// machine's CPU count). 'kernels' are the installed kernels as target::probe() reports
// them: nohz_full= and rcu_nocbs= are planned from their configs, as apply did. Pure.
Expectation expect(const core::Profile& profile, const core::ResolvedCores& cores,
                   const std::vector<core::AppKnowledge>& apps,
                   const std::vector<core::InstalledKernel>& kernels);

} // namespace rtprov::audit
