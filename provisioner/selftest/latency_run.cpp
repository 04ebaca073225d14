// SPDX-License-Identifier: Apache-2.0
#include "provisioner/selftest/latency_run.hpp"

#include "provisioner/core/error.hpp"
#include "provisioner/selftest/idle_hold.hpp"
#include "provisioner/selftest/load.hpp"
#include "provisioner/selftest/memory_lock.hpp"
#include "provisioner/selftest/single_writer.hpp"
#include "provisioner/system/cpus.hpp"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <fstream>
#include <latch>
#include <limits>
#include <memory>
#include <optional>

namespace rtprov::selftest {

namespace {

// Time for every measuring thread to pass the start gate before the first planned wake-up.
constexpr std::int64_t k_start_margin_ns = 10'000'000;
constexpr std::size_t k_stack_bytes = 512 * 1024;
constexpr std::size_t k_prefault_bytes = 128 * 1024; // of the stack, touched before the run
constexpr std::size_t k_page_bytes = 4096;

// What one measuring thread owns; only that thread writes it until it is joined, and
// while it runs the controlling thread reads it only for a snapshot (single_writer.hpp).
struct CoreRun {
    CoreRun(unsigned c, std::uint32_t limit_us, std::size_t seconds)
        : cpu(c), histogram(limit_us), max_per_s_us(seconds), missed_per_s(seconds) {}
    unsigned cpu;
    LatencyHistogram histogram; // allocated and zeroed here, before the run
    std::int64_t max_at_ns = 0;
    std::int64_t measured_ns = 0; // the last planned wake-up taken, from the start
    std::uint64_t overruns = 0;
    bool stopped_run = false;
    // one slot per second of the run and one for the last wake-up past its end
    std::vector<std::uint32_t> max_per_s_us;
    std::vector<std::uint32_t> missed_per_s;

    // The slot of the second 'since_start_ns' falls in.
    std::size_t second(std::int64_t since_start_ns) const {
        auto s = std::size_t(std::max<std::int64_t>(since_start_ns, 0) / 1'000'000'000);
        return std::min(s, max_per_s_us.size() - 1);
    }
};

// Shared by the measuring threads; start_ns is written before 'go' opens.
struct Schedule {
    std::latch go{1};
    std::atomic<bool> stop{false};
    std::int64_t start_ns = 0;
    std::int64_t interval_ns = 0;
    std::int64_t duration_ns = 0;
    std::int64_t stop_above_ns = 0; // 0: never stop early
};

// Opens the start gate once; on the way out of an error, tells the threads to stop first.
class Gate {
  public:
    explicit Gate(Schedule& schedule) : m_schedule(schedule) {}
    ~Gate() {
        m_schedule.stop.store(true, std::memory_order_relaxed);
        open();
    }
    Gate(const Gate&) = delete;
    Gate& operator=(const Gate&) = delete;

    void open() {
        if (!m_open)
            m_schedule.go.count_down();
        m_open = true;
    }

  private:
    Schedule& m_schedule;
    bool m_open = false;
};

// The CPUs this process may put a thread on. Not its affinity: with isolcpus= the kernel
// leaves the isolated CPUs out of every task's default affinity, yet a thread may still
// be pinned there, which is the point of reserving them. The limit is the cgroup's
// cpuset: asking for every CPU gives the calling thread the cpuset's CPUs (the kernel
// narrows the request silently, sched_setaffinity(2)); the old affinity is put back.
core::CpuList process_cpus() {
    const int count = static_cast<int>(core::CpuList::k_max_cpu) + 1;
    cpu_set_t* old_set = CPU_ALLOC(count);
    cpu_set_t* set = CPU_ALLOC(count);
    const std::size_t size = CPU_ALLOC_SIZE(count);
    std::vector<unsigned> cpus;
    if (sched_getaffinity(0, size, old_set) == 0) {
        CPU_ZERO_S(size, set);
        for (int cpu = 0; cpu < count; ++cpu)
            CPU_SET_S(cpu, size, set);
        bool widened = sched_setaffinity(0, size, set) == 0;
        if (!widened || sched_getaffinity(0, size, set) != 0)
            std::memcpy(set, old_set, size);
        for (int cpu = 0; cpu < count; ++cpu)
            if (CPU_ISSET_S(cpu, size, set))
                cpus.push_back(static_cast<unsigned>(cpu));
        if (widened)
            sched_setaffinity(0, size, old_set);
    }
    CPU_FREE(set);
    CPU_FREE(old_set);
    return core::CpuList(std::move(cpus));
}

void validate(const LatencyOptions& options) {
    if (options.cpus.empty())
        throw Error("no CPU to measure latency on; choose at least one");
    if (options.interval.count() < 1)
        throw Error("the latency interval must be at least 1 µs, not " +
                    quoted(std::to_string(options.interval.count()) + " µs"));
    if (options.duration.count() < 1)
        throw Error("the latency measurement must last at least 1 ms, not " +
                    quoted(std::to_string(options.duration.count()) + " ms"));
    if (options.priority < 1 || options.priority > 99)
        throw Error("SCHED_FIFO priority " + quoted(std::to_string(options.priority)) +
                    " is out of range; use 1 to 99");
}

// Touches the stack the loop will use, so that its pages exist before the first sample.
[[gnu::noinline]] void prefault_stack() {
    unsigned char pages[k_prefault_bytes];
    volatile unsigned char* touch = pages; // writes the compiler must not drop
    for (std::size_t i = 0; i < k_prefault_bytes; i += k_page_bytes)
        touch[i] = 0;
}

// The measuring loop: no allocation, no I/O, no lock (the histogram is preallocated).
void measure(CoreRun& run, Schedule& schedule) noexcept {
    prefault_stack();
    schedule.go.wait();
    // The gate also opens when setting up the run failed (memory lock, load): then there
    // is no start time and nothing to measure.
    if (schedule.stop.load(std::memory_order_relaxed) || schedule.start_ns == 0)
        return;
    const std::int64_t start = schedule.start_ns;
    const std::int64_t end = start + schedule.duration_ns;
    const std::int64_t interval = schedule.interval_ns;
    std::int64_t next = start;
    // Through the gate late (it opened after the start): join the schedule at the next
    // planned wake-up instead of measuring the gate.
    for (const std::int64_t now = monotonic_ns(); next + interval <= now;)
        next += interval;
    while (!schedule.stop.load(std::memory_order_relaxed)) {
        // Absolute wake-ups: the schedule does not drift with the time spent per cycle.
        next += interval;
        sleep_until_ns(next);
        const std::int64_t now = monotonic_ns();
        const std::int64_t latency = now - next;
        if (run.histogram.empty() || latency > run.histogram.max_ns())
            relaxed_store(run.max_at_ns, now - start);
        run.histogram.add(latency);
        relaxed_store(run.measured_ns, next - start);
        std::uint32_t& second_max = run.max_per_s_us[run.second(next - start)];
        const auto latency_us = std::uint32_t(std::clamp<std::int64_t>(
            (latency + 999) / 1000, 0, std::numeric_limits<std::uint32_t>::max()));
        if (latency_us > second_max)
            relaxed_store(second_max, latency_us);
        if (schedule.stop_above_ns && latency > schedule.stop_above_ns) {
            // the first to see one stops everyone (the others end at their next wake-up)
            if (!schedule.stop.exchange(true))
                relaxed_store(run.stopped_run, true);
            break;
        }
        if (now >= end)
            break;
        // A wake-up later than a whole interval: the planned wake-ups it passed are skipped
        // rather than measured as a burst of ever smaller latencies.
        while (next + interval <= now) {
            next += interval;
            relaxed_store(run.overruns, run.overruns + 1);
            std::uint32_t& missed = run.missed_per_s[run.second(next - start)];
            relaxed_store(missed, missed + 1);
        }
    }
}

// Each core's figures from 'h', the histogram of 'run' (the run's own at the end, a
// snapshot of it while the run goes on); the per-second figures and flags are loaded as
// the single writer's fields they are.
CoreLatency summarise(const CoreRun& run, LatencyHistogram h, IdlePolicy idle) {
    CoreLatency c;
    c.cpu = run.cpu;
    c.idle = idle;
    c.overruns = relaxed_load(run.overruns);
    c.max_at_s = static_cast<double>(relaxed_load(run.max_at_ns)) / 1e9;
    c.set_histogram(std::move(h));
    c.stopped_run = relaxed_load(run.stopped_run);
    for (const std::uint32_t& v : run.max_per_s_us)
        c.max_per_s_us.push_back(relaxed_load(v));
    for (const std::uint32_t& v : run.missed_per_s)
        c.missed_per_s.push_back(relaxed_load(v));
    c.measured_s = static_cast<double>(relaxed_load(run.measured_ns)) / 1e9;
    return c;
}

} // namespace

std::string_view to_string(IdlePolicy policy) {
    switch (policy) {
    case IdlePolicy::held:
        return "held";
    case IdlePolicy::system_default:
        break;
    }
    return "default";
}

void check_cpus(const core::CpuList& wanted, const core::CpuList& online,
                const core::CpuList& allowed, std::string_view doing) {
    const std::string usable = online.intersection(allowed).to_string();
    for (unsigned cpu : wanted.cpus()) {
        const std::string what = "cannot " + std::string(doing) + " CPU " + std::to_string(cpu);
        if (!online.contains(cpu))
            throw Error(what + ": it is not online (online CPUs: " + quoted(online.to_string()) +
                        "); choose CPUs from " + quoted(usable));
        if (!allowed.contains(cpu))
            throw Error(what + ": the cpuset of this process's cgroup allows only " +
                        quoted(allowed.to_string()) +
                        "; with reserve_method cpuset the reserved cores belong to "
                        "rtprov.slice: measure them from there ('systemd-run "
                        "--slice=rtprov.slice --pty rtprov selftest --cpus LIST'), or choose "
                        "CPUs from " +
                        quoted(usable));
    }
}

void check_latency_options(const LatencyOptions& options) {
    validate(options);
    const core::CpuList allowed = process_cpus();
    // The measurement runs on this machine, whatever --sysroot the command read.
    const system::Fact<core::CpuList> online_now = system::read_cpus(system::SysRoot("/")).online;
    const core::CpuList online = online_now ? *online_now : allowed;
    check_cpus(options.cpus, online, allowed, "measure on");
    check_cpus(options.load_cpus, online, allowed, "put load on");
}

std::vector<CoreLatency> run_latency(const LatencyOptions& options,
                                     const ProgressCallback& progress) {
    check_latency_options(options);
    const AwayFrom away(options.cpus); // this thread wakes every second; not there

    Schedule schedule;
    schedule.interval_ns = std::chrono::nanoseconds(options.interval).count();
    schedule.duration_ns = std::chrono::nanoseconds(options.duration).count();
    schedule.stop_above_ns = std::int64_t(options.stop_above_us) * 1000;
    std::vector<std::unique_ptr<CoreRun>> runs;
    const auto seconds = std::size_t((schedule.duration_ns + 999'999'999) / 1'000'000'000) + 1;
    for (unsigned cpu : options.cpus.cpus())
        runs.push_back(std::make_unique<CoreRun>(cpu, options.histogram_limit_us, seconds));

    std::optional<IdleHold> idle_hold;
    if (options.idle == IdlePolicy::held)
        idle_hold.emplace(options.cpu_dma_latency);

    // Destroyed in reverse: the gate stops and releases the threads before they are joined.
    std::vector<std::unique_ptr<PinnedThread>> threads;
    Gate gate(schedule);
    for (auto& run : runs) {
        ThreadSpec spec{"rtprov-lat" + std::to_string(run->cpu), core::SchedPolicy::fifo,
                        options.priority, run->cpu, k_stack_bytes};
        threads.push_back(std::make_unique<PinnedThread>(
            spec, [&run = *run, &schedule] { measure(run, schedule); }));
    }
    std::optional<LoadGenerator> load;
    if (!options.load_cpus.empty())
        load.emplace(options.load_cpus);
    const MemoryLock memory_lock(MemoryLock::IfRefused::throw_error);

    schedule.start_ns = monotonic_ns() + k_start_margin_ns;
    gate.open();
    const auto every_s = options.summary_every.count();
    wait_with_progress(
        schedule.start_ns, schedule.duration_ns,
        [&](double elapsed_s, double total_s) {
            if (progress)
                progress(elapsed_s, total_s);
            if (options.interrupt && options.interrupt->load())
                schedule.stop.store(true);
            const auto whole_s = static_cast<std::int64_t>(elapsed_s);
            if (options.on_summary && every_s > 0 && elapsed_s < total_s && whole_s > 0 &&
                whole_s % every_s == 0 && !schedule.stop.load()) {
                std::vector<CoreLatency> so_far;
                for (const auto& run : runs)
                    so_far.push_back(summarise(*run, run->histogram.snapshot(), options.idle));
                options.on_summary(so_far, elapsed_s);
            }
        },
        &schedule.stop);
    for (auto& thread : threads)
        thread->join();
    if (load)
        load->stop();

    std::vector<CoreLatency> results;
    for (auto& run : runs)
        results.push_back(summarise(*run, std::move(run->histogram), options.idle));
    return results;
}

void CoreLatency::set_histogram(LatencyHistogram h) {
    const auto to_us = [](std::int64_t ns) { return static_cast<double>(ns) / 1000.0; };
    cycles = h.count();
    min_us = to_us(h.min_ns());
    avg_us = h.avg_ns() / 1000.0;
    max_us = to_us(h.max_ns());
    p50_us = to_us(h.percentile_ns(50));
    p99_us = to_us(h.percentile_ns(99));
    p999_us = to_us(h.percentile_ns(99.9));
    p9999_us = to_us(h.percentile_ns(99.99));
    histogram = std::move(h);
}

} // namespace rtprov::selftest
