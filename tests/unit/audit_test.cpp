// SPDX-License-Identifier: Apache-2.0
#include "provisioner/audit/audit.hpp"

#include "provisioner/profile/app_loader.hpp"

#include "tests/unit/audit_fixture.hpp"
#include "tests/unit/catch.hpp"

#include <unistd.h>

using namespace rtprov;
using namespace rtprov::audit;
using namespace audit_fixture;

namespace {

const std::vector<core::AppKnowledge> k_apps =
    profile::load_apps(std::string(RTPROV_SOURCE_DIR) + "/board-profiles/apps");

// x86-debian13 on 4 CPUs: isolcpus, CPUs 2-3 reserved, MPD pinned there, its policy left
// to MPD, LimitRTPRIO 40 and LimitMEMLOCK infinity.
core::Profile x86_profile() {
    core::Profile p;
    p.name = "x86-debian13";
    p.board.kernel.rt_packages = {"linux-image-rt-amd64"};
    core::ServiceTuning mpd;
    mpd.name = "mpd";
    mpd.unit = "mpd.service";
    mpd.cpus = core::CpuTarget{core::CpuTargetKind::reserved, {}};
    mpd.limit_rtprio = 40;
    mpd.limit_memlock = "infinity";
    p.tuning.services = {mpd};
    return p;
}

core::InstalledKernel debian_kernel() {
    core::InstalledKernel k;
    k.version = "6.12.117+deb13-amd64";
    k.has_image = true;
    k.config = std::map<std::string, std::string>{{"CONFIG_NO_HZ_FULL", "y"},
                                                  {"CONFIG_RCU_NOCB_CPU", "y"}};
    return k;
}

Expectation x86_expectation() {
    core::Profile p = x86_profile();
    return expect(p, *core::resolve_cores(p, 4), k_apps, {debian_kernel()});
}

// The reference box after 'rtprov apply' and a reboot: MPD on CPUs 2-3 with rtio and
// output:1 at FIFO 40, everything else on CPUs 0-1.
void healthy_box(FakeSystem& sys) {
    sys.process(1, "/init.scope", {{1, "systemd", k_other, 0, "0-1"}});
    sys.kthread(2, "kthreadd", "0-1");
    sys.kthread(20, "migration/2", "2", k_fifo, 99);
    sys.kthread(21, "ksoftirqd/2", "2");
    sys.kthread(30, "migration/3", "3", k_fifo, 99);
    sys.process(400, "/system.slice/ssh.service", {{400, "sshd", k_other, 0, "0-1"}});
    sys.process(812, "/system.slice/mpd.service",
                {{812, "mpd", k_other, 0, "2-3"},
                 {813, "io", k_other, 0, "2-3"},
                 {815, "rtio", k_fifo, 40, "2-3"},
                 {816, "output:1", k_fifo, 40, "2-3"}},
                limits_text("40", "unlimited"));
    sys.irq(24, "IO-APIC   5-edge      ACPI:Ged", "0-1", "0");
    sys.irq(28, "PCI-MSIX-0000:00:01.0   0-edge      virtio0-config", "0-1", "1");
}

std::vector<std::string> ids(const AuditReport& report) {
    std::vector<std::string> out;
    for (const Check& c : report.checks)
        out.push_back(c.subject.empty() ? c.id : c.id + ":" + c.subject);
    return out;
}

// The id as a C string: a std::string temporary here makes GCC 14 warn that the
// returned reference may dangle (-Wdangling-reference), although it points into 'report'.
const Check& find(const AuditReport& report, const char* id) {
    for (const Check& c : report.checks)
        if (c.id == id)
            return c;
    FAIL("no check " << id);
    return report.checks.front();
}

} // namespace

TEST_CASE("the reference box with MPD at its own FIFO 40 on the reserved CPUs passes") {
    FakeSystem sys;
    healthy_box(sys);
    const Expectation e = x86_expectation();
    AuditReport report = run_audit(sys.view(), &e);
    CHECK(ids(report) == std::vector<std::string>{"kernel-preemption",
                                                  "rt-push-ipi",
                                                  "rt-throttling",
                                                  "high-res-timers",
                                                  "tickless",
                                                  "cpu-governor",
                                                  "cmdline",
                                                  "isolated-cpus",
                                                  "nohz-full",
                                                  "irq-affinity",
                                                  "irq-unmovable",
                                                  "sound-irq-shared",
                                                  "smt",
                                                  "cpu-mitigations",
                                                  "swappiness",
                                                  "audio-filesystems",
                                                  "rt-priority",
                                                  "audio-group-limits",
                                                  "cpu-dma-latency",
                                                  "reserved-cpu-tasks",
                                                  "rt-above-audio",
                                                  "service-threads:mpd.service",
                                                  "service-limits:mpd.service"});
    for (const Check& c : report.checks) {
        INFO(c.id << ": " << c.reason);
        CHECK(c.status == Status::ok);
        CHECK_FALSE(c.reason.empty());
        CHECK(c.fix.empty());
    }
    CHECK(report.overall() == Status::ok);
    REQUIRE(report.services.size() == 1);
    CHECK(report.services[0].unit == "mpd.service");
    CHECK(report.services[0].threads.size() == 4);
}

TEST_CASE("an output thread at a wrong priority fails the audit") {
    FakeSystem sys;
    healthy_box(sys);
    sys.remove("proc/812");
    sys.process(812, "/system.slice/mpd.service",
                {{812, "mpd", k_other, 0, "2-3"},
                 {815, "rtio", k_fifo, 40, "2-3"},
                 {816, "output:1", k_fifo, 50, "2-3"}},
                limits_text("40", "unlimited"));
    const Expectation e = x86_expectation();
    AuditReport report = run_audit(sys.view(), &e);
    CHECK(report.overall() == Status::fail);
    const Check& c = find(report, "service-threads");
    CHECK(c.status == Status::fail);
    CHECK(c.reason == "'output:1' (tid 816): runs at fifo 50, not fifo 40 as MPD sets it");
    CHECK(report.services[0].threads[2].status == Status::fail);
}

TEST_CASE("a task wandering onto a reserved CPU fails the audit") {
    FakeSystem sys;
    healthy_box(sys);
    sys.process(950, "/user.slice/user-1000.slice/session-2.scope",
                {{950, "make", k_other, 0, "0-3"}});
    const Expectation e = x86_expectation();
    AuditReport report = run_audit(sys.view(), &e);
    const Check& c = find(report, "reserved-cpu-tasks");
    CHECK(c.status == Status::fail);
    CHECK(c.reason == "1 task outside the profile's services may run on reserved CPUs 2-3: "
                      "'make' (pid 950, CPUs 0-3)");
    CHECK(report.overall() == Status::fail);
}

TEST_CASE("RT_PUSH_IPI off fails on a generic kernel and is no failure on PREEMPT_RT") {
    FakeSystem sys;
    healthy_box(sys);
    sys.write("sys/kernel/debug/sched/features", "TTWU_QUEUE NO_RT_PUSH_IPI\n");
    CHECK(find(run_audit(sys.view()), "rt-push-ipi").status == Status::fail);
    CHECK(run_audit(sys.view()).overall() == Status::fail);

    sys.kernel(k_rt);
    AuditReport rt = run_audit(sys.view());
    CHECK(find(rt, "rt-push-ipi").status == Status::ok);
    CHECK(rt.overall() == Status::warn); // nobody who runs audio (below)
}

TEST_CASE("without a profile only the generic checks run") {
    FakeSystem sys;
    healthy_box(sys);
    AuditReport report = run_audit(sys.view());
    // rtcqs 0.6.4's checks, each: the user's limits (audio-group-limits), real-time at all
    // (rt-priority), the governor, SMT, high-resolution timers, tickless, the preemption
    // model, mitigations, swappiness, file systems, the sound card's IRQs, and
    // /dev/cpu_dma_latency
    CHECK(ids(report) == std::vector<std::string>{"kernel-preemption", "rt-push-ipi",
                                                  "rt-throttling", "high-res-timers", "tickless",
                                                  "cpu-governor", "irq-affinity", "irq-unmovable",
                                                  "sound-irq-shared", "smt", "cpu-mitigations",
                                                  "swappiness", "audio-filesystems", "rt-priority",
                                                  "audio-group-limits", "cpu-dma-latency"});
    CHECK(report.services.empty());
    // the box has nobody who runs audio: the users' checks say so, every other is ok
    for (const Check& c : report.checks) {
        INFO(c.id << ": " << c.reason);
        const bool users =
            c.id == "rt-priority" || c.id == "audio-group-limits" || c.id == "cpu-dma-latency";
        CHECK(c.status == (users ? Status::warn : Status::ok));
        if (users)
            CHECK(c.reason.find("so nobody was judged") != std::string::npos);
    }
    CHECK(find(report, "irq-affinity").reason ==
          "no IRQ that can be moved is delivered to reserved CPUs 2-3");
}

TEST_CASE("an empty root: every check warns with its reason instead of crashing") {
    TempDir empty;
    const Expectation e = x86_expectation();
    AuditReport report = run_audit(read_system_view(empty.path()), &e);
    for (const Check& c : report.checks) {
        INFO(c.id << ": " << c.reason);
        CHECK(c.status == Status::warn);
        CHECK_FALSE(c.reason.empty());
        CHECK_FALSE(c.fix.empty());
    }
    CHECK(find(report, "cmdline").reason ==
          "cannot read '/proc/cmdline': No such file or directory");
    CHECK(find(report, "service-threads").reason.starts_with("cannot list '/proc': "));
}

TEST_CASE("single files missing make only their checks warn") {
    FakeSystem sys;
    healthy_box(sys);
    sys.remove("proc/sys/kernel/sched_rt_runtime_us");
    sys.remove("proc/812/limits");
    const Expectation e = x86_expectation();
    AuditReport report = run_audit(sys.view(), &e);
    const Check& throttling = find(report, "rt-throttling");
    CHECK(throttling.status == Status::warn);
    CHECK(throttling.reason ==
          "cannot read '/proc/sys/kernel/sched_rt_runtime_us': No such file or directory");
    const Check& limits = find(report, "service-limits");
    CHECK(limits.status == Status::warn);
    CHECK(limits.reason == "cannot read '/proc/812/limits': No such file or directory");
    CHECK(find(report, "service-threads").status == Status::ok);
    CHECK(report.overall() == Status::warn);
}

TEST_CASE("the audit runs on this machine's real root and every check has a status and reason") {
    SystemView view = read_system_view("/");
    AuditReport generic = run_audit(view);
    CHECK(generic.checks.size() == 16);

    // With a profile too: resolved on this machine's CPU count.
    core::Profile p = x86_profile();
    const long count = ::sysconf(_SC_NPROCESSORS_CONF);
    auto cores = core::resolve_cores(p, count > 1 ? unsigned(count) : 2u);
    REQUIRE(cores);
    const Expectation e = expect(p, *cores, k_apps, {});
    AuditReport full = run_audit(view, &e);
    CHECK(full.checks.size() > generic.checks.size());
    for (const AuditReport* report : {&generic, &full})
        for (const Check& c : report->checks) {
            INFO(c.id << " " << c.subject << ": " << to_string(c.status) << ": " << c.reason);
            CHECK_FALSE(c.id.empty());
            CHECK_FALSE(c.title.empty());
            CHECK_FALSE(c.reason.empty());
            CHECK((c.status == Status::ok || c.status == Status::warn || c.status == Status::fail));
            const bool has_fix = !c.fix.empty();
            CHECK(has_fix == (c.status != Status::ok));
        }
}
