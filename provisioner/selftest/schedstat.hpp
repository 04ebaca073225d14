// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

// /proc/<pid>/task/<tid>/schedstat, and the starvation signature read from two samples of
// it (fs/proc/base.c proc_pid_schedstat; the RT_PUSH_IPI regression report, LKML 2026-08-14).
namespace rtprov::selftest {

// One schedstat line: "<ns on CPU> <ns waiting on a runqueue> <timeslices>" (the kernel's
// se.sum_exec_runtime, sched_info.run_delay, sched_info.pcount; "0 0 0" when sched_info is
// off, fs/proc/base.c proc_pid_schedstat).
struct SchedStat {
    std::uint64_t run_ns = 0;
    std::uint64_t wait_ns = 0;
    std::uint64_t timeslices = 0;

    friend bool operator==(const SchedStat&, const SchedStat&) = default;
};

// Parses a schedstat file's text: three unsigned numbers separated by blanks, one optional
// trailing newline. nullopt for anything else. Pure.
std::optional<SchedStat> parse_schedstat(std::string_view text);

// The starvation signature: over a window a thread sat runnable for (almost) all of it
// without running. Shares of the window; the defaults are the ones rtprov uses.
struct StarvationRule {
    double min_wait_share = 0.90; // runqueue wait at least 90 % of the window
    double max_run_share = 0.01;  // time on a CPU below 1 % of the window
};

// Whether the change from 'before' to 'after', taken 'window' apart, shows the signature.
// Counters that went backwards (not the same thread) or an empty window never do. Pure.
bool is_starved(const SchedStat& before, const SchedStat& after, std::chrono::nanoseconds window,
                const StarvationRule& rule = {});

enum class SampleStatus {
    ok,
    vanished,  // no such thread (any more): the file could not be read
    malformed, // the file did not read as schedstat
};

// One thread's schedstat at one moment.
struct ThreadSample {
    pid_t tid = 0;
    std::string name; // from comm, without the newline; "" when unreadable
    SampleStatus status = SampleStatus::vanished;
    SchedStat stat; // valid when status is ok
};

// Reads <proc_root>/<pid>/task/<tid>/{schedstat,comm} for each of 'tids', in that order.
// Never throws for a missing or malformed file: that is the sample's status.
std::vector<ThreadSample> sample_threads(const std::string& proc_root, pid_t pid,
                                         const std::vector<pid_t>& tids);

// A thread that showed the signature in one window.
struct StarvedThread {
    pid_t tid = 0;
    std::string name;
    std::chrono::nanoseconds window_start{0}; // from the start of the measurement
    std::chrono::nanoseconds window{0};
    std::uint64_t wait_ns = 0; // runqueue wait during the window
    std::uint64_t run_ns = 0;  // time on a CPU during the window
};

// The threads that show the signature between two samples taken 'window' apart, the
// first at 'window_start'. Threads are matched by tid; one not ok in either sample is
// left out. Pure.
std::vector<StarvedThread> find_starved(const std::vector<ThreadSample>& before,
                                        const std::vector<ThreadSample>& after,
                                        std::chrono::nanoseconds window_start,
                                        std::chrono::nanoseconds window,
                                        const StarvationRule& rule = {});

} // namespace rtprov::selftest
