// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/core/cpu_list.hpp"
#include "provisioner/selftest/pinned_thread.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <latch>
#include <memory>
#include <vector>

namespace rtprov::selftest {

// Background load for a latency measurement: one busy SCHED_OTHER thread pinned to each
// CPU of a list, each writing through its own buffer, larger than the caches, so that the
// caches and the memory bus are busy too. The threads run from construction until stop()
// or destruction.
class LoadGenerator {
  public:
    static constexpr std::size_t k_default_buffer_bytes = 8 * 1024 * 1024;

    // Starts the threads and returns once each has its buffer, so that memory locked
    // afterwards (mlockall) includes them. Throws rtprov::Error when a thread cannot start
    // or get its buffer (the ones already running are stopped first).
    explicit LoadGenerator(const core::CpuList& cpus,
                           std::size_t buffer_bytes = k_default_buffer_bytes);
    ~LoadGenerator();
    LoadGenerator(const LoadGenerator&) = delete;
    LoadGenerator& operator=(const LoadGenerator&) = delete;

    // Stops and joins the threads; waits at most about one pass over a buffer. Idempotent.
    void stop();

    // Passes over a buffer completed so far, all threads together.
    std::uint64_t passes() const { return m_passes.load(std::memory_order_relaxed); }

  private:
    void run(std::size_t buffer_bytes);

    std::latch m_ready; // every thread has its buffer, or failed to get it
    std::atomic<bool> m_out_of_memory{false};
    std::atomic<bool> m_stop{false};
    std::atomic<std::uint64_t> m_passes{0};
    std::vector<std::unique_ptr<PinnedThread>> m_threads;
};

} // namespace rtprov::selftest
