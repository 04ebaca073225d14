// SPDX-License-Identifier: Apache-2.0
#include "provisioner/selftest/underrun_watch.hpp"

#include "tests/unit/catch.hpp"
#include "tests/unit/temp_dir.hpp"

#include <thread>

using namespace rtprov::selftest;
using rtprov::core::CpuList;
using rtprov::core::SchedPolicy;
using rtprov::system::CpuThread;
using rtprov::system::CpuThreads;
using rtprov::system::SysRoot;

namespace {

CpuThread thread(int pid, int tid, const std::string& comm, std::optional<SchedPolicy> policy,
                 int priority, unsigned cpu, char state) {
    CpuThread t;
    t.pid = pid;
    t.tid = tid;
    t.comm = comm;
    t.policy = policy;
    t.priority = priority;
    t.cpu = cpu;
    t.state = state;
    return t;
}

// A thread in a copied /proc, as proc(5) lays out its stat: fields 4 to
// 38 zero, then the CPU it last ran on (39), its rt_priority (40) and policy (41).
void write_proc(const TempDir& dir, int pid, int tid, const std::string& comm, char state, int cpu,
                int priority, int policy) {
    std::string line = std::to_string(tid) + " (" + comm + ") " + state;
    for (int field = 4; field <= 38; ++field)
        line += " 0";
    line += " " + std::to_string(cpu) + " " + std::to_string(priority) + " " +
            std::to_string(policy) + " 0 0 0\n";
    dir.write("proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/stat", line);
}

} // namespace

TEST_CASE("what ran: the highest priority first, the player's own thread left out") {
    CpuThreads found;
    found.threads = {
        thread(500, 500, "kworker/2:1", SchedPolicy::other, 0, 2, 'R'),
        thread(700, 701, "rtprov-audio", SchedPolicy::fifo, 40, 3, 'R'), // the player
        thread(812, 812, "burn", SchedPolicy::rr, 45, 2, 'S'),
        thread(17, 17, "migration/2", SchedPolicy::fifo, 99, 2, 'S'),
        thread(901, 901, "dl", SchedPolicy::deadline, 0, 3, 'S'),
        thread(813, 813, "burn2", SchedPolicy::rr, 45, 3, 'R'),
        thread(950, 950, "odd", std::nullopt, 0, 3, 'R'),
        thread(300, 300, "irq/30-xhci", SchedPolicy::fifo, 40, 3, 'S'),
    };
    const WhatRan ran = what_ran(found, 701, CpuList({2, 3}));
    CHECK(ran.cpus == "2-3");
    CHECK(ran.more == 0);
    std::vector<std::string> order;
    for (const RunningThread& t : ran.threads)
        order.push_back(t.comm);
    // deadline, then by priority; at 45 the runnable first; below, by CPU then pid
    CHECK(order == std::vector<std::string>{"dl", "migration/2", "burn2", "burn", "irq/30-xhci",
                                            "kworker/2:1", "odd"});
    const RunningThread& burn = ran.threads[3];
    CHECK(burn.pid == 812);
    CHECK(burn.tid == 812);
    CHECK(burn.policy == SchedPolicy::rr);
    CHECK(burn.priority == 45);
    CHECK(burn.cpu == 2);
    CHECK(burn.state == 'S');
}

TEST_CASE("what ran leaves out rtprov's own process: its latency run wakes there by design") {
    CpuThreads found;
    found.threads = {
        thread(700, 702, "rtprov-lat-2", SchedPolicy::fifo, 99, 2, 'S'),
        thread(812, 812, "burn", SchedPolicy::rr, 45, 2, 'S'),
    };
    const WhatRan ran = what_ran(found, 701, CpuList({2}), 700);
    REQUIRE(ran.threads.size() == 1);
    CHECK(ran.threads[0].comm == "burn");
    CHECK(what_ran(found, 701, CpuList({2})).threads.size() == 2);
}

TEST_CASE("what ran keeps the first few and counts the rest") {
    CpuThreads found;
    for (int i = 0; i < 11; ++i)
        found.threads.push_back(
            thread(100 + i, 100 + i, "t" + std::to_string(i), SchedPolicy::fifo, 10 + i, 0, 'S'));
    const WhatRan ran = what_ran(found, 0, CpuList({0}));
    REQUIRE(ran.threads.size() == k_max_running_threads);
    CHECK(ran.more == 3);
    CHECK(ran.threads.front().priority == 20);
    CHECK(ran.threads.back().priority == 13);
    CHECK(run_rank(SchedPolicy::deadline, 0) > run_rank(SchedPolicy::fifo, 99));
    CHECK(run_rank(SchedPolicy::rr, 45) > run_rank(SchedPolicy::fifo, 40));
    CHECK(run_rank(SchedPolicy::batch, 0) == run_rank(SchedPolicy::other, 0));
}

TEST_CASE("the watcher reads what ran at each new underrun, and only then") {
    TempDir dir;
    write_proc(dir, 812, 812, "burn", 'R', 2, 45, 2);         // rr 45 on 2
    write_proc(dir, 700, 701, "rtprov-audio", 'R', 3, 40, 1); // the player
    write_proc(dir, 30, 30, "sleeper", 'S', 2, 0, 0);         // not competing
    write_proc(dir, 40, 40, "elsewhere", 'R', 0, 50, 1);      // not on the player's CPUs
    AudioLive live;
    live.player_tid = 701;
    AudioResult result;
    result.underrun_list.resize(3);
    {
        UnderrunWatch watch(SysRoot(dir.path()), CpuList({2, 3}), CpuList(), live,
                            std::chrono::milliseconds(5));
        std::this_thread::sleep_for(std::chrono::milliseconds(50)); // no underrun: no look
        live.underruns.fetch_add(1);
        std::this_thread::sleep_for(std::chrono::milliseconds(200)); // a look
        write_proc(dir, 813, 813, "covers", 'S', 3, 45, 2);          // another by the next
        live.underruns.fetch_add(2);
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        attach_what_ran(result, watch.finish());
    }
    REQUIRE(result.underrun_list[0].running);
    const WhatRan& first = *result.underrun_list[0].running;
    CHECK(first.cpus == "2-3");
    REQUIRE(first.threads.size() == 1);
    CHECK(first.threads[0].comm == "burn");
    CHECK(first.threads[0].policy == SchedPolicy::rr);
    CHECK(first.threads[0].priority == 45);
    // the two seen at one look share it
    REQUIRE(result.underrun_list[1].running);
    REQUIRE(result.underrun_list[2].running);
    CHECK(result.underrun_list[1].running->threads.size() == 2);
    CHECK(result.underrun_list[2].running->threads.size() == 2);
    CHECK(result.underrun_list[2].running->threads[1].comm == "covers");
}

TEST_CASE("the watcher looks at the first underruns only") {
    TempDir dir;
    write_proc(dir, 812, 812, "burn", 'R', 0, 45, 2);
    AudioLive live;
    UnderrunWatch watch(SysRoot(dir.path()), CpuList({0}), CpuList(), live,
                        std::chrono::milliseconds(2));
    for (std::size_t i = 0; i < k_max_underruns_looked_at + 5; ++i) {
        live.underruns.fetch_add(1);
        std::this_thread::sleep_for(std::chrono::milliseconds(6));
    }
    const auto seen = watch.finish();
    CHECK(seen.size() == k_max_underruns_looked_at);
    for (const auto& ran : seen)
        CHECK((ran && ran->threads.size() == 1));

    // a /proc that cannot be read: the underrun is kept, with nothing said of what ran
    TempDir empty;
    AudioLive live2;
    UnderrunWatch blind(SysRoot(empty.path()), CpuList({0}), CpuList(), live2,
                        std::chrono::milliseconds(2));
    live2.underruns.fetch_add(1);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const auto none = blind.finish();
    REQUIRE(none.size() == 1);
    CHECK_FALSE(none[0]);
}
