// SPDX-License-Identifier: Apache-2.0
#include "provisioner/audit/reserved_cpu_checks.hpp"

#include "provisioner/core/error.hpp"
#include "provisioner/core/text.hpp"

#include <algorithm>
#include <optional>
#include <set>

namespace rtprov::audit {

namespace {

// Fix texts name a value in the form the file or command takes, and say which form that
// is, so that '3' written as a hex mask is not read as CPU 3: "the CPU list 0-1 (the
// housekeeping CPUs)", "the hex mask 3 (CPUs 0-1, the housekeeping CPUs)".
std::string as_cpu_list(const core::CpuList& cpus, const std::string& what) {
    return "the CPU list " + cpus.to_string() + " (" + what + ")";
}

std::string as_hex_mask(const core::CpuList& cpus, const std::string& what) {
    return "the hex mask " + cpus.to_mask() + " (" + cpus_text(cpus) + ", " + what + ")";
}

std::string irq_label(const Irq& irq) {
    return "IRQ " + std::to_string(irq.number) +
           (irq.name.empty() ? std::string() : " " + quoted(irq.name));
}

// How often 'irq' fired on the CPUs 'on' since boot; nullopt when /proc/interrupts did not
// say.
std::optional<std::uint64_t> fired(const Irq& irq, const core::CpuList& on) {
    if (irq.counts.empty())
        return std::nullopt;
    std::uint64_t sum = 0;
    for (unsigned cpu : on.cpus())
        if (auto it = irq.counts.find(cpu); it != irq.counts.end())
            sum += it->second;
    return sum;
}

// An IRQ found on reserved CPUs: 'IRQ 36 'virtio1-req.0' on CPU 1 (fired 12 times there
// since boot; ...)'. The busiest come first.
struct IrqFinding {
    std::uint64_t count = 0;
    unsigned number = 0;
    std::string text;
};

IrqFinding irq_finding(const Irq& irq, const core::CpuList& on, const std::string& also = "") {
    std::optional<std::uint64_t> count = fired(irq, on);
    std::string details;
    if (count)
        details = "fired " + std::to_string(*count) + (*count == 1 ? " time" : " times") +
                  " there since boot";
    if (!also.empty())
        details += (details.empty() ? "" : "; ") + also;
    return {count.value_or(0), irq.number,
            irq_label(irq) + " on " + cpus_text(on) +
                (details.empty() ? "" : " (" + details + ")")};
}

// Without a profile the reserved CPUs are those the kernel isolated; when that cannot be
// read, an IRQ check cannot see which CPUs to keep IRQs off and must not say ok.
// (nohz_full may be missing for good: the file exists only with CONFIG_NO_HZ_FULL.)
std::optional<Check> reserved_unknown(Check c, const SystemView& view, const Expectation* e) {
    if (e || view.cpus.isolated)
        return std::nullopt;
    return cannot_read(std::move(c),
                       view.cpus.isolated.problem + "; which CPUs are reserved is not known");
}

std::vector<std::string> busiest_first(std::vector<IrqFinding> found) {
    std::stable_sort(found.begin(), found.end(),
                     [](const IrqFinding& a, const IrqFinding& b) { return a.count > b.count; });
    std::vector<std::string> out;
    for (const IrqFinding& f : found)
        out.push_back(f.text);
    return out;
}

// Where the IRQ is delivered: its effective affinity where the architecture reports one
// (x86 and GIC deliver to one CPU of the mask), else the mask it may be delivered to.
std::optional<core::CpuList> delivered_to(const Irq& irq) {
    if (irq.effective && !irq.effective->empty())
        return irq.effective;
    return irq.affinity;
}

const ServiceExpectation* service_of(const Process& p, const Expectation& e) {
    if (p.kernel_thread)
        return nullptr;
    for (const ServiceExpectation& s : e.services)
        if (cgroup_in_unit(p.cgroup, s.unit))
            return &s;
    return nullptr;
}

bool per_cpu_kthread(const Process& p, const Thread& t) {
    return p.kernel_thread && t.allowed && t.allowed->size() == 1;
}

std::string sched_text(const Thread& t) {
    return to_string(ThreadSched{t.policy, t.rt_priority});
}

} // namespace

CpuSplit cpu_split(const SystemView& view, const Expectation* e) {
    if (e)
        return {e->cores.reserved, e->cores.housekeeping};
    CpuSplit split;
    if (view.cpus.isolated)
        split.reserved = split.reserved.union_with(*view.cpus.isolated);
    if (view.cpus.nohz_full)
        split.reserved = split.reserved.union_with(*view.cpus.nohz_full);
    if (view.cpus.online)
        split.housekeeping = view.cpus.online->minus(split.reserved);
    return split;
}

// Rules:
// - per_cpu: a GIC PPI (hwirq 16-31), private to each CPU by the GIC architecture
//   (arch_timer, the PMU on Arm boards); it fires on every CPU;
// - fixed: no readable smp_affinity_list, or one without a write permission bit. procfs
//   adds the write bit only where irq_can_set_affinity_usr() allows a change
//   (kernel/irq/proc.c, register_irq_proc): managed interrupts such as virtio and NVMe
//   queues are read-only (seen here: 'virtio1-req.0' with smp_affinity_list 0444). Older
//   kernels make every one writable and answer EIO on write; such IRQs look movable;
// - movable: everything else. isolcpus=managed_irq keeps managed interrupts off isolated
//   CPUs where it can.
IrqPlacement irq_placement(const Irq& irq) {
    if (irq.chip.starts_with("GIC") && irq.hwirq && *irq.hwirq >= 16 && *irq.hwirq <= 31)
        return IrqPlacement::per_cpu;
    if (!irq.affinity || !irq.affinity_writable)
        return IrqPlacement::fixed;
    return IrqPlacement::movable;
}

// A warning, not a failure: irqaffinity= sets only the default at boot, drivers and
// irqbalance place IRQs themselves, and what an IRQ costs depends on how often it fires.
Check check_irq_affinity(const SystemView& view, const Expectation* e) {
    Check c = make_check("irq-affinity", "IRQs delivered to the reserved CPUs");
    if (auto unknown = reserved_unknown(c, view, e))
        return *unknown;
    const CpuSplit split = cpu_split(view, e);
    if (split.reserved.empty()) {
        c.reason = e ? "profile '" + e->profile_name + "' reserves no CPUs"
                     : "no CPU is isolated (isolated and nohz_full in /sys/devices/system/cpu "
                       "name none): there are no reserved CPUs to keep IRQs off";
        return c;
    }
    if (!view.irqs)
        return cannot_read(std::move(c), view.irqs.problem);
    std::vector<IrqFinding> found;
    std::string numbers;
    for (const Irq& irq : *view.irqs) {
        auto where = delivered_to(irq);
        if (irq_placement(irq) != IrqPlacement::movable || !where)
            continue;
        core::CpuList on = where->intersection(split.reserved);
        if (on.empty())
            continue;
        found.push_back(irq_finding(irq, on));
        numbers += (numbers.empty() ? "" : " ") + std::to_string(irq.number);
    }
    const std::string reserved = cpus_text(split.reserved);
    if (found.empty()) {
        c.reason = "no IRQ that can be moved is delivered to reserved " + reserved;
        return c;
    }
    c.status = Status::warn;
    c.reason = std::to_string(found.size()) + (found.size() == 1 ? " IRQ is" : " IRQs are") +
               " delivered to reserved " + reserved + ": " + listing(busiest_first(found)) +
               "; each one interrupts the audio threads there";
    // smp_affinity_list takes a CPU list, smp_affinity a hex mask
    // (Documentation/core-api/irq/irq-affinity.rst).
    const std::string target =
        split.housekeeping.empty() ? "<housekeeping CPUs>" : split.housekeeping.to_string();
    c.fix = "move them to the housekeeping CPUs: " +
            (split.housekeeping.empty()
                 ? std::string("write the housekeeping CPUs as a CPU list")
                 : "write " + as_cpu_list(split.housekeeping, "the housekeeping CPUs")) +
            " to each one's smp_affinity_list: for n in " + numbers + "; do echo " + target +
            " > /proc/irq/$n/smp_affinity_list; done";
    if (e && !e->irqaffinity)
        c.fix += "; set tuning.kernel.irqaffinity: true so that boot does it";
    else
        // irqbalance(1): IRQBALANCE_BANNED_CPULIST is a CPU list; Debian's package reads
        // its environment from /etc/default/irqbalance.
        c.fix += "; irqaffinity= sets only the default at boot: keep irqbalance off the "
                 "reserved CPUs with the CPU list " +
                 split.reserved.to_string() +
                 " (IRQBALANCE_BANNED_CPULIST=" + split.reserved.to_string() +
                 " in /etc/default/irqbalance)";
    return c;
}

Check check_unmovable_irqs(const SystemView& view, const Expectation* e) {
    Check c = make_check("irq-unmovable", "IRQs on the reserved CPUs that cannot be moved");
    if (auto unknown = reserved_unknown(c, view, e))
        return *unknown;
    const CpuSplit split = cpu_split(view, e);
    if (split.reserved.empty()) {
        c.reason = "there are no reserved CPUs";
        return c;
    }
    if (!view.irqs)
        return cannot_read(std::move(c), view.irqs.problem);
    std::vector<std::string> per_cpu;
    std::vector<IrqFinding> fixed;
    for (const Irq& irq : *view.irqs) {
        const IrqPlacement placement = irq_placement(irq);
        if (placement == IrqPlacement::per_cpu) {
            per_cpu.push_back(irq_label(irq));
            continue;
        }
        auto where = delivered_to(irq);
        if (placement != IrqPlacement::fixed || !where ||
            where->intersection(split.reserved).empty())
            continue;
        const core::CpuList on = where->intersection(split.reserved);
        fixed.push_back(irq_finding(
            irq, on, irq.affinity ? "read-only smp_affinity_list" : "no smp_affinity_list"));
    }
    std::string about_per_cpu;
    if (!per_cpu.empty())
        about_per_cpu = std::to_string(per_cpu.size()) + " per-CPU IRQ" +
                        (per_cpu.size() == 1 ? " fires" : "s fire") +
                        " on every CPU, the reserved ones included: " + listing(per_cpu);
    if (fixed.empty()) {
        c.reason = per_cpu.empty() ? "no IRQ that cannot be moved is delivered to reserved " +
                                         cpus_text(split.reserved)
                                   : about_per_cpu;
        return c;
    }
    c.status = Status::warn;
    c.reason = std::to_string(fixed.size()) + (fixed.size() == 1 ? " IRQ" : " IRQs") +
               " on reserved " + cpus_text(split.reserved) +
               " cannot be moved: " + listing(busiest_first(fixed)) +
               (about_per_cpu.empty() ? "" : "; " + about_per_cpu);
    c.fix = "nothing to write: the kernel places these itself; if one fires often, keep the work "
            "that triggers it off the reserved CPUs or reserve other CPUs";
    if (e && e->reserve_method == core::ReserveMethod::isolcpus &&
        std::find(e->isolcpus_flags.begin(), e->isolcpus_flags.end(), "managed_irq") ==
            e->isolcpus_flags.end())
        c.fix += ", or add 'managed_irq' to tuning.kernel.isolcpus to keep managed IRQs off them";
    return c;
}

// A failure for user-space tasks: the profile reserves these CPUs, and the reference box
// kept 43 µs only because nothing else ran there (288 µs with the other cores loaded).
// A warning for unbound kernel threads that can be moved, each with the way that moves
// it; those the kernel does not let anyone move are named, and are not a finding.
Check check_reserved_cpu_tasks(const SystemView& view, const Expectation& e) {
    Check c = make_check("reserved-cpu-tasks", "tasks allowed on the reserved CPUs");
    if (e.reserve_method == core::ReserveMethod::none) {
        c.reason = "profile '" + e.profile_name +
                   "' pins services but reserves no CPUs (reserve_method none)";
        return c;
    }
    if (e.cores.reserved.empty()) {
        c.reason = "profile '" + e.profile_name + "' reserves no CPUs";
        return c;
    }
    if (!view.processes)
        return cannot_read(std::move(c), view.processes.problem);
    // Unbound workqueue workers follow /sys/devices/virtual/workqueue/cpumask
    // (Documentation/core-api/workqueue.rst); writing it moves them only when it still
    // holds a reserved CPU. Unread, it may.
    const Fact<core::CpuList>& wq_mask = view.workqueue_cpumask;
    const bool mask_moves = !wq_mask || !wq_mask->intersection(e.cores.reserved).empty();
    std::vector<std::string> user, workers, movable, unmovable;
    std::string movable_pids;
    std::size_t unseen = 0; // threads whose CPUs could not be read
    for (const Process& p : *view.processes) {
        if (service_of(p, e))
            continue;
        for (const Thread& t : p.threads) {
            if (!t.allowed) {
                ++unseen;
                continue;
            }
            if (t.allowed->intersection(e.cores.reserved).empty() || per_cpu_kthread(p, t))
                continue;
            const std::string item = quoted(p.comm) + " (pid " + std::to_string(p.pid) + ", " +
                                     cpus_text(*t.allowed) + ")";
            if (!p.kernel_thread) {
                user.push_back(item);
            } else if (t.flags & k_pf_no_setaffinity) {
                ((t.flags & k_pf_wq_worker) && mask_moves ? workers : unmovable).push_back(item);
            } else {
                movable.push_back(item);
                movable_pids += (movable_pids.empty() ? "" : " ") + std::to_string(p.pid);
            }
            break;
        }
    }
    const std::string reserved = cpus_text(e.cores.reserved);
    const std::string hk = e.cores.housekeeping.to_string();
    std::vector<std::string> kernel, fixes;
    if (!workers.empty()) {
        kernel.push_back(std::to_string(workers.size()) + " unbound workqueue worker" +
                         (workers.size() == 1 ? "" : "s") + " (" + listing(workers) + "), which " +
                         (workers.size() == 1 ? "follows" : "follow") +
                         " /sys/devices/virtual/workqueue/cpumask: " +
                         (wq_mask ? "it holds " + cpus_text(*wq_mask) : wq_mask.problem));
        // The file takes a hex mask: wq_unbound_cpumask_store() parses it with
        // cpumask_parse() (kernel/workqueue.c).
        const std::string mask = e.cores.housekeeping.to_mask();
        fixes.push_back(
            e.housekeeping_workqueues
                ? "rtprov-irq-tune@boot.service writes the housekeeping CPUs there "
                  "(tuning.housekeeping_workqueues): run 'systemctl start "
                  "rtprov-irq-tune@boot.service'; 'journalctl -b -u rtprov-irq-tune@boot.service' "
                  "says why it did not take"
                : "write " + as_hex_mask(e.cores.housekeeping, "the housekeeping CPUs") +
                      " to the workqueue cpumask, which takes a hex CPU mask: echo " + mask +
                      " > /sys/devices/virtual/workqueue/cpumask (tuning.housekeeping_workqueues: "
                      "true does it at every boot)");
    }
    if (!movable.empty()) {
        kernel.push_back(std::to_string(movable.size()) + " kernel thread" +
                         (movable.size() == 1 ? "" : "s") +
                         " not bound to one CPU that taskset "
                         "can move: " +
                         listing(movable));
        // taskset(1) -c takes a CPU list
        fixes.push_back("keep them on " +
                        as_cpu_list(e.cores.housekeeping, "the housekeeping CPUs") +
                        ": for pid in " + movable_pids + "; do taskset -pc " + hk +
                        " $pid; done (the kernel may widen them again when a CPU comes online)");
    }
    const std::string unmovable_text =
        unmovable.empty()
            ? ""
            : std::to_string(unmovable.size()) + " kernel thread" +
                  (unmovable.size() == 1 ? "" : "s") +
                  " the kernel does not let anyone move (PF_NO_SETAFFINITY; " +
                  (wq_mask ? "the workqueue cpumask already holds only " + cpus_text(*wq_mask)
                           : std::string("taskset refuses them")) +
                  "): " + listing(unmovable);
    if (!user.empty()) {
        c.status = Status::fail;
        c.reason = std::to_string(user.size()) + (user.size() == 1 ? " task" : " tasks") +
                   " outside the profile's services may run on reserved " + reserved + ": " +
                   listing(user);
        for (const std::string& k : kernel)
            c.reason += "; and " + k;
        if (!unmovable_text.empty())
            c.reason += "; also " + unmovable_text;
        if (e.reserve_method == core::ReserveMethod::isolcpus)
            c.fix = "isolcpus= keeps tasks off only at boot: whatever gave these an affinity "
                    "(taskset, CPUAffinity=) must leave " +
                    reserved + " out; if every task is affected, see check 'isolated-cpus'";
        else
            c.fix = "AllowedCPUs= on init.scope, system.slice and user.slice keeps tasks off: "
                    "check 'systemctl show -p AllowedCPUs system.slice user.slice init.scope' "
                    "and restart what started before it";
        for (const std::string& f : fixes)
            c.fix += "; " + f;
        return c;
    }
    if (!kernel.empty()) {
        c.status = Status::warn;
        c.reason = "reserved " + reserved + " " + (e.cores.reserved.size() == 1 ? "is" : "are") +
                   " open to " + core::join(kernel, "; and ") +
                   (unmovable_text.empty() ? "" : "; also " + unmovable_text);
        c.fix = core::join(fixes, "; ");
        return c;
    }
    c.reason = "only the profile's services and per-CPU kernel threads may run on reserved " +
               reserved + (unmovable_text.empty() ? "" : ", and " + unmovable_text);
    if (unseen > 0) {
        c.status = Status::warn;
        c.reason = "of the threads whose CPUs could be read, " + c.reason + "; " +
                   std::to_string(unseen) + (unseen == 1 ? " thread's" : " threads'") +
                   " Cpus_allowed_list could not be read, so they were not checked";
        c.fix = "run 'rtprov audit' as root, on the running system";
    }
    return c;
}

Check check_rt_above_audio(const SystemView& view, const Expectation& e) {
    Check c = make_check("rt-above-audio", "real-time tasks at or above the audio threads");
    std::optional<int> lowest;
    for (const ServiceExpectation& s : e.services)
        if (auto p = s.audio_priority())
            lowest = lowest ? std::min(*lowest, *p) : *p;
    if (!lowest) {
        c.reason = "no service of profile '" + e.profile_name + "' has real-time audio threads";
        return c;
    }
    if (e.cores.reserved.empty()) {
        c.reason = "profile '" + e.profile_name + "' reserves no CPUs";
        return c;
    }
    if (!view.processes)
        return cannot_read(std::move(c), view.processes.problem);
    // Per service, its threads at or above its own audio threads.
    std::vector<std::pair<const ServiceExpectation*, std::vector<std::string>>> inverted;
    std::vector<std::string> foreign;
    std::size_t unseen = 0; // threads whose CPUs could not be read
    const std::set<unsigned> sound_irqs = view.sound_irqs(e.sound_names);
    std::vector<std::string> unmovable;
    std::string movable_tids, all_tids;
    for (const Process& p : *view.processes) {
        const ServiceExpectation* s = service_of(p, e);
        for (const Thread& t : p.threads) {
            if (!t.allowed) {
                ++unseen;
                continue;
            }
            if (t.allowed->intersection(e.cores.reserved).empty())
                continue;
            if (s && s->is_audio_thread(t))
                continue;
            // What the profile's IRQ layout planned is not a finding: the sound path's IRQ
            // threads and PREEMPT_RT's timer threads run above the audio threads by design
            // (tuning.irqs, core/irq_layout.hpp), set so by rtprov-irq-tune@.service.
            if (p.kernel_thread) {
                const std::optional<ThreadSched> planned =
                    e.planned_kernel_thread(t.comm, sound_irqs);
                if (planned && *planned == ThreadSched{t.policy, t.rt_priority})
                    continue;
            }
            // migration/N is the CPU stopper: it shows as fifo 99 but runs only to move
            // tasks off its CPU (kernel/stop_machine.c).
            if (per_cpu_kthread(p, t) && t.comm.starts_with("migration/"))
                continue;
            const int bar = s && s->audio_priority() ? *s->audio_priority() : *lowest;
            const bool above =
                t.policy == core::SchedPolicy::deadline ||
                (t.policy && core::has_static_priority(*t.policy) && t.rt_priority >= bar);
            if (!above)
                continue;
            const std::string item =
                quoted(t.comm) + " (tid " + std::to_string(t.tid) + ", " + sched_text(t);
            if (s && s->audio_priority()) {
                auto it = std::find_if(inverted.begin(), inverted.end(),
                                       [s](const auto& entry) { return entry.first == s; });
                if (it == inverted.end())
                    it = inverted.insert(inverted.end(), {s, {}});
                it->second.push_back(item + ")");
            } else {
                foreign.push_back(item + ", " + cpus_text(*t.allowed) + ")");
                const std::string tid = std::to_string(t.tid);
                all_tids += (all_tids.empty() ? "" : " ") + tid;
                if (t.flags & k_pf_no_setaffinity)
                    unmovable.push_back(quoted(t.comm));
                else
                    movable_tids += (movable_tids.empty() ? "" : " ") + tid;
            }
        }
    }
    const std::string reserved = cpus_text(e.cores.reserved);
    const std::string bar = "priority " + std::to_string(*lowest);
    if (inverted.empty() && foreign.empty()) {
        c.reason =
            "no other real-time task at or above " + bar + " may run on reserved " + reserved;
        if (unseen > 0) {
            c.status = Status::warn;
            c.reason += "; " + std::to_string(unseen) + (unseen == 1 ? " thread's" : " threads'") +
                        " Cpus_allowed_list could not be read, so they were not checked";
            c.fix = "run 'rtprov audit' as root, on the running system";
        }
        return c;
    }
    std::vector<std::string> reasons;
    std::vector<std::string> fixes;
    for (const auto& [s, threads] : inverted) {
        // Measured: MPD at rr 45 above its own fifo 40 threads went 47 ms without the CPU
        // and the DAC dropped out 16 times in 10.5 s (on the reference box).
        reasons.push_back(quoted(s->unit) +
                          " runs other threads at or above its own audio "
                          "threads (" +
                          to_string(s->app_sched ? *s->app_sched : *s->unit_sched) +
                          "): " + listing(threads) +
                          "; they make the audio threads wait (measured on MPD: 47 ms without "
                          "the CPU, 16 dropouts in 10.5 s)");
        fixes.push_back("remove the unit-wide priority (tuning.services." + s->profile_key +
                        ".policy: app), apply and restart " + quoted(s->unit));
    }
    if (!foreign.empty()) {
        reasons.push_back(std::to_string(foreign.size()) + " real-time task" +
                          (foreign.size() == 1 ? "" : "s") + " at or above " + bar +
                          ", the audio threads', may run on reserved " + reserved + ": " +
                          listing(foreign));
        if (!unmovable.empty())
            reasons.push_back("the kernel does not let anyone move " + listing(unmovable) +
                              " (PF_NO_SETAFFINITY: taskset refuses them)");
        // chrt(1) without a policy option sets SCHED_RR: -f keeps them SCHED_FIFO (-o, not
        // real-time, below priority 1).
        const std::string chrt =
            *lowest > 1 ? "chrt -f -p " + std::to_string(*lowest - 1) : std::string("chrt -o -p 0");
        std::string fix = "lower them below " + std::to_string(*lowest) + ": for tid in " +
                          all_tids + "; do " + chrt + " $tid; done";
        // taskset(1) -c takes a CPU list.
        if (!movable_tids.empty())
            fix += "; or keep " +
                   (unmovable.empty() ? std::string("them") : "those taskset can move") +
                   " off the reserved CPUs with " +
                   as_cpu_list(e.cores.housekeeping, "the housekeeping CPUs") + ": for tid in " +
                   movable_tids + "; do taskset -pc " + e.cores.housekeeping.to_string() +
                   " $tid; done";
        fixes.push_back(fix);
    }
    c.status = inverted.empty() ? Status::warn : Status::fail;
    for (const std::string& r : reasons)
        c.reason += (c.reason.empty() ? "" : "; ") + r;
    for (const std::string& f : fixes)
        c.fix += (c.fix.empty() ? "" : "; ") + f;
    return c;
}

} // namespace rtprov::audit
