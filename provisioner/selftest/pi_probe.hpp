// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/selftest/pinned_thread.hpp"
#include "provisioner/selftest/schedstat.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

// The PI-boost starvation probe of `rtprov selftest`: the shape of the workload in the
// NO_RT_PUSH_IPI regression report (LKML, 2026-08-14) — one SCHED_RR audio thread
// and SCHED_OTHER workers sharing a priority-inheritance mutex — measured by how long the
// real-time thread waits for the lock and by schedstat windows that show a thread
// runnable but not running.
namespace rtprov::selftest {

struct PiProbeOptions {
    unsigned workers = 4;                            // SCHED_OTHER threads taking the mutex
    std::chrono::microseconds critical_section{200}; // CPU time a worker holds the mutex
    std::chrono::microseconds rt_period{1000};       // the RT thread takes the mutex once per
                                                     // period, like an audio cycle
    std::chrono::milliseconds duration{5000};
    std::chrono::milliseconds window{100}; // between schedstat samples
    int rt_priority = 20; // SCHED_RR, as the DAW's audio thread in the report; the watcher
                          // runs at SCHED_FIFO one above
    std::string proc_root = "/proc"; // tests point it at a fixture tree
    StarvationRule rule;
    const std::atomic<bool>* interrupt = nullptr; // set: the probe ends within a second
};

struct PiProbeResult {
    unsigned workers = 0;
    double critical_section_us = 0;
    std::uint64_t acquisitions = 0;        // by the RT thread
    std::uint64_t worker_acquisitions = 0; // by all workers
    double worst_wait_us = 0;              // the RT thread's wait for the mutex
    double avg_wait_us = 0;
    double worst_wait_at_s = 0;           // seconds from the start
    std::uint64_t windows = 0;            // schedstat windows compared
    bool schedstat_seen = false;          // some sample had non-zero counters; false: the
                                          // kernel reports "0 0 0" (no sched_info) or none
                                          // was readable, so starvation could not be seen
    std::uint64_t unreadable_samples = 0; // vanished or malformed schedstat files
    std::vector<StarvedThread> starved;   // every window with the signature
};

// Runs the probe for 'options.duration'; 'progress' is called about once a second from
// the calling thread. A stall is credited to schedstat's wait counter when the thread
// finally runs, so the probe threads stop, let the watcher take a last sample, and only
// then exit. Throws rtprov::Error, saying what to do, when the options are invalid,
// SCHED_RR / SCHED_FIFO is not permitted, or priority-inheritance mutexes are missing.
PiProbeResult run_pi_probe(const PiProbeOptions& options, const ProgressCallback& progress = {});

// RT_PUSH_IPI as the sched features file shows it.
enum class PushIpiState {
    on,         // RT_PUSH_IPI
    off,        // NO_RT_PUSH_IPI: the regression's condition on a non-PREEMPT_RT kernel
    unknown,    // the file lists neither
    unreadable, // no file (debugfs not mounted, or no CONFIG_SCHED_DEBUG)
};

// "on", "off", "unknown", "unreadable".
std::string_view to_string(PushIpiState state);

// What a report puts next to the probe's result.
struct KernelContext {
    std::string version; // uname -v
    bool preempt_rt = false;
    PushIpiState push_ipi = PushIpiState::unreadable;
};

// From 'uname_version' (uname -v) and the text of /sys/kernel/debug/sched/features
// (nullopt when it could not be read). Pure.
KernelContext kernel_context(const std::string& uname_version,
                             const std::optional<std::string>& sched_features);

// The running kernel's context: uname(2) and 'sched_features'. Reads only; never mounts
// debugfs.
KernelContext
read_kernel_context(const std::string& sched_features = "/sys/kernel/debug/sched/features");

} // namespace rtprov::selftest
