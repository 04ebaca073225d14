// SPDX-License-Identifier: Apache-2.0
#include "provisioner/selftest/timerlat_run.hpp"

#include "provisioner/core/error.hpp"
#include "provisioner/selftest/idle_hold.hpp"
#include "provisioner/selftest/load.hpp"
#include "provisioner/selftest/timerlat_session.hpp"

#include <algorithm>
#include <optional>

namespace rtprov::selftest {

namespace {

// 4 MiB: the 200 ms the guest's interrupt storm held a wake-up up took 1 MiB of lines
constexpr std::size_t k_kept_trace_bytes = 4u << 20;

// A CPU's figures as run_latency gives them. 'seconds': the per-second slots.
CoreLatency to_core(unsigned cpu, const TracedCore* traced, const LatencyOptions& options,
                    std::size_t seconds) {
    CoreLatency c;
    c.cpu = cpu;
    c.idle = options.idle;
    c.max_per_s_us.assign(seconds + 1, 0);
    c.missed_per_s.assign(seconds + 1, 0);
    c.histogram = LatencyHistogram(options.histogram_limit_us);
    if (!traced)
        return c;
    c.set_histogram(traced->histogram);
    c.overruns = traced->missed;
    c.max_at_s = static_cast<double>(traced->max_at_ns) / 1e9;
    c.measured_s = static_cast<double>(traced->last_ns) / 1e9;
    if (!traced->max_per_s_us.empty()) {
        c.max_per_s_us = traced->max_per_s_us;
        c.missed_per_s = traced->missed_per_s;
    }
    c.cause = traced->worst;
    return c;
}

std::vector<CoreLatency> cores_of(const TimerlatAnalysis& analysis, const LatencyOptions& options,
                                  std::size_t seconds) {
    std::vector<CoreLatency> cores;
    for (unsigned cpu : options.cpus.cpus()) {
        auto it = analysis.cores().find(cpu);
        cores.push_back(
            to_core(cpu, it == analysis.cores().end() ? nullptr : &it->second, options, seconds));
    }
    return cores;
}

} // namespace

TracedRun run_traced_latency(const LatencyOptions& options, const std::string& tracefs,
                             std::uint32_t stack_above_us, const ProgressCallback& progress) {
    check_latency_options(options);
    const AwayFrom away(options.cpus); // this thread reads the trace, never where it is made
    const auto period_us = std::chrono::microseconds(options.interval).count();
    if (period_us < k_timerlat_min_period_us || period_us > k_timerlat_max_period_us)
        throw Error("the timerlat tracer wakes every 100 µs to 1 s, not every " +
                    std::to_string(period_us) +
                    " µs; choose an --interval in that range, or measure without --trace");
    const std::int64_t duration_ns = std::chrono::nanoseconds(options.duration).count();
    const auto seconds = std::size_t((duration_ns + 999'999'999) / 1'000'000'000);

    TimerlatSetup setup;
    setup.tracefs = tracefs;
    setup.cpus = options.cpus;
    setup.period = std::chrono::microseconds(period_us);
    setup.priority = options.priority;
    setup.print_stack_us = stack_above_us;
    setup.stop_above_us = options.stop_above_us;
    TimerlatSession session(setup);

    std::optional<IdleHold> idle_hold;
    if (options.idle == IdlePolicy::held)
        idle_hold.emplace(options.cpu_dma_latency);
    std::optional<LoadGenerator> load;
    if (!options.load_cpus.empty())
        load.emplace(options.load_cpus);

    TimerlatAnalysis analysis(period_us * 1000, seconds, options.histogram_limit_us, options.cpus);
    TracedRun run;
    std::string pending; // text after the last whole line
    std::string tail;    // the last lines, for a run that stops
    std::optional<unsigned> stopped_by;
    auto digest = [&](bool all) {
        const std::size_t end = all ? pending.size() : pending.rfind('\n') + 1;
        if (end == 0 || end > pending.size())
            return;
        const std::string_view lines(pending.data(), end);
        analysis.add_text(lines);
        if (options.stop_above_us > 0) {
            tail.append(lines);
            if (tail.size() > 2 * k_kept_trace_bytes)
                tail.erase(0, tail.size() - k_kept_trace_bytes);
        }
        pending.erase(0, end);
        if (options.stop_above_us > 0 && !stopped_by) {
            // the core whose wake-up went over first
            std::int64_t first = -1;
            for (const auto& [cpu, core] : analysis.cores())
                if (core.histogram.max_ns() > std::int64_t(options.stop_above_us) * 1000 &&
                    (first < 0 || core.max_at_ns < first)) {
                    first = core.max_at_ns;
                    stopped_by = cpu;
                }
        }
    };

    const std::int64_t start = monotonic_ns();
    session.start();
    const auto every_s = options.summary_every.count();
    for (std::int64_t second = 1;; ++second) {
        const std::int64_t target = std::min(start + second * 1'000'000'000, start + duration_ns);
        bool stop = false;
        while (!stop) {
            const std::int64_t left_ms = (target - monotonic_ns()) / 1'000'000;
            if (left_ms <= 0)
                break;
            session.read(pending, int(std::min<std::int64_t>(left_ms, 200)));
            digest(false);
            stop = stopped_by.has_value() || (options.interrupt && options.interrupt->load());
        }
        const double elapsed_s = double(std::min(monotonic_ns(), target) - start) / 1e9;
        if (progress)
            progress(elapsed_s, double(duration_ns) / 1e9);
        if (stop || stopped_by || target >= start + duration_ns ||
            (options.interrupt && options.interrupt->load()))
            break;
        if (options.on_summary && every_s > 0 && second % every_s == 0)
            options.on_summary(cores_of(analysis, options, seconds), elapsed_s);
    }
    session.stop();
    if (load)
        load->stop();
    // what the kernel wrote before it stopped
    while (session.read(pending, 50) > 0)
        digest(false);
    digest(true);

    run.cores = cores_of(analysis, options, seconds);
    run.lost_events = analysis.lost_events();
    run.unparsed_lines = analysis.unparsed_lines();
    if (stopped_by) {
        for (CoreLatency& core : run.cores)
            core.stopped_run = core.cpu == *stopped_by;
        // from the first whole line
        const std::size_t from = tail.size() > k_kept_trace_bytes
                                     ? tail.find('\n', tail.size() - k_kept_trace_bytes) + 1
                                     : 0;
        run.kept_trace = tail.substr(std::min(from, tail.size()));
    }
    return run;
}

} // namespace rtprov::selftest
