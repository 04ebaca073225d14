// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/core/cpu_list.hpp"
#include "provisioner/selftest/latency_histogram.hpp"
#include "provisioner/selftest/pinned_thread.hpp"
#include "provisioner/selftest/timerlat_trace.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

// The latency measurement of `rtprov selftest`: how late a real-time thread wakes up from
// a timer on each chosen CPU.
namespace rtprov::selftest {

// What the CPUs may do when idle during a measurement. The same core measures very
// differently under the two (43 µs vs 211 µs worst case on the reference box), so
// every result says which one was used.
enum class IdlePolicy {
    system_default, // deep idle states allowed, as the box normally runs (cyclictest
                    // --default-system)
    held,           // /dev/cpu_dma_latency held at 0 during the run (cyclictest's default)
};

// "default", "held": the names the CLI, the reports and the history use.
std::string_view to_string(IdlePolicy policy);

struct CoreLatency;

// Told, from the controlling thread, how every core stands 'elapsed_s' into a run that is
// still going (a soak run's periodic summary). What it throws ends the run.
using SummaryCallback =
    std::function<void(const std::vector<CoreLatency>& so_far, double elapsed_s)>;

struct LatencyOptions {
    core::CpuList cpus;                           // one measuring thread per CPU
    IdlePolicy idle = IdlePolicy::system_default; // honest by default, see IdlePolicy
    std::chrono::microseconds interval{100};      // between planned wake-ups
    std::chrono::milliseconds duration{10'000};
    int priority = 99; // SCHED_FIFO
    std::uint32_t histogram_limit_us = LatencyHistogram::k_default_limit_us;
    // Stop the whole run at the first wake-up later than this (cyclictest --breaktrace);
    // 0: never.
    std::uint32_t stop_above_us = 0;
    core::CpuList load_cpus;                              // a LoadGenerator on these, if any
    std::string cpu_dma_latency = "/dev/cpu_dma_latency"; // used with IdlePolicy::held
    // Called every 'summary_every' (whole seconds; 0: never) with a snapshot of each core.
    std::chrono::seconds summary_every{0};
    SummaryCallback on_summary;
    // Set (by a signal handler, say) to end the run early: it ends within a second and
    // returns what was measured until then, each core's 'measured_s' saying how long.
    const std::atomic<bool>* interrupt = nullptr;
};

// The result for one CPU. Latency = the moment the thread ran again minus the planned
// wake-up, in µs; the percentiles follow LatencyHistogram's rule.
struct CoreLatency {
    unsigned cpu = 0;
    IdlePolicy idle = IdlePolicy::system_default;
    std::uint64_t cycles = 0;   // samples taken
    std::uint64_t overruns = 0; // planned wake-ups skipped because a sample was later than
                                // a whole interval (not measured again)
    double min_us = 0;
    double avg_us = 0;
    double max_us = 0;
    double p50_us = 0;
    double p99_us = 0;
    double p999_us = 0;         // 99.9 %
    double p9999_us = 0;        // 99.99 %
    double max_at_s = 0;        // when the maximum happened, seconds from the start
    LatencyHistogram histogram; // for count_above() and the reports
    // The run second by second (index: whole seconds from the start): the largest
    // latency in µs (rounded up, as the histogram buckets it; 0: no sample that second)
    // and the planned wake-ups missed. When in the run the misses came.
    std::vector<std::uint32_t> max_per_s_us;
    std::vector<std::uint32_t> missed_per_s;
    // This core's wake-up, later than LatencyOptions::stop_above_us, ended the run (of
    // every core) at 'max_at_s', and that wake-up is the maximum.
    bool stopped_run = false;
    // How long it measured, in seconds: the whole duration, or less when the run was
    // stopped or interrupted, or when this is a snapshot of a run still going.
    double measured_s = 0;
    // Measured through the kernel's timerlat tracer (run_traced_latency): why its worst
    // wake-up was late; nullopt for rtprov's own threads, or no wake-up traced.
    std::optional<WakeupCause> cause;

    // Takes 'h' as this core's histogram and sets the figures read from it: cycles,
    // minimum, average, maximum and the percentiles, in µs.
    void set_histogram(LatencyHistogram h);
};

// Measures wake-up latency on every CPU of 'options.cpus' at the same time: one
// SCHED_FIFO thread per CPU, pinned, on an absolute CLOCK_MONOTONIC schedule. Memory is
// locked (mlockall) for the run and unlocked afterwards; with IdlePolicy::held the
// cpu_dma_latency request is held for the run and dropped afterwards. 'progress' is
// called about once a second from the calling thread, 'options.on_summary' every
// 'options.summary_every'; 'options.interrupt' ends the run early. Returns one result per CPU in
// ascending order. Throws rtprov::Error, saying what to do, when the options are
// invalid, a CPU is offline or outside this process's affinity, SCHED_FIFO or memory
// locking is not permitted, or cpu_dma_latency cannot be held.
std::vector<CoreLatency> run_latency(const LatencyOptions& options,
                                     const ProgressCallback& progress = {});

// Throws rtprov::Error, saying what to do, when 'options' are invalid or name a CPU this
// process cannot measure or load (see check_cpus), on this machine's online CPUs.
void check_latency_options(const LatencyOptions& options);

// Throws rtprov::Error unless every CPU of 'wanted' is in 'online' and in 'allowed' (the
// process's affinity); 'doing' names the use in the message ("measure on"). Pure.
void check_cpus(const core::CpuList& wanted, const core::CpuList& online,
                const core::CpuList& allowed, std::string_view doing);

} // namespace rtprov::selftest
