// SPDX-License-Identifier: Apache-2.0
#include "provisioner/selftest/load.hpp"

#include "provisioner/core/error.hpp"

#include <algorithm>
#include <new>

namespace rtprov::selftest {

namespace {

constexpr std::size_t k_cache_line_words = 64 / sizeof(std::uint64_t);

} // namespace

LoadGenerator::LoadGenerator(const core::CpuList& cpus, std::size_t buffer_bytes)
    : m_ready(static_cast<std::ptrdiff_t>(cpus.size())) {
    try {
        for (unsigned cpu : cpus.cpus()) {
            ThreadSpec spec{"rtprov-load" + std::to_string(cpu), core::SchedPolicy::other, 0, cpu};
            m_threads.push_back(
                std::make_unique<PinnedThread>(spec, [this, buffer_bytes] { run(buffer_bytes); }));
        }
    } catch (...) {
        stop();
        throw;
    }
    m_ready.wait();
    if (m_out_of_memory.load()) {
        stop();
        throw Error("cannot allocate " + std::to_string(buffer_bytes) +
                    " bytes of load buffer per CPU for " + quoted(cpus.to_string()) +
                    "; free memory or measure without load");
    }
}

LoadGenerator::~LoadGenerator() {
    stop();
}

void LoadGenerator::stop() {
    m_stop.store(true, std::memory_order_relaxed);
    for (auto& thread : m_threads)
        thread->join();
}

void LoadGenerator::run(std::size_t buffer_bytes) {
    // Allocated by the thread itself, so that its pages are local to the CPU that uses them.
    std::vector<std::uint64_t> buffer;
    try {
        buffer.resize(std::max(buffer_bytes / sizeof(std::uint64_t), k_cache_line_words));
    } catch (const std::bad_alloc&) {
        m_out_of_memory.store(true);
    }
    m_ready.count_down();
    if (buffer.empty())
        return;
    // volatile: the stores are the point of the load and must not be optimised away.
    volatile std::uint64_t* words = buffer.data();
    std::uint64_t value = 0;
    while (!m_stop.load(std::memory_order_relaxed)) {
        // One read-modify-write per cache line: every line is fetched and written back.
        for (std::size_t i = 0; i < buffer.size(); i += k_cache_line_words)
            words[i] = words[i] + ++value;
        m_passes.fetch_add(1, std::memory_order_relaxed);
    }
}

} // namespace rtprov::selftest
