// SPDX-License-Identifier: Apache-2.0
#include "provisioner/system/rt_threads.hpp"

#include "tests/unit/catch.hpp"
#include "tests/unit/temp_dir.hpp"

#include <filesystem>

using namespace rtprov::system;
using rtprov::core::CpuList;
using rtprov::core::SchedPolicy;

namespace {

// A copied /proc of threads, each with its stat line: fields 4 to 38 zero, then the CPU it
// last ran on (39), its rt_priority (40) and policy (41), as proc(5) lays them out.
struct ThreadTree {
    TempDir dir;

    void thread(int pid, int tid, const std::string& comm, char state, int cpu, int priority,
                int policy) const {
        std::string line = std::to_string(tid) + " (" + comm + ") " + state;
        for (int field = 4; field <= 38; ++field)
            line += " 0";
        line += " " + std::to_string(cpu) + " " + std::to_string(priority) + " " +
                std::to_string(policy) + " 0 0 0\n";
        dir.write("proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/stat", line);
    }

    CpuThreads read(const CpuList& cpus, std::size_t limit = k_max_threads_looked_at) const {
        Fact<CpuThreads> threads = rt_threads_on(SysRoot(dir.path()), cpus, limit);
        REQUIRE(threads);
        return *threads;
    }
};

} // namespace

TEST_CASE("the real-time and runnable threads on the CPUs asked about, and no others") {
    ThreadTree t;
    t.thread(812, 812, "mpd", 'S', 1, 0, 0);
    t.thread(812, 815, "output:DAC", 'S', 3, 40, 1); // fifo 40 on 3
    t.thread(812, 816, "player", 'R', 3, 0, 0);      // runnable on 3
    t.thread(900, 900, "covers", 'R', 2, 45, 2);     // rr 45 on 2
    t.thread(901, 901, "dl", 'S', 3, 0, 6);          // deadline on 3
    t.thread(902, 902, "sleeper", 'S', 3, 0, 0);     // other, asleep: not competing
    t.thread(903, 903, "batch", 'S', 2, 0, 3);       // batch, asleep
    t.thread(904, 904, "elsewhere", 'R', 0, 50, 1);  // fifo on a CPU not asked about
    CpuThreads found = t.read(CpuList({2, 3}));
    CHECK_FALSE(found.truncated);
    CHECK(found.looked_at == 8);
    REQUIRE(found.threads.size() == 4);
    CHECK(found.threads[0].pid == 812);
    CHECK(found.threads[0].tid == 815);
    CHECK(found.threads[0].comm == "output:DAC");
    CHECK(found.threads[0].policy == SchedPolicy::fifo);
    CHECK(found.threads[0].priority == 40);
    CHECK(found.threads[0].cpu == 3);
    CHECK(found.threads[1].tid == 816);
    CHECK(found.threads[1].state == 'R');
    CHECK(found.threads[1].policy == SchedPolicy::other);
    CHECK(found.threads[2].comm == "covers");
    CHECK(found.threads[2].policy == SchedPolicy::rr);
    CHECK(found.threads[2].priority == 45);
    CHECK(found.threads[2].cpu == 2);
    CHECK(found.threads[3].policy == SchedPolicy::deadline);

    CHECK(t.read(CpuList()).threads.empty());
    CHECK(t.read(CpuList({0})).threads.size() == 1);
}

TEST_CASE("threads: a hostile name stays on one line, a vanished or garbled thread is skipped") {
    ThreadTree t;
    t.thread(10, 10, "a) R 0\nx", 'S', 1, 99, 1);
    // ended: its task folder is there, its stat is not
    std::filesystem::create_directories(t.dir.path() + "/proc/11/task/11");
    // ended before its tasks were listed
    t.dir.write("proc/12/comm", "gone\n");
    t.dir.write("proc/13/task/13/stat", "13 (short) R 1\n");
    CpuThreads found = t.read(CpuList({1}));
    REQUIRE(found.threads.size() == 1);
    CHECK(found.threads[0].comm == "a) R 0\\x0ax");
    CHECK(found.threads[0].priority == 99);
    CHECK(found.looked_at == 2);

    TempDir empty;
    CHECK_FALSE(rt_threads_on(SysRoot(empty.path()), CpuList({0})));
}

TEST_CASE("threads: the reading stops at its limit and says so") {
    ThreadTree t;
    for (int tid = 100; tid < 110; ++tid)
        t.thread(100, tid, "worker", 'R', 0, 0, 0);
    CpuThreads found = t.read(CpuList({0}), 4);
    CHECK(found.truncated);
    CHECK(found.looked_at == 4);
    CHECK(found.threads.size() == 4);
    CpuThreads all = t.read(CpuList({0}), 10);
    CHECK_FALSE(all.truncated);
    CHECK(all.threads.size() == 10);
}
