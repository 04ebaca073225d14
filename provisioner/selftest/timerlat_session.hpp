// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/core/cpu_list.hpp"
#include "provisioner/core/fd.hpp"
#include "provisioner/core/result.hpp"

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

// The kernel's timerlat tracer run for the self-test in a tracefs instance of its own
// (Documentation/trace/ftrace.rst, "Instances"): the global tracer, and any other
// instance, are never touched. The osnoise settings the tracer reads are global
// (Documentation/trace/timerlat-tracer.rst, "Tracer options"), so the ones changed are
// saved first and put back at the end, on every way out.
namespace rtprov::selftest {

// The tracefs folder whose kernel has the timerlat tracer: /sys/kernel/tracing, else
// /sys/kernel/debug/tracing, under 'root'; or why there is none, in words for the report
// ("this kernel has no timerlat tracer ...", "tracefs is not mounted ...").
core::Result<std::string> find_timerlat(const std::string& root = "/");

struct TimerlatSetup {
    std::string tracefs; // from find_timerlat
    core::CpuList cpus;  // a timerlat thread on each
    std::chrono::microseconds period{1000};
    int priority = 95;                // SCHED_FIFO of the timerlat threads (the kernel's 95)
    std::uint32_t print_stack_us = 0; // the kernel stack of wake-ups this late; 0: none
    std::uint32_t stop_above_us = 0;  // the kernel stops tracing at a wake-up this late
    std::uint32_t buffer_kb = 4096;   // the instance's ring buffer per CPU
    // The osnoise settings as found, kept while they are changed: a run killed together
    // with its guard (a whole cgroup killed) leaves it, and the next run puts them back.
    std::string saved_file = "/run/rtprov/timerlat-osnoise.saved";
};

// One run of the tracer. The constructor checks that nothing else uses the tracer (a
// second rtprov, rtla, a user's instance), removes instances a killed rtprov left behind,
// makes the instance 'rtprov-<pid>', saves the osnoise settings (in memory and in
// setup.saved_file; a saved file found there is what a killed run changed them from, and
// those are the settings put back), starts a guard process, then loads the tracer, not
// yet recording. The destructor stops it,
// removes the instance and puts the settings back; if rtprov dies first (a kill), the
// guard, which waits for rtprov's end, does the same. Throws rtprov::Error, leaving
// everything as it found it, when the tracer is in use, a setting cannot be written, or
// the tracer's threads cannot be given their priority.
class TimerlatSession {
  public:
    explicit TimerlatSession(const TimerlatSetup& setup);
    ~TimerlatSession();
    TimerlatSession(const TimerlatSession&) = delete;
    TimerlatSession& operator=(const TimerlatSession&) = delete;

    // Starts recording (the instance's tracing_on).
    void start();
    // Stops recording; what was recorded can still be read.
    void stop();
    // Whether the instance still records: the kernel turns it off itself at a wake-up
    // later than stop_above_us (osnoise/stop_tracing_total_us).
    bool recording() const;
    // Appends what the kernel has for the reader, waiting at most 'timeout_ms' for the
    // first byte. Returns the bytes appended (0: nothing came).
    std::size_t read(std::string& out, int timeout_ms);

    const std::string& instance() const { return m_instance; }

    // A file to write back at the end, with the value to write.
    struct Undo {
        std::string path;
        std::string value;
    };

  private:
    void restore() noexcept;

    std::string m_tracefs;
    std::string m_instance;   // tracefs/instances/rtprov-<pid>
    std::vector<Undo> m_undo; // in the order to write; the instance is removed first
    std::string m_saved_file; // removed once they are written back
    core::Fd m_lock;          // flock of tracefs/instances: one rtprov at a time
    core::Fd m_pipe;          // the instance's trace_pipe
    core::Fd m_guard_channel; // the guard reads until this closes
    pid_t m_guard = -1;
};

// Whether 'available_tracers' (the file's text) lists 'tracer'. Pure.
bool lists_tracer(const std::string& available_tracers, const std::string& tracer);

} // namespace rtprov::selftest
