// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/selftest/latency_run.hpp"

#include <cstdint>
#include <string>
#include <vector>

// The self-test's latency run measured by the kernel's timerlat tracer instead of
// rtprov's own threads, so that each CPU's worst wake-up comes with why it was late.
namespace rtprov::selftest {

struct TracedRun {
    std::vector<CoreLatency> cores;   // as run_latency's, each with its 'cause'
    std::uint64_t lost_events = 0;    // the kernel dropped these: the reader fell behind
    std::uint64_t unparsed_lines = 0; // trace lines that were none rtprov reads
    // The trace's last lines (up to about 4 MiB) when a wake-up later than
    // options.stop_above_us stopped the run, as cyclictest --breaktrace keeps its trace;
    // "" otherwise.
    std::string kept_trace;
};

// The shortest and longest period the tracer takes (kernel/trace/trace_osnoise.c).
inline constexpr std::int64_t k_timerlat_min_period_us = 100;
inline constexpr std::int64_t k_timerlat_max_period_us = 1'000'000;

// Measures wake-up latency on 'options.cpus' with the timerlat tracer of 'tracefs' (from
// find_timerlat), in a private instance (TimerlatSession): the tracer's thread on each CPU
// at SCHED_FIFO options.priority wakes every options.interval; the idle policy, load,
// stop, summaries and interrupt work as for run_latency. Each wake-up later than
// 'stack_above_us' (0: none) comes with the kernel stack at its timer IRQ.
// Throws rtprov::Error, leaving the tracer as it was, when the options cannot be
// measured (an interval outside the tracer's 100 µs to 1 s) or the tracer cannot be run.
TracedRun run_traced_latency(const LatencyOptions& options, const std::string& tracefs,
                             std::uint32_t stack_above_us, const ProgressCallback& progress = {});

} // namespace rtprov::selftest
