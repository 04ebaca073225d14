// SPDX-License-Identifier: Apache-2.0
#include "provisioner/audit/expectation.hpp"

#include "provisioner/boot/kernel_params.hpp"

#include <fnmatch.h>

#include <algorithm>

namespace rtprov::audit {

namespace {

std::optional<ThreadSched> unit_sched(const core::ServiceTuning& s) {
    if (!s.policy)
        return std::nullopt; // 'app'
    return ThreadSched{*s.policy,
                       core::has_static_priority(*s.policy) ? s.priority.value_or(0) : 0};
}

std::optional<core::CpuList> pinned(const core::ServiceTuning& s, const core::ResolvedCores& c) {
    if (!s.cpus)
        return std::nullopt;
    switch (s.cpus->kind) {
    case core::CpuTargetKind::reserved:
        return c.reserved;
    case core::CpuTargetKind::housekeeping:
        return c.housekeeping;
    case core::CpuTargetKind::all:
        return std::nullopt;
    case core::CpuTargetKind::list:
        return s.cpus->list;
    }
    return std::nullopt;
}

} // namespace

std::string to_string(const ThreadSched& sched) {
    if (is_realtime(sched.policy))
        return to_string(sched.policy) + " " + std::to_string(sched.priority);
    return to_string(sched.policy);
}

std::optional<int> ServiceExpectation::audio_priority() const {
    if (app_sched)
        return app_sched->priority;
    if (unit_sched && is_realtime(unit_sched->policy))
        return unit_sched->priority;
    return std::nullopt;
}

bool ServiceExpectation::names_rt_thread(const std::string& comm) const {
    for (const std::string& glob : rt_threads)
        if (::fnmatch(glob.c_str(), comm.c_str(), 0) == 0)
            return true;
    return false;
}

bool ServiceExpectation::is_audio_thread(const Thread& thread) const {
    if (names_rt_thread(thread.comm))
        return true;
    if (app_sched)
        return rt_threads.empty() && thread.policy == app_sched->policy &&
               thread.rt_priority >= app_sched->priority;
    return unit_sched && is_realtime(unit_sched->policy) && thread.policy == unit_sched->policy &&
           thread.rt_priority == unit_sched->priority;
}

const boot::KernelParam* Expectation::param(const std::string& key) const {
    for (const boot::KernelParam& p : kernel_params)
        if (p.key == key)
            return &p;
    return nullptr;
}

std::optional<ThreadSched>
Expectation::planned_kernel_thread(const std::string& comm,
                                   const std::set<unsigned>& sound_irqs) const {
    if (!irqs)
        return std::nullopt;
    // live/irq_tune.cpp sets these by the same names: irq/N-name (setup_irq_thread in
    // kernel/irq/manage.c) and ktimers/N (PREEMPT_RT's timer softirq threads,
    // kernel/softirq.c)
    if (const std::optional<unsigned> irq = system::irq_of_thread(comm)) {
        if (sound_irqs.count(*irq))
            return ThreadSched{core::SchedPolicy::fifo, irqs->sound};
        if (irqs->others)
            return ThreadSched{core::SchedPolicy::fifo, *irqs->others};
        return std::nullopt;
    }
    if (irqs->timers && comm.starts_with("ktimers/"))
        return ThreadSched{core::SchedPolicy::fifo, *irqs->timers};
    return std::nullopt;
}

Expectation expect(const core::Profile& profile, const core::ResolvedCores& cores,
                   const std::vector<core::AppKnowledge>& apps,
                   const std::vector<core::InstalledKernel>& kernels) {
    const core::Tuning& t = profile.tuning;
    Expectation e;
    e.profile_name = profile.name;
    e.cores = cores;
    e.reserve_method = t.reserve_method;
    e.isolcpus_flags = t.kernel.isolcpus_flags;
    e.irqaffinity = t.kernel.irqaffinity;
    e.kernel_params = boot::kernel_params(profile, cores, kernels).params;
    e.realtime = t.kernel.realtime;
    e.rt_packages = profile.board.kernel.rt_packages;
    for (const core::InstalledKernel& k : kernels)
        if (k.config && k.config->count("CONFIG_PREEMPT_RT") &&
            k.config->at("CONFIG_PREEMPT_RT") == "y")
            e.rt_kernels.push_back(k.version);
    e.boot_loader = profile.board.boot.loader;
    e.rt_push_ipi_guard = t.rt_push_ipi_guard;
    e.cpu_governor = t.cpu_governor;
    for (const core::ServiceTuning& s : t.services) {
        ServiceExpectation se;
        se.unit = s.unit.empty() ? s.name + ".service" : s.unit;
        se.profile_key = s.name;
        se.app_name = se.unit;
        se.cpus = pinned(s, cores);
        se.unit_sched = unit_sched(s);
        se.min_rtprio = s.limit_rtprio;
        if (const core::AppKnowledge* app = core::find_app(apps, s.name, se.unit)) {
            se.app_name = app->name;
            se.app_threads = app->threads;
            se.app_sched = ThreadSched{app->policy, app->priority};
            se.rt_threads = app->rt_threads;
            // systemd::plan_systemd raises LimitRTPRIO to the app's priority when the
            // profile leaves scheduling to the app.
            if (!s.policy)
                se.min_rtprio = std::max(s.limit_rtprio.value_or(0), app->priority);
        }
        if (s.limit_memlock) {
            se.memlock = parse_memlock_setting(*s.limit_memlock);
            se.memlock_setting = *s.limit_memlock;
        }
        e.services.push_back(std::move(se));
    }
    if (t.irqs.enabled()) {
        std::vector<core::ProfileProblem> problems;
        core::IrqLayout layout = core::irq_layout(profile, apps, problems);
        if (problems.empty())
            e.irqs = std::move(layout);
        e.sound_irq_cpus =
            t.irqs.sound_cpus == core::IrqCpus::reserved ? cores.reserved : cores.housekeeping;
        e.sound_names = t.irqs.sound_names;
    }
    e.housekeeping_workqueues = t.housekeeping_workqueues;
    return e;
}

} // namespace rtprov::audit
