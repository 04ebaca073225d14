// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/core/cpu_list.hpp"
#include "provisioner/selftest/latency_histogram.hpp"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

// What the kernel's timerlat tracer says about each wake-up, and why the worst one was
// late. The tracer (Documentation/trace/timerlat-tracer.rst) wakes a thread per CPU from
// a timer and prints two lines per activation: the timer's latency seen in its IRQ handler
// and the one seen by the thread; the osnoise events (include/trace/events/osnoise.h)
// print what ran on the CPU in between: IRQs, softirqs, other threads, NMIs, each with its
// start and (net) duration. This file reads those text lines and splits the worst wake-up
// of each CPU the way rtla's auto-analysis does (tools/tracing/rtla/src/timerlat_aa.c):
// the delay before the timer's IRQ ran, the IRQ itself, then each interference by name.
// Pure: no I/O.
namespace rtprov::selftest {

// One line of the instance's trace_pipe, as the kernel prints it.
struct TraceLine {
    enum class Kind {
        irq_sample,    // "#<seq> context irq timer_latency <ns> ns"
        thread_sample, // "#<seq> context thread timer_latency <ns> ns"
        irq_noise,     // "irq_noise: <desc>:<vector> start <s.ns> duration <ns> ns"
        softirq_noise, // "softirq_noise: <NAME>:<vector> start ..."
        thread_noise,  // "thread_noise: <comm>:<pid> start ..."
        nmi_noise,     // "nmi_noise: start ... duration ... ns"
        stack_start,   // "<stack trace>": the lines " => function" follow
        stack_frame,   // " => function" (no header: belongs to the last stack_start)
        lost,          // "CPU:<n> [LOST <count> EVENTS]": the reader fell behind
    };
    Kind kind = Kind::irq_sample;
    unsigned cpu = 0;
    std::string task;       // the task running when the line was written ("<idle>" for idle)
    int pid = 0;            // its pid (0: idle)
    std::int64_t ts_ns = 0; // when the line was written (the trace prints µs)
    std::uint64_t seq = 0;  // samples: the activation's number
    std::int64_t latency_ns = 0;
    std::string name;          // noise: "local_timer:236", "NET_RX:3", "burner:1234"; frame
    std::int64_t start_ns = 0; // noise: when it started (nanoseconds)
    std::int64_t duration_ns = 0;
    std::uint64_t lost = 0; // lost: events the kernel dropped
};

// One line without its newline, or nullopt for a line that is none of the above (the
// trace's '#' header, another tracer's output, a line cut off). Never throws.
std::optional<TraceLine> parse_trace_line(std::string_view line);

// Something that ran on the measured CPU between the timer's IRQ and the thread: each
// IRQ, softirq, thread or NMI once, with how often and how long in all.
struct Interference {
    enum class Kind { irq, softirq, thread, nmi };
    Kind kind = Kind::irq;
    std::string name;             // "virtio0-requests:25", "NET_RX:3", "burner:1234", "nmi"
    std::int64_t duration_ns = 0; // all its runs together (net of what interrupted them)
    std::uint64_t count = 1;      // how often it ran
};
std::string_view to_string(Interference::Kind kind); // "irq", "softirq", "thread", "nmi"

// Why one wake-up was late: the thread's latency split as the trace shows it.
struct WakeupCause {
    double at_s = 0;                    // seconds from the first traced wake-up
    std::uint64_t activation = 0;       // timerlat's activation number
    std::int64_t thread_latency_ns = 0; // the whole wake-up latency (the sample's)
    // The trace had this activation's IRQ line: the split below is known. Without it
    // (events lost, or the run began between the two lines) only the total is.
    bool split_known = false;
    std::int64_t irq_latency_ns = 0; // timer expiry until timerlat's IRQ handler ran
    // Of which: expiry until the timer's IRQ began (IRQs off, an earlier IRQ, exit from
    // idle, the hardware); -1 when the timer's own irq_noise was not seen.
    std::int64_t irq_handler_delay_ns = -1;
    bool from_idle = false;        // the CPU was idle when the timer expired
    std::int64_t idle_exit_ns = 0; // the handler delay when it is the exit from idle
                                   // (idle, and no earlier IRQ still running)
    std::string earlier_irq;       // an IRQ still running when the timer expired, if any
    std::int64_t timer_irq_ns = 0; // the timer IRQ's own duration
    // "comm:pid" of the thread running when the timer expired, as it left the CPU: the
    // idle task ("swapper/3:0") when from_idle; "" when the trace showed no such line
    std::string blocking_thread;
    std::int64_t blocking_ns = 0;           // how long it ran on after that (net)
    std::vector<Interference> interference; // in the order they first ran, at most k_kept
    std::size_t interference_left_out = 0;  // runs of others, counted in the sums only
    std::int64_t irq_ns = 0, softirq_ns = 0, thread_ns = 0, nmi_ns = 0; // sums
    std::vector<std::string> stack; // the kernel stack at the timer's IRQ (print_stack)

    static constexpr std::size_t k_kept = 16;

    // Thread latency not covered by the parts above: the scheduler and the switch to the
    // thread, or what the trace did not see (a hypervisor's delay); 0 when they overlap.
    std::int64_t rest_ns() const;
    // The largest single part, in words: "thread 'burner:1234'", "IRQ 'qxl:21'", "exit
    // from idle", "the timer's IRQ was late (IRQs off or the hardware)", ...; with its
    // share in ns.
    std::pair<std::string, std::int64_t> main_part() const;
};

// Each CPU's wake-ups from the trace, and the cause of its worst one.
struct TracedCore {
    LatencyHistogram histogram;
    std::int64_t max_at_ns = 0;              // when the worst came, from the first wake-up
    std::int64_t last_ns = 0;                // the last wake-up, from the first
    std::uint64_t missed = 0;                // activations the tracer skipped (a wake-up a whole
                                             // period late): gaps in the expected timer times
    std::vector<std::uint32_t> max_per_s_us; // per second from the first wake-up
    std::vector<std::uint32_t> missed_per_s;
    std::optional<WakeupCause> worst;
};

// Reads trace lines one at a time and keeps, per CPU, every thread latency and the
// split of the worst one. 'period_ns' is the tracer's period; 'seconds' the expected
// length of the run (per-second slots, the last one also takes what comes later);
// 'cpus' the CPUs traced (empty: any), a line of another counted as unread.
class TimerlatAnalysis {
  public:
    TimerlatAnalysis(std::int64_t period_ns, std::size_t seconds,
                     std::uint32_t histogram_limit_us = LatencyHistogram::k_default_limit_us,
                     core::CpuList cpus = {});

    void add(const TraceLine& line);
    // Each line of 'text' (whole lines; a last one without a newline is taken too).
    void add_text(std::string_view text);

    // The CPUs that had a wake-up, by number.
    const std::map<unsigned, TracedCore>& cores() const { return m_done; }
    std::uint64_t lost_events() const { return m_lost; }
    std::uint64_t unparsed_lines() const { return m_unparsed; }

  private:
    struct Window; // one CPU's activation in progress
    void finish(unsigned cpu, Window& w, const TraceLine& sample);

    std::int64_t m_period_ns;
    std::size_t m_seconds;
    std::uint32_t m_limit_us;
    core::CpuList m_cpus;
    std::int64_t m_first_ns = -1;
    std::map<unsigned, std::shared_ptr<Window>> m_windows;
    std::map<unsigned, TracedCore> m_done;
    std::optional<unsigned> m_stack_cpu; // the CPU whose stack frames follow
    std::uint64_t m_lost = 0;
    std::uint64_t m_unparsed = 0;
};

} // namespace rtprov::selftest
