// SPDX-License-Identifier: Apache-2.0
#include "provisioner/audit/service_checks.hpp"

#include "tests/unit/audit_fixture.hpp"
#include "tests/unit/catch.hpp"

using namespace rtprov;
using namespace rtprov::audit;
using rtprov::core::SchedPolicy;
using namespace audit_fixture;

namespace {

ServiceExpectation mpd_expectation() {
    ServiceExpectation mpd;
    mpd.unit = "mpd.service";
    mpd.profile_key = "mpd";
    mpd.app_name = "MPD";
    mpd.app_threads = "rtio and output:* threads";
    mpd.cpus = core::CpuList({2, 3});
    mpd.app_sched = ThreadSched{SchedPolicy::fifo, 40};
    mpd.rt_threads = {"rtio", "output:*"};
    mpd.min_rtprio = 40;
    mpd.memlock = LimitValue{true, 0};
    mpd.memlock_setting = "infinity";
    return mpd;
}

// MPD as it runs on the reference box: main, io and player threads ordinary, the update
// thread SCHED_IDLE, rtio and the output thread at FIFO 40 (MPD's src/thread/Util.cxx).
std::vector<FakeThread> mpd_threads() {
    return {{812, "mpd", k_other, 0, "2-3"},      {813, "io", k_other, 0, "2-3"},
            {814, "player", k_other, 0, "2-3"},   {815, "rtio", k_fifo, 40, "2-3"},
            {816, "output:1", k_fifo, 40, "2-3"}, {817, "update", k_idle, 0, "2-3"}};
}

// The id as a C string, for GCC 14's -Wdangling-reference (see audit_test.cpp).
const Check& find(const ServiceAudit& audit, const char* id) {
    for (const Check& c : audit.checks)
        if (c.id == id)
            return c;
    FAIL("no check " << id);
    return audit.checks.front();
}

} // namespace

TEST_CASE("MPD's rtio and output threads at FIFO 40 on the reserved CPUs pass") {
    FakeSystem sys;
    sys.process(812, "/rtprov.slice/mpd.service", mpd_threads(), limits_text("40", "unlimited"));
    ServiceAudit audit = audit_service(sys.view(), mpd_expectation());
    const Check& threads = find(audit, "service-threads");
    CHECK(threads.subject == "mpd.service");
    CHECK(threads.status == Status::ok);
    CHECK(threads.reason == "6 threads; 'rtio' and 'output:1' at fifo 40 as MPD sets them; all "
                            "allowed only on CPUs 2-3");
    const Check& limits = find(audit, "service-limits");
    CHECK(limits.status == Status::ok);
    CHECK(limits.reason == "soft limits as the profile asks: RLIMIT_RTPRIO 40 (needs 40), "
                           "RLIMIT_MEMLOCK unlimited (needs infinity)");

    REQUIRE(audit.table.threads.size() == 6);
    const ThreadRow& rtio = audit.table.threads[3];
    CHECK(rtio.tid == 815);
    CHECK(rtio.comm == "rtio");
    CHECK(ps_class(rtio.policy) == "FF");
    CHECK(rtio.rt_priority == 40);
    CHECK(rtio.allowed_cpus == "2-3");
    CHECK(rtio.expected == "fifo 40");
    CHECK(audit.table.threads[5].expected == "not real-time");
    CHECK(audit.table.threads[5].status == Status::ok);
}

TEST_CASE("an output thread at the wrong priority fails with the cause to look for") {
    FakeSystem sys;
    auto threads = mpd_threads();
    threads[4].priority = 35; // what Volumio's 'chrt -f -p -a 35' leaves
    sys.process(812, "/system.slice/mpd.service", threads, limits_text("40", "unlimited"));
    const Check c = find(audit_service(sys.view(), mpd_expectation()), "service-threads");
    CHECK(c.status == Status::fail);
    CHECK(c.reason == "'output:1' (tid 816): runs at fifo 35, not fifo 40 as MPD sets it");
    CHECK(c.fix == "remove what changes it (a unit-wide CPUSchedulingPolicy= or "
                   "CPUSchedulingPriority=, or a 'chrt -a' script such as Volumio's "
                   "volumio_cpu_tweak) and restart 'mpd.service': MPD sets fifo 40 itself");
}

TEST_CASE("rtio left ordinary for want of LimitRTPRIO fails and says to raise it") {
    FakeSystem sys;
    auto threads = mpd_threads();
    threads[3].policy = k_other;
    threads[3].priority = 0;
    sys.process(812, "/system.slice/mpd.service", threads, limits_text("0", "unlimited"));
    ServiceAudit audit = audit_service(sys.view(), mpd_expectation());
    const Check& c = find(audit, "service-threads");
    CHECK(c.status == Status::fail);
    CHECK(c.reason == "'rtio' (tid 815): not real-time, though MPD makes it fifo 40");
    CHECK(c.fix == "raise LimitRTPRIO of 'mpd.service' to at least 40 "
                   "(tuning.services.mpd.limit_rtprio), apply and restart 'mpd.service': MPD "
                   "could not make its threads real-time");
    const Check& limits = find(audit, "service-limits");
    CHECK(limits.status == Status::fail);
    CHECK(limits.reason == "'mpd' (pid 812) may use real-time priorities up to 0, below the 40 "
                           "MPD needs for its rtio and output:* threads");
    CHECK(limits.fix == "restart 'mpd.service' so that rtprov's drop-in (LimitRTPRIO=40, "
                        "LimitMEMLOCK=infinity) applies; if it stays, see 'systemctl show -p "
                        "LimitRTPRIO,LimitMEMLOCK mpd.service'");
}

TEST_CASE("another real-time thread warns, a thread off the pinned CPUs fails") {
    FakeSystem sys;
    auto threads = mpd_threads();
    threads[2].policy = k_fifo; // 'player'
    threads[2].priority = 40;
    sys.process(812, "/system.slice/mpd.service", threads, limits_text("40", "unlimited"));
    const Check warn = find(audit_service(sys.view(), mpd_expectation()), "service-threads");
    CHECK(warn.status == Status::warn);
    CHECK(warn.reason == "'player' (tid 814): runs at fifo 40, though MPD makes only its rtio "
                         "and output:* threads real-time");

    threads = mpd_threads();
    threads[1].cpus = "0-3";
    sys.process(812, "/system.slice/mpd.service", threads, limits_text("40", "unlimited"));
    const Check fail = find(audit_service(sys.view(), mpd_expectation()), "service-threads");
    CHECK(fail.status == Status::fail);
    CHECK(fail.reason == "'io' (tid 813): allowed on CPUs 0-3, not only 2-3");
    CHECK(fail.fix == "restart 'mpd.service' so that its CPUAffinity=2-3 applies ('systemctl "
                      "daemon-reload && systemctl restart mpd.service')");
}

TEST_CASE("a service without a process warns that it is not running") {
    FakeSystem sys;
    sys.process(900, "/system.slice/cron.service", {{900, "cron"}});
    ServiceAudit audit = audit_service(sys.view(), mpd_expectation());
    REQUIRE(audit.checks.size() == 1);
    CHECK(audit.checks[0].status == Status::warn);
    CHECK(audit.checks[0].reason == "'mpd.service' is not running (no process in its cgroup)");
    CHECK(audit.checks[0].fix ==
          "start it ('systemctl start mpd.service') and rerun 'rtprov audit'");
    CHECK(audit.table.threads.empty());
}

TEST_CASE("an idle MPD without its output thread passes and says why it is missing") {
    FakeSystem sys;
    auto threads = mpd_threads();
    threads.erase(threads.begin() + 4);
    sys.process(812, "/system.slice/mpd.service", threads, limits_text("40", "unlimited"));
    const Check c = find(audit_service(sys.view(), mpd_expectation()), "service-threads");
    CHECK(c.status == Status::ok);
    CHECK(c.reason.ends_with("; no thread matches 'output:*' now (such a thread may exist only "
                             "while audio plays)"));
}

TEST_CASE("a memlock limit below the profile's fails") {
    FakeSystem sys;
    sys.process(812, "/system.slice/mpd.service", mpd_threads(), limits_text("40", "67108864"));
    const Check c = find(audit_service(sys.view(), mpd_expectation()), "service-limits");
    CHECK(c.status == Status::fail);
    CHECK(c.reason == "'mpd' (pid 812) may lock 64M of memory, below limit_memlock 'infinity'");
}

TEST_CASE("an app without thread names passes with its threads at its priority or above") {
    FakeSystem sys;
    sys.process(700, "/user.slice/pipewire.service",
                {{700, "pipewire", k_other, 0, "0-3"}, {701, "data-loop.0", k_fifo, 88, "0-3"}},
                limits_text("95", "4194304"));
    ServiceExpectation pw;
    pw.unit = "pipewire.service";
    pw.profile_key = "pipewire";
    pw.app_name = "PipeWire";
    pw.app_sched = ThreadSched{SchedPolicy::fifo, 83};
    pw.min_rtprio = 83;
    ServiceAudit audit = audit_service(sys.view(), pw);
    const Check& c = find(audit, "service-threads");
    CHECK(c.status == Status::ok);
    CHECK(c.reason == "2 threads; 'data-loop.0' at fifo 83 or above as PipeWire sets them");
    CHECK(audit.table.threads[1].expected == "fifo 83 or above");
}

TEST_CASE("a unit-wide policy must reach the main thread") {
    FakeSystem sys;
    sys.process(600, "/system.slice/player.service",
                {{600, "player", k_other, 0, "0-3"}, {601, "worker", k_rr, 30, "0-3"}});
    ServiceExpectation player;
    player.unit = "player.service";
    player.profile_key = "player";
    player.app_name = "player.service";
    player.unit_sched = ThreadSched{SchedPolicy::rr, 30};
    ServiceAudit audit = audit_service(sys.view(), player);
    const Check& c = find(audit, "service-threads");
    CHECK(c.status == Status::fail);
    CHECK(c.reason == "'player' (tid 600): the main thread runs other, not the unit's rr 30");
    CHECK(c.fix == "restart 'player.service' so that the CPUSchedulingPolicy= of rtprov's "
                   "drop-in applies");
    CHECK(find(audit, "service-limits").reason ==
          "the profile sets no LimitRTPRIO= or LimitMEMLOCK= for it and no app needs one");
}

TEST_CASE("an app without known thread names fails when its main thread runs real-time") {
    // PipeWire's module-rt raises its data loop, not the main thread; 'chrt -a -f 90'
    // raises every thread, which inverts them.
    ServiceExpectation pw;
    pw.unit = "pipewire.service";
    pw.profile_key = "pipewire";
    pw.app_name = "PipeWire";
    pw.app_threads = "data-loop threads";
    pw.app_sched = ThreadSched{SchedPolicy::fifo, 83};
    FakeSystem ok_sys;
    ok_sys.process(900, "/system.slice/pipewire.service",
                   {{900, "pipewire", k_other, 0, "0-3"}, {901, "data-loop.0", k_fifo, 83, "0-3"}},
                   limits_text("95", "unlimited"));
    CHECK(find(audit_service(ok_sys.view(), pw), "service-threads").status == Status::ok);

    FakeSystem inverted;
    inverted.process(
        900, "/system.slice/pipewire.service",
        {{900, "pipewire", k_fifo, 90, "0-3"}, {901, "data-loop.0", k_fifo, 90, "0-3"}},
        limits_text("95", "unlimited"));
    ServiceAudit audit = audit_service(inverted.view(), pw);
    CHECK(find(audit, "service-threads").status == Status::fail);
    REQUIRE(audit.table.threads.size() == 2);
    CHECK(audit.table.threads[0].note ==
          "the main thread runs at fifo 90: every thread of PipeWire seems raised, which "
          "inverts its data-loop threads");
}
