// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/core/cpu_list.hpp"
#include "provisioner/selftest/pinned_thread.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <filesystem>
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

// The seed's load: reading many files beside the playback, as a player's cover-art
// lookup or library scan does (MPD's cover-art thread read 40 album covers during DSD64
// playback and took the output thread's CPU). Each thread walks the folders and reads every
// regular file in them through a small buffer of its own, then tells the kernel it will not
// need the file's pages again (posix_fadvise POSIX_FADV_DONTNEED), so that the next pass
// reads the disk again instead of the page cache; over and over, from construction until
// stop() or destruction. Memory stays bounded: one buffer and one folder walk per thread.
// Symbolic links are not followed; files that cannot be read are passed over.
class FileReadLoad {
  public:
    static constexpr std::size_t k_buffer_bytes = 64 * 1024;

    // One thread per spec (its name, policy, priority and CPUs: the housekeeping cores,
    // or SCHED_OTHER on the player's CPUs as the player's own other threads), each reading
    // every file under 'folders'. Throws rtprov::Error when a folder is not one, or a thread
    // cannot start (the ones already running are stopped first).
    explicit FileReadLoad(const std::vector<ThreadSpec>& threads,
                          std::vector<std::filesystem::path> folders = {"/usr/share"});
    ~FileReadLoad();
    FileReadLoad(const FileReadLoad&) = delete;
    FileReadLoad& operator=(const FileReadLoad&) = delete;

    // Stops and joins the threads: each ends after the read it is in (one buffer).
    // Idempotent.
    void stop();

    // Files read to their end and bytes read so far, all threads together.
    std::uint64_t files() const { return m_files.load(std::memory_order_relaxed); }
    std::uint64_t bytes() const { return m_bytes.load(std::memory_order_relaxed); }

  private:
    void run();
    // The bytes read (the whole file, unless stopped or refused).
    std::uint64_t read_file(const std::filesystem::path& path, std::vector<std::byte>& buffer);

    std::vector<std::filesystem::path> m_folders;
    std::atomic<bool> m_stop{false};
    std::atomic<std::uint64_t> m_files{0};
    std::atomic<std::uint64_t> m_bytes{0};
    std::vector<std::unique_ptr<PinnedThread>> m_threads;
};

} // namespace rtprov::selftest
