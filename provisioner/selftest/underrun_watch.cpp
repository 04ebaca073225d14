// SPDX-License-Identifier: Apache-2.0
#include "provisioner/selftest/underrun_watch.hpp"

#include <unistd.h>

#include "provisioner/selftest/pinned_thread.hpp"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <tuple>

namespace rtprov::selftest {

namespace {

constexpr int k_deadline_rank = 100;

} // namespace

int run_rank(std::optional<core::SchedPolicy> policy, int priority) {
    if (!policy)
        return 0;
    // SCHED_DEADLINE's class runs before the real-time one, which runs before the fair one
    // (kernel/sched/sched.h: dl_sched_class, rt_sched_class, fair_sched_class).
    if (*policy == core::SchedPolicy::deadline)
        return k_deadline_rank;
    return core::has_static_priority(*policy) ? priority : 0;
}

bool listed_before(const RunningThread& a, const RunningThread& b) {
    const auto key = [](const RunningThread& t) {
        return std::make_tuple(-run_rank(t.policy, t.priority), t.state != 'R', t.cpu, t.pid,
                               t.tid);
    };
    return key(a) < key(b);
}

WhatRan what_ran(const system::CpuThreads& threads, int player_tid, const core::CpuList& cpus,
                 int own_pid) {
    WhatRan out;
    out.cpus = cpus.to_string();
    std::vector<RunningThread> all;
    for (const system::CpuThread& t : threads.threads)
        if ((player_tid == 0 || t.tid != player_tid) && (own_pid == 0 || t.pid != own_pid))
            all.push_back({t.pid, t.tid, t.comm, t.policy, t.priority, t.cpu,
                           // a report holds it as one printable character
                           t.state > ' ' && t.state <= '~' ? t.state : '?'});
    std::sort(all.begin(), all.end(), listed_before);
    if (all.size() > k_max_running_threads) {
        out.more = all.size() - k_max_running_threads;
        all.resize(k_max_running_threads);
    }
    out.threads = std::move(all);
    return out;
}

UnderrunWatch::UnderrunWatch(system::SysRoot root, core::CpuList cpus, core::CpuList player_cpus,
                             const AudioLive& live, std::chrono::milliseconds poll)
    : m_root(std::move(root)), m_cpus(std::move(cpus)), m_player_cpus(std::move(player_cpus)),
      m_live(live), m_poll(poll) {
    m_seen.reserve(k_max_underruns_looked_at);
    m_thread = std::thread([this] { watch(); });
}

UnderrunWatch::~UnderrunWatch() {
    m_stop.store(true);
    if (m_thread.joinable())
        m_thread.join();
}

std::vector<std::optional<WhatRan>> UnderrunWatch::finish() {
    m_stop.store(true);
    if (m_thread.joinable())
        m_thread.join();
    return m_seen;
}

void UnderrunWatch::look(std::uint64_t seen, std::uint64_t now) {
    std::optional<WhatRan> ran;
    if (system::Fact<system::CpuThreads> threads = system::rt_threads_on(m_root, m_cpus))
        ran = what_ran(*threads, m_live.player_tid.load(), m_cpus, getpid());
    // the same look for every underrun since the last: it is what ran around them all
    for (std::uint64_t n = seen; n < now && m_seen.size() < k_max_underruns_looked_at; ++n)
        m_seen.push_back(ran);
}

void UnderrunWatch::watch() noexcept {
    // At SCHED_OTHER, whatever the thread that started it runs at, and off the player's
    // CPUs: the watcher must not be what competes with the player.
    const sched_param other{};
    pthread_setschedparam(pthread_self(), SCHED_OTHER, &other);
    const AwayFrom away(m_player_cpus);
    std::uint64_t seen = 0;
    const std::int64_t poll_ns = std::chrono::nanoseconds(m_poll).count();
    std::int64_t next = monotonic_ns();
    while (!m_stop.load() && m_seen.size() < k_max_underruns_looked_at) {
        next += poll_ns;
        sleep_until_ns(next);
        const std::uint64_t now = m_live.underruns.load(std::memory_order_relaxed);
        if (now == seen)
            continue;
        try {
            look(seen, now);
        } catch (const std::exception&) {
            return; // out of memory: what was seen so far is kept
        }
        seen = now;
    }
}

void attach_what_ran(AudioResult& result, const std::vector<std::optional<WhatRan>>& seen) {
    for (std::size_t i = 0; i < seen.size() && i < result.underrun_list.size(); ++i)
        result.underrun_list[i].running = seen[i];
}

} // namespace rtprov::selftest
