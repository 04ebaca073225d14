// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/core/cpu_list.hpp"
#include "provisioner/system/proc_stat.hpp"
#include "provisioner/system/sysroot.hpp"

#include <cstddef>
#include <string>
#include <vector>

// What competes with the audio thread on its CPUs: the real-time threads there, and what is
// runnable there, from each thread's /proc/<pid>/task/<tid>/stat. Read when an underrun
// happens, to say what was running.
namespace rtprov::system {

struct CpuThread {
    int pid = 0;                                    // its process
    int tid = 0;                                    // the thread
    std::string comm;                               // its name, on one line (core::one_line)
    ThreadPolicy policy = core::SchedPolicy::other; // nullopt: a number the kernel names not
    int priority = 0;                               // rt_priority: 1-99 for fifo and rr, else 0
    unsigned cpu = 0;                               // the CPU it last ran on ('processor')
    char state = 0;                                 // 'R' runnable, 'S' sleeping, 'D'...
};

struct CpuThreads {
    std::vector<CpuThread> threads; // by pid, then tid
    std::size_t looked_at = 0;      // threads whose stat was read
    bool truncated = false;         // stopped at the limit: more threads than it
};

// A few thousand: a box with more threads than that is not an audio appliance, and the
// reading must stay short when it runs beside the audio.
inline constexpr std::size_t k_max_threads_looked_at = 4096;

// The threads that last ran on one of 'cpus' and either have a real-time policy (SCHED_FIFO,
// SCHED_RR, or SCHED_DEADLINE, which outranks them both) or are runnable (state 'R'). A
// thread or process that ends while it is read is left out. Stops after 'limit' threads
// looked at, saying so. Fails only when /proc cannot be listed.
Fact<CpuThreads> rt_threads_on(const SysRoot& root, const core::CpuList& cpus,
                               std::size_t limit = k_max_threads_looked_at);

} // namespace rtprov::system
