// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/core/cpu_list.hpp"
#include "provisioner/system/sound_cards.hpp"

#include <functional>
#include <optional>
#include <string>
#include <vector>

// What rtprov-irq-tune@.service does at boot and when a sound card appears (tuning.irqs,
// tuning.housekeeping_workqueues; the numbers come from core::irq_layout at plan time):
// the IRQ threads (irq/N-name, kernel/irq/manage.c) of the interrupts that feed the sound
// cards at SCHED_FIFO 'sound_priority' with their IRQs on 'sound_cpus', every other IRQ
// thread at 'other_priority', PREEMPT_RT's timer threads (ktimers/N) at 'timer_priority',
// the unbound workqueues on 'workqueue_cpus' (/sys/devices/virtual/workqueue/cpumask,
// Documentation/core-api/workqueue.rst). Before it changes a value it saves the one it
// found in the state file, once, so that restore() puts back what was there before
// rtprov, however often it ran (a reboot forgets both: the kernel's defaults return).
namespace rtprov::live {

inline constexpr const char* k_irq_tune_state = "/run/rtprov/irq-tune.state";

struct IrqTuneRequest {
    int sound_priority = 0;
    core::CpuList sound_cpus;
    std::vector<std::string> sound_names; // fnmatch globs for IRQ handler names
    std::optional<int> other_priority;
    std::optional<int> timer_priority;
    std::optional<core::CpuList> workqueue_cpus;
};

// A thread's policy and priority (sched_setscheduler(2) numbers).
struct ThreadSched {
    int policy = 0;
    int priority = 0;
    friend bool operator==(const ThreadSched&, const ThreadSched&) = default;
};

// The kernel calls, replaced in tests: a thread's scheduling, and a write to a /proc or
// /sys file (its errno, 0 when it took).
struct KernelCalls {
    std::function<std::optional<ThreadSched>(int pid)> get_sched;
    std::function<std::string(int pid, const ThreadSched& sched)> set_sched;
    std::function<int(const std::string& path, const std::string& value)> write;
};
KernelCalls real_kernel_calls(); // sched_getscheduler/sched_setscheduler, fs::write_kernel_value

struct IrqTuneResult {
    std::vector<std::string> done;     // one line per change, for the journal
    std::vector<std::string> findings; // what could not be done or seen, and why
    std::vector<system::SoundCard> cards;
    bool ok = true; // false when a change that should have worked failed
};

// 'root' is '/' (tests: a fixture tree holding proc/ and sys/); writes go through
// 'calls.write' to paths under it, the state to 'state_path'.
IrqTuneResult tune_irqs(const std::string& root, const IrqTuneRequest& request,
                        const KernelCalls& calls, const std::string& state_path);

// Puts back every value the state file saved and removes it; no state file: nothing to do.
// A thread is put back only while the same pid has the same name, byte for byte.
// Both refuse, changing nothing, a state file that is not rtprov's as it wrote it (another
// owner, writable by others, a symlink, a line that does not parse), and wait up to 10 s
// for another run on the same state file. The state keeps a thread's name whatever bytes
// it holds (escaped); the earlier release's state, whose names were not, is read as well
// unless a name in it held a line break.
IrqTuneResult restore_irqs(const std::string& root, const KernelCalls& calls,
                           const std::string& state_path);

} // namespace rtprov::live
