// SPDX-License-Identifier: Apache-2.0
#include "provisioner/selftest/pi_probe.hpp"

#include "provisioner/core/error.hpp"
#include "provisioner/fs/kernel_file.hpp"
#include "provisioner/live/sched_features.hpp"
#include "provisioner/system/kernel.hpp"

#include <pthread.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <ctime>
#include <latch>
#include <memory>

namespace rtprov::selftest {

namespace {

// A PTHREAD_PRIO_INHERIT mutex: a waiter of higher priority lends it to the holder, which
// is what the regression report's stalled worker had been given (LKML, 2026-08-14).
class PiMutex {
  public:
    PiMutex() {
        pthread_mutexattr_t attr;
        pthread_mutexattr_init(&attr);
        const int rc = pthread_mutexattr_setprotocol(&attr, PTHREAD_PRIO_INHERIT);
        const int init_rc = rc == 0 ? pthread_mutex_init(&m_mutex, &attr) : rc;
        pthread_mutexattr_destroy(&attr);
        if (init_rc != 0)
            throw Error("cannot make a priority-inheritance mutex (PTHREAD_PRIO_INHERIT): " +
                        errno_text(init_rc) +
                        "; the PI-boost probe needs one; skip it on this system");
    }
    ~PiMutex() { pthread_mutex_destroy(&m_mutex); }
    PiMutex(const PiMutex&) = delete;
    PiMutex& operator=(const PiMutex&) = delete;

    void lock() { pthread_mutex_lock(&m_mutex); }
    void unlock() { pthread_mutex_unlock(&m_mutex); }

  private:
    pthread_mutex_t m_mutex;
};

std::int64_t thread_cpu_ns() {
    timespec now{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return std::int64_t{now.tv_sec} * 1'000'000'000 + now.tv_nsec;
}

// Busy work: 'ns' of this thread's own CPU time, however long that takes on the wall clock
// (a worker that is not running does not get through its critical section).
void spin_cpu(std::int64_t ns) {
    const std::int64_t start = thread_cpu_ns();
    while (thread_cpu_ns() - start < ns) {
    }
}

// Everything the probe threads share. The RT thread's figures are written by it alone,
// the watcher's by it alone; both are read after join.
struct Probe {
    explicit Probe(unsigned threads) : finished(threads) {}

    PiMutex mutex;
    std::atomic<bool> stop{false};
    std::latch finished;   // the RT thread and the workers are out of their loops
    std::latch sampled{1}; // the watcher has taken its last sample: they may exit
    std::int64_t start_ns = 0;
    std::int64_t critical_ns = 0;
    std::int64_t period_ns = 0;
    StarvationRule rule;
    std::atomic<std::uint64_t> worker_acquisitions{0};

    std::uint64_t acquisitions = 0;
    std::int64_t worst_wait_ns = 0;
    std::int64_t sum_wait_ns = 0;
    std::int64_t worst_wait_at_ns = 0;

    std::uint64_t windows = 0;
    bool schedstat_seen = false;
    std::uint64_t unreadable_samples = 0;
    std::vector<StarvedThread> starved;

    // Out of the loop: not runnable until the watcher's last sample is taken.
    void park() {
        finished.count_down();
        sampled.wait();
    }
};

// On the way out, also of an error: stop the threads, and release them if no watcher will.
class StopGuard {
  public:
    explicit StopGuard(Probe& probe) : m_probe(probe) {}
    ~StopGuard() {
        m_probe.stop.store(true);
        if (!m_watcher_started)
            m_probe.sampled.count_down();
    }
    StopGuard(const StopGuard&) = delete;
    StopGuard& operator=(const StopGuard&) = delete;
    void watcher_started() { m_watcher_started = true; }

  private:
    Probe& m_probe;
    bool m_watcher_started = false;
};

void work(Probe& probe) {
    while (!probe.stop.load(std::memory_order_relaxed)) {
        probe.mutex.lock();
        spin_cpu(probe.critical_ns);
        probe.mutex.unlock();
        probe.worker_acquisitions.fetch_add(1, std::memory_order_relaxed);
        spin_cpu(probe.critical_ns); // work outside the lock too
    }
    probe.park();
}

void take_repeatedly(Probe& probe) {
    std::int64_t next = monotonic_ns();
    while (!probe.stop.load(std::memory_order_relaxed)) {
        next = std::max(next + probe.period_ns, monotonic_ns());
        sleep_until_ns(next);
        const std::int64_t asked = monotonic_ns();
        probe.mutex.lock();
        const std::int64_t got = monotonic_ns();
        probe.mutex.unlock();
        const std::int64_t wait = got - asked;
        if (probe.acquisitions == 0 || wait > probe.worst_wait_ns) {
            probe.worst_wait_ns = wait;
            probe.worst_wait_at_ns = got - probe.start_ns;
        }
        probe.sum_wait_ns += wait;
        ++probe.acquisitions;
    }
    probe.park();
}

// Compares two samples. The window is at least the nominal one: the last sample comes
// early, and a short window would make an ordinary runqueue wait of a millisecond look
// like starvation.
void account(Probe& probe, const std::vector<ThreadSample>& before,
             const std::vector<ThreadSample>& after, std::int64_t before_ns, std::int64_t after_ns,
             std::int64_t window_ns) {
    ++probe.windows;
    for (const ThreadSample& sample : after) {
        if (sample.status != SampleStatus::ok)
            ++probe.unreadable_samples;
        else if (sample.stat != SchedStat{})
            probe.schedstat_seen = true;
    }
    auto starved = find_starved(before, after, std::chrono::nanoseconds(before_ns - probe.start_ns),
                                std::chrono::nanoseconds(std::max(after_ns - before_ns, window_ns)),
                                probe.rule);
    probe.starved.insert(probe.starved.end(), starved.begin(), starved.end());
}

void watch(Probe& probe, const PiProbeOptions& options, const std::vector<pid_t>& tids) {
    const pid_t pid = getpid();
    const std::int64_t window_ns = std::chrono::nanoseconds(options.window).count();
    auto before = sample_threads(options.proc_root, pid, tids);
    std::int64_t before_ns = monotonic_ns();
    std::int64_t next = before_ns;
    while (!probe.stop.load()) {
        next += window_ns;
        sleep_until_ns(next);
        auto after = sample_threads(options.proc_root, pid, tids);
        const std::int64_t after_ns = monotonic_ns();
        account(probe, before, after, before_ns, after_ns, window_ns);
        before = std::move(after);
        before_ns = after_ns;
    }
    // A runqueue wait is added to schedstat when the thread next runs (sched_info_arrive,
    // kernel/sched/stats.h): a stall in progress shows no wait yet. The threads have now
    // left their loops, so any stall has ended and is counted in this last sample.
    probe.finished.wait();
    auto last = sample_threads(options.proc_root, pid, tids);
    account(probe, before, last, before_ns, monotonic_ns(), window_ns);
    probe.sampled.count_down();
}

void validate(const PiProbeOptions& options) {
    if (options.workers < 1)
        throw Error("the PI-boost probe needs at least 1 worker thread");
    if (options.critical_section.count() < 1)
        throw Error("the PI-boost probe's critical section must last at least 1 µs");
    if (options.rt_period.count() < 1)
        throw Error("the PI-boost probe's period must be at least 1 µs");
    if (options.duration.count() < 1 || options.window.count() < 1)
        throw Error("the PI-boost probe's duration and window must be at least 1 ms");
    if (options.rt_priority < 1 || options.rt_priority > 98)
        throw Error("SCHED_RR priority " + quoted(std::to_string(options.rt_priority)) +
                    " is out of range for the PI-boost probe; use 1 to 98 (its watcher runs "
                    "one above)");
}

} // namespace

PiProbeResult run_pi_probe(const PiProbeOptions& options, const ProgressCallback& progress) {
    validate(options);
    Probe probe(options.workers + 1);
    probe.critical_ns = std::chrono::nanoseconds(options.critical_section).count();
    probe.period_ns = std::chrono::nanoseconds(options.rt_period).count();
    probe.rule = options.rule;
    probe.start_ns = monotonic_ns();

    // Destroyed in reverse: the guard stops and releases the threads before they are joined.
    std::vector<pid_t> tids; // read by the watcher
    std::vector<std::unique_ptr<PinnedThread>> threads;
    std::unique_ptr<PinnedThread> watcher;
    StopGuard guard(probe);
    for (unsigned i = 0; i < options.workers; ++i) {
        ThreadSpec spec{"rtprov-pi-w" + std::to_string(i), core::SchedPolicy::other, 0,
                        std::nullopt};
        threads.push_back(std::make_unique<PinnedThread>(spec, [&probe] { work(probe); }));
    }
    ThreadSpec rt{"rtprov-pi-rt", core::SchedPolicy::rr, options.rt_priority, std::nullopt};
    threads.push_back(std::make_unique<PinnedThread>(rt, [&probe] { take_repeatedly(probe); }));
    for (const auto& thread : threads)
        tids.push_back(thread->tid());
    ThreadSpec watch_spec{"rtprov-pi-watch", core::SchedPolicy::fifo, options.rt_priority + 1,
                          std::nullopt};
    watcher = std::make_unique<PinnedThread>(
        watch_spec, [&probe, &options, &tids] { watch(probe, options, tids); });
    guard.watcher_started();

    wait_with_progress(probe.start_ns, std::chrono::nanoseconds(options.duration).count(), progress,
                       options.interrupt);
    probe.stop.store(true);
    watcher->join();
    for (auto& thread : threads)
        thread->join();

    PiProbeResult r;
    r.workers = options.workers;
    r.critical_section_us = static_cast<double>(probe.critical_ns) / 1000.0;
    r.acquisitions = probe.acquisitions;
    r.worker_acquisitions = probe.worker_acquisitions.load();
    r.worst_wait_us = static_cast<double>(probe.worst_wait_ns) / 1000.0;
    if (probe.acquisitions > 0)
        r.avg_wait_us = static_cast<double>(probe.sum_wait_ns) /
                        static_cast<double>(probe.acquisitions) / 1000.0;
    r.worst_wait_at_s = static_cast<double>(probe.worst_wait_at_ns) / 1e9;
    r.windows = probe.windows;
    r.schedstat_seen = probe.schedstat_seen;
    r.unreadable_samples = probe.unreadable_samples;
    r.starved = std::move(probe.starved);
    return r;
}

std::string_view to_string(PushIpiState state) {
    switch (state) {
    case PushIpiState::on:
        return "on";
    case PushIpiState::off:
        return "off";
    case PushIpiState::unknown:
        return "unknown";
    case PushIpiState::unreadable:
        break;
    }
    return "unreadable";
}

KernelContext kernel_context(const std::string& uname_version,
                             const std::optional<std::string>& sched_features) {
    // The kernel model by system::is_preempt_rt, the features file as the RT_PUSH_IPI
    // guard reads it (live::decide_push_ipi, given no version).
    KernelContext context;
    context.version = uname_version;
    context.preempt_rt = system::is_preempt_rt(uname_version);
    if (!sched_features)
        return context;
    switch (live::decide_push_ipi("", *sched_features)) {
    case live::PushIpiAction::already_on:
        context.push_ipi = PushIpiState::on;
        break;
    case live::PushIpiAction::enable:
        context.push_ipi = PushIpiState::off;
        break;
    case live::PushIpiAction::leave_rt_kernel:
    case live::PushIpiAction::unknown:
        context.push_ipi = PushIpiState::unknown;
        break;
    }
    return context;
}

KernelContext read_kernel_context(const std::string& sched_features) {
    utsname names{};
    uname(&names);
    return kernel_context(names.version, fs::read_kernel_file(sched_features).value);
}

} // namespace rtprov::selftest
