// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/core/cpu_list.hpp"
#include "provisioner/core/sched_policy.hpp"

#include <pthread.h>
#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

// The threads the self-test runs: started with their scheduling policy, priority and CPU
// already in place (no window in which they run otherwise), and the clock they use.
namespace rtprov::selftest {

struct ThreadSpec {
    std::string name; // shown in /proc/<pid>/task/<tid>/comm (15 chars kept)
    core::SchedPolicy policy = core::SchedPolicy::other;
    int priority = 0;            // 1..99 for fifo and rr, 0 for the others
    std::optional<unsigned> cpu; // pinned to this CPU; nullopt: not pinned
    std::size_t stack_bytes = 256 * 1024;
    // Pinned to these CPUs (a player's thread on the reserved cores); with 'cpu' as well,
    // to both. Neither: not pinned.
    core::CpuList cpus{};

    // 'cpu' and 'cpus' together: the affinity the thread starts with; empty: not pinned.
    core::CpuList affinity() const;
};

// A thread created with 'spec' running 'body', joined by join() or the destructor.
// 'body' must not throw.
class PinnedThread {
  public:
    // Throws rtprov::Error when the thread cannot start, e.g. for lack of permission to
    // use a real-time policy (the message says what to do).
    PinnedThread(const ThreadSpec& spec, std::function<void()> body);
    ~PinnedThread();
    PinnedThread(const PinnedThread&) = delete;
    PinnedThread& operator=(const PinnedThread&) = delete;

    void join();

    // The kernel's id of the thread (the <tid> in /proc/<pid>/task/<tid>); waits until the
    // thread has started.
    pid_t tid() const;

  private:
    struct Start {
        std::function<void()> body;
        std::string name;
        std::atomic<pid_t> tid{0};
    };
    static void* run(void* start);

    std::unique_ptr<Start> m_start;
    pthread_t m_thread{};
    bool m_joined = false;
};

// Keeps the calling thread off 'cpus' while it lives: its affinity becomes what it was
// without them, when that leaves a CPU, and is put back at the end. A measurement's
// controlling thread (its wake-ups, the trace it reads, the files it closes, whose freeing
// the kernel defers to the CPU that closed them) then leaves the measured CPUs to the
// measuring threads, as the load generator does. Does nothing when no CPU would be left
// or the affinity cannot be read.
class AwayFrom {
  public:
    explicit AwayFrom(const core::CpuList& cpus);
    ~AwayFrom();
    AwayFrom(const AwayFrom&) = delete;
    AwayFrom& operator=(const AwayFrom&) = delete;

  private:
    std::vector<unsigned> m_old; // the affinity to put back; empty: nothing was changed
};

// RLIMIT_RTPRIO as getrlimit(2) reports it; nullopt stands for unlimited.
struct RtprioLimit {
    std::optional<std::uint64_t> soft;
    std::optional<std::uint64_t> hard;
};

// What to tell a user whose thread may not run at 'policy' 'priority' (EPERM). Pure.
std::string realtime_permission_error(core::SchedPolicy policy, int priority,
                                      const RtprioLimit& limit);

// errno's text in lower case ("operation not permitted"), as messages want it.
std::string errno_text(int error);

// CLOCK_MONOTONIC in nanoseconds.
std::int64_t monotonic_ns();

// Sleeps until CLOCK_MONOTONIC reaches 'deadline_ns' (EINTR resumed). No allocation.
void sleep_until_ns(std::int64_t deadline_ns);

// Told about once a second, from the controlling thread, how far a measurement is.
using ProgressCallback = std::function<void(double elapsed_s, double total_s)>;

// Sleeps until 'start_ns' + 'total_ns', calling 'progress' (if set) at every full second
// and at the end; returns at the next full second once 'stop' (if given) is set. Lets what
// 'progress' throws through.
void wait_with_progress(std::int64_t start_ns, std::int64_t total_ns,
                        const ProgressCallback& progress, const std::atomic<bool>* stop = nullptr);

} // namespace rtprov::selftest
