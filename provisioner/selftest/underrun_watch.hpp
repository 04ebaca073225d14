// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/core/cpu_list.hpp"
#include "provisioner/core/sched_policy.hpp"
#include "provisioner/selftest/audio_run.hpp"
#include "provisioner/system/rt_threads.hpp"
#include "provisioner/system/sysroot.hpp"

#include <atomic>
#include <chrono>
#include <optional>
#include <thread>
#include <vector>

// What was running when the audio underran: a watcher beside the playing thread that, at
// each new underrun it sees, reads which threads were real-time or runnable on the
// player's CPUs (system::rt_threads_on), so that a failing test can say what took the CPU.
namespace rtprov::selftest {

// How often the watcher looks at the underrun count: often enough that what it reads is
// what ran around the underrun, seldom enough to cost nothing beside the audio.
inline constexpr std::chrono::milliseconds k_underrun_poll{20};

// A thread's place in the kernel's order of who runs first: SCHED_DEADLINE above all
// (100), SCHED_FIFO and SCHED_RR by their priority (1-99), the others 0. Pure.
int run_rank(std::optional<core::SchedPolicy> policy, int priority);

// Whether 'a' is listed before 'b': the higher run_rank() first, then the runnable, then
// by CPU, pid and tid. Pure.
bool listed_before(const RunningThread& a, const RunningThread& b);

// What ran on 'cpus', from the threads read there: all but the player's own thread
// ('player_tid'; 0: none to leave out), listed_before() in order, at most
// k_max_running_threads, the rest counted in 'more'. Pure.
// 'own_pid' (0: none), rtprov's own process, is left out too: its latency run's threads
// wake on the same CPUs by design.
WhatRan what_ran(const system::CpuThreads& threads, int player_tid, const core::CpuList& cpus,
                 int own_pid = 0);

// Watches 'live' from a thread of its own at SCHED_OTHER, kept off 'player_cpus' (see
// AwayFrom), every 'poll'. At each look that finds new underruns, as long as one of the
// first k_max_underruns_looked_at is among them, it reads what ran on 'cpus' under 'root'
// (its /proc) and keeps it for each of those underruns. 'live' must outlive the watcher.
class UnderrunWatch {
  public:
    UnderrunWatch(system::SysRoot root, core::CpuList cpus, core::CpuList player_cpus,
                  const AudioLive& live, std::chrono::milliseconds poll = k_underrun_poll);
    ~UnderrunWatch();
    UnderrunWatch(const UnderrunWatch&) = delete;
    UnderrunWatch& operator=(const UnderrunWatch&) = delete;

    // Stops watching and returns what ran at each underrun seen: [i] for the (i+1)th, at
    // most k_max_underruns_looked_at; nullopt where /proc could not be read.
    std::vector<std::optional<WhatRan>> finish();

  private:
    void watch() noexcept;
    void look(std::uint64_t seen, std::uint64_t now);

    system::SysRoot m_root;
    core::CpuList m_cpus;
    core::CpuList m_player_cpus;
    const AudioLive& m_live;
    std::chrono::milliseconds m_poll;
    std::atomic<bool> m_stop{false};
    std::vector<std::optional<WhatRan>> m_seen; // the watcher's until it is joined
    std::thread m_thread;
};

// Sets 'running' of the underruns in 'result' from what the watcher saw ([i] for the
// (i+1)th underrun). Pure.
void attach_what_ran(AudioResult& result, const std::vector<std::optional<WhatRan>>& seen);

} // namespace rtprov::selftest
