// SPDX-License-Identifier: Apache-2.0
#include "provisioner/systemd/systemd_plan.hpp"

#include "provisioner/profile/app_loader.hpp"
#include "provisioner/systemd/units.hpp"
#include "tests/unit/catch.hpp"

using namespace rtprov;
using namespace rtprov::core;

namespace {

const std::vector<AppKnowledge> k_apps =
    profile::load_apps(std::string(RTPROV_SOURCE_DIR) + "/board-profiles/apps");

Profile with_mpd() {
    Profile p;
    p.name = std::string("x86");
    ServiceTuning mpd;
    mpd.name = "mpd";
    mpd.unit = "mpd.service";
    mpd.origin = {"x86.yaml", 20, 5};
    mpd.cpus = CpuTarget{CpuTargetKind::reserved, {}};
    mpd.limit_memlock = "infinity";
    p.tuning.services = {mpd};
    p.tuning.rt_push_ipi_guard = false;
    return p;
}

TargetFacts with_unit(const std::string& unit) {
    TargetFacts facts;
    facts.units.insert(unit);
    return facts;
}

const ResolvedCores k_cores{CpuList({0, 1}), CpuList({2, 3})};

Plan plan_for(const Profile& p, const TargetFacts& facts, PlanOptions options = {}) {
    Plan plan;
    systemd::plan_systemd(plan, p, k_cores, facts, k_apps, options);
    return plan;
}

const FileChange* change(const Plan& plan, const std::string& path) {
    for (const FileChange& c : plan.changes)
        if (c.path == path)
            return &c;
    return nullptr;
}

// The planned content of 'path'; fails the test when there is none.
std::string content(const Plan& plan, const std::string& path) {
    const FileChange* c = change(plan, path);
    if (!c) {
        FAIL("no change planned for " << path);
        return "";
    }
    return c->next.content;
}

bool has(const Plan& plan, const std::string& code) {
    for (const Finding& f : plan.findings)
        if (f.code == code)
            return true;
    return false;
}

} // namespace

TEST_CASE("the shipped app knowledge loads") {
    const AppKnowledge* mpd = find_app(k_apps, "mpd", "");
    REQUIRE(mpd);
    CHECK(mpd->priority == 40);
    CHECK(find_app(k_apps, "player", "squeezelite.service")->priority == 45);
    CHECK_FALSE(find_app(k_apps, "other", "other.service"));
}

TEST_CASE("MPD gets LimitRTPRIO, LimitMEMLOCK and CPUAffinity, and no policy") {
    Plan plan = plan_for(with_mpd(), with_unit("mpd.service"));
    const FileChange* dropin = change(plan, "/etc/systemd/system/mpd.service.d/60-rtprov.conf");
    REQUIRE(dropin);
    CHECK(dropin->next.content.ends_with("[Service]\nCPUAffinity=\nCPUAffinity=2-3\n"
                                         "LimitRTPRIO=40\nLimitMEMLOCK=infinity\n"));
    CHECK(dropin->next.content.find("CPUScheduling") == std::string::npos);
    CHECK_FALSE(plan.refused());
}

TEST_CASE("MPD's whole service at rr 45 is refused with the measured cost") {
    Profile p = with_mpd();
    p.tuning.services[0].policy = SchedPolicy::rr;
    p.tuning.services[0].priority = 45;
    Plan plan = plan_for(p, with_unit("mpd.service"));
    CHECK(plan.refused());
    CHECK_FALSE(change(plan, "/etc/systemd/system/mpd.service.d/60-rtprov.conf"));
    REQUIRE(plan.findings.size() >= 1);
    CHECK(plan.findings[0].message ==
          "x86.yaml:20:5: 'mpd.service' would run at SCHED_RR 45, at or above MPD's own rtio "
          "and output:* threads (40); this inverts priorities and causes dropouts (measured on "
          "MPD: 47 ms without the CPU, 16 dropouts in 10.5 s) — remove 'priority' (and set "
          "policy 'app'), or set force_priority: true / pass --force-priority");

    // The finding points at the priority to change, where it was read from.
    p.origins["tuning.services.mpd.priority"] = {"--set 'tuning.services.mpd.priority=45'"};
    CHECK(plan_for(p, with_unit("mpd.service"))
              .findings[0]
              .message.starts_with("--set 'tuning.services.mpd.priority=45': 'mpd.service' "));

    PlanOptions forced;
    forced.force_priority = true;
    Plan with_force = plan_for(p, with_unit("mpd.service"), forced);
    CHECK_FALSE(with_force.refused());
    CHECK(has(with_force, "priority-inversion-forced"));
    CHECK(content(with_force, "/etc/systemd/system/mpd.service.d/60-rtprov.conf")
              .find("CPUSchedulingPolicy=rr\nCPUSchedulingPriority=45\n") != std::string::npos);
}

TEST_CASE("a unit-wide priority below the app's own is allowed and said so") {
    Profile p = with_mpd();
    p.tuning.services[0].policy = SchedPolicy::fifo;
    p.tuning.services[0].priority = 20;
    Plan plan = plan_for(p, with_unit("mpd.service"));
    CHECK_FALSE(plan.refused());
    CHECK(has(plan, "below-app-priority"));
}

TEST_CASE("a LimitRTPRIO below what the app needs is raised") {
    Profile p = with_mpd();
    p.tuning.services[0].limit_rtprio = 10;
    Plan plan = plan_for(p, with_unit("mpd.service"));
    CHECK(has(plan, "rtprio-raised"));
    CHECK(content(plan, "/etc/systemd/system/mpd.service.d/60-rtprov.conf")
              .find("LimitRTPRIO=40\n") != std::string::npos);
}

TEST_CASE("a service the target lacks is a finding, and written only when asked") {
    Plan plan = plan_for(with_mpd(), TargetFacts{});
    CHECK(has(plan, "service-missing"));
    CHECK_FALSE(change(plan, "/etc/systemd/system/mpd.service.d/60-rtprov.conf"));
    Profile p = with_mpd();
    p.tuning.services[0].if_missing = MissingService::write;
    CHECK(change(plan_for(p, TargetFacts{}), "/etc/systemd/system/mpd.service.d/60-rtprov.conf"));
}

TEST_CASE("a reserved core with nothing pinned to it is a warning") {
    Profile p = with_mpd();
    p.tuning.services[0].cpus = CpuTarget{CpuTargetKind::housekeeping, {}};
    CHECK(has(plan_for(p, with_unit("mpd.service")), "reserved-idle"));
    CHECK_FALSE(has(plan_for(with_mpd(), with_unit("mpd.service")), "reserved-idle"));
}

TEST_CASE("cpuset reservation: housekeeping AllowedCPUs for the roots, a slice for audio") {
    Profile p = with_mpd();
    p.tuning.reserve_method = ReserveMethod::cpuset;
    Plan plan = plan_for(p, with_unit("mpd.service"));
    REQUIRE(change(plan, "/etc/systemd/system/init.scope.d/60-rtprov.conf"));
    CHECK(content(plan, "/etc/systemd/system/init.scope.d/60-rtprov.conf")
              .ends_with("[Scope]\nAllowedCPUs=0-1\n"));
    CHECK(content(plan, "/etc/systemd/system/system.slice.d/60-rtprov.conf")
              .ends_with("[Slice]\nAllowedCPUs=0-1\n"));
    CHECK(content(plan, "/etc/systemd/system/user.slice.d/60-rtprov.conf")
              .ends_with("[Slice]\nAllowedCPUs=0-1\n"));
    CHECK(
        content(plan, "/etc/systemd/system/rtprov.slice").ends_with("[Slice]\nAllowedCPUs=2-3\n"));
    CHECK(content(plan, "/etc/systemd/system/mpd.service.d/60-rtprov.conf")
              .find("Slice=rtprov.slice\n") != std::string::npos);
}

TEST_CASE("the RT_PUSH_IPI guard is a unit and its enable link") {
    Profile p = with_mpd();
    p.tuning.rt_push_ipi_guard = true;
    TargetFacts facts = with_unit("mpd.service");
    facts.executables = {"/usr/bin/rtprov"};
    Plan plan = plan_for(p, facts);
    CHECK(change(plan, "/etc/systemd/system/rtprov-sched-features.service"));
    const FileChange* link =
        change(plan, "/etc/systemd/system/sysinit.target.wants/rtprov-sched-features.service");
    REQUIRE(link);
    CHECK(link->next.symlink);
    CHECK(link->next.content == "/etc/systemd/system/rtprov-sched-features.service");
    CHECK_FALSE(has(plan, "rtprov-missing"));
    CHECK(has(plan_for(p, with_unit("mpd.service")), "rtprov-missing"));
}

TEST_CASE("tuning.health_gate: the gate's unit, required by boot-complete.target, run at boot") {
    const std::string unit = "/etc/systemd/system/rtprov-health.service";
    const std::string required = "/etc/systemd/system/boot-complete.target.requires/"
                                 "rtprov-health.service";
    const std::string wanted = "/etc/systemd/system/multi-user.target.wants/rtprov-health.service";
    Profile p = with_mpd();
    TargetFacts facts = with_unit("mpd.service");
    facts.executables = {"/usr/bin/rtprov"};
    Plan off = plan_for(p, facts);
    for (const FileChange& c : off.changes)
        CHECK(c.path.find("rtprov-health") == std::string::npos);

    p.tuning.health_gate = true;
    p.tuning.selftest.duration_s = 30;
    p.tuning.selftest.audio = true;
    Plan plan = plan_for(p, facts);
    CHECK(content(plan, unit) ==
          systemd::render_health_unit("x86", "/usr/bin/rtprov", p.tuning.selftest));
    CHECK(content(plan, unit)
              .find("\nExecStart=/usr/bin/rtprov health --boot --timeout 180\n"
                    "TimeoutStartSec=240s\n") != std::string::npos);
    for (const std::string& link : {required, wanted}) {
        const FileChange* c = change(plan, link);
        REQUIRE(c);
        CHECK(c->next.symlink);
        CHECK(c->next.content == unit);
    }
    CHECK_FALSE(has(plan, "rtprov-missing"));
    CHECK_FALSE(plan.refused());
    // It runs rtprov at boot: a target without it is told.
    CHECK(has(plan_for(p, with_unit("mpd.service")), "rtprov-missing"));
    facts.executables = {"/usr/local/bin/rtprov"};
    CHECK(content(plan_for(p, facts), unit).find("ExecStart=/usr/local/bin/rtprov health ") !=
          std::string::npos);
}

TEST_CASE("an isolated cpuset partition is a unit of its own, with the cpuset method only") {
    Profile p = with_mpd();
    p.tuning.reserve_method = ReserveMethod::cpuset;
    p.tuning.cpuset_partition = true;
    Plan plan = plan_for(p, with_unit("mpd.service"));
    const FileChange* unit = change(plan, "/etc/systemd/system/rtprov-cpuset-partition.service");
    REQUIRE(unit);
    CHECK(unit->next.content.find("cpuset-partition rtprov.slice isolated\n") != std::string::npos);
    CHECK(change(plan,
                 "/etc/systemd/system/multi-user.target.wants/rtprov-cpuset-partition.service"));
    p.tuning.reserve_method = ReserveMethod::isolcpus;
    auto problems = validate(p);
    REQUIRE(problems.size() == 1);
    CHECK(problems[0].message == "cpuset_partition makes rtprov.slice an isolated partition, "
                                 "which needs reserve_method: cpuset (it is 'isolcpus')");
}

TEST_CASE("a trial on a machine without a watchdog is warned about, saying what still holds") {
    PlanOptions trial;
    trial.trial = true;
    TargetFacts facts = with_unit("mpd.service");
    CHECK_FALSE(has(plan_for(with_mpd(), facts, trial), "trial-no-watchdog")); // offline
    facts.watchdog = true;
    CHECK_FALSE(has(plan_for(with_mpd(), facts, trial), "trial-no-watchdog"));
    facts.watchdog = false;
    Plan plan = plan_for(with_mpd(), facts, trial);
    REQUIRE(has(plan, "trial-no-watchdog"));
    CHECK_FALSE(plan.refused());
    CHECK_FALSE(has(plan_for(with_mpd(), facts), "trial-no-watchdog")); // no trial
    for (const Finding& f : plan.findings)
        if (f.code == "trial-no-watchdog")
            CHECK(f.message.find("panic=10 still reboots") != std::string::npos);
}

TEST_CASE("tuning.irqs: the unit carries the layout, its boot instance and the udev rule") {
    Profile p = with_mpd();
    p.tuning.irqs.sound = {IrqPriority::Mode::automatic, 0};
    p.tuning.housekeeping_workqueues = true;
    TargetFacts facts = with_unit("mpd.service");
    facts.executables.push_back("/usr/bin/rtprov");
    Plan plan = plan_for(p, facts);
    CHECK_FALSE(plan.refused());
    const std::string unit = content(plan, "/etc/systemd/system/rtprov-irq-tune@.service");
    CHECK(unit.find("\nExecStart=/usr/bin/rtprov irq-tune --sound-priority 41 --sound-cpus 0-1 "
                    "--other-priority 39 --timer-priority 42 --workqueue-cpus 0-1\n") !=
          std::string::npos);
    CHECK(unit.find("After=sound.target\n") != std::string::npos);
    CHECK(unit.find("DefaultInstance=boot\n") != std::string::npos);
    const FileChange* link =
        change(plan, "/etc/systemd/system/multi-user.target.wants/rtprov-irq-tune@boot.service");
    REQUIRE(link);
    CHECK(link->next.symlink);
    CHECK(link->next.content == "/etc/systemd/system/rtprov-irq-tune@.service");
    CHECK(content(plan, "/etc/udev/rules.d/60-rtprov-sound.rules")
              .ends_with("ACTION==\"add\", SUBSYSTEM==\"sound\", KERNEL==\"card[0-9]*\", "
                         "TAG+=\"systemd\", ENV{SYSTEMD_WANTS}+=\"rtprov-irq-tune@%k.service\"\n"));

    SECTION("names go in double quotes, reserved CPUs when asked") {
        p.tuning.irqs.sound_names = {"DMA IRQ"};
        p.tuning.irqs.sound_cpus = IrqCpus::reserved;
        CHECK(content(plan_for(p, facts), "/etc/systemd/system/rtprov-irq-tune@.service")
                  .find("--sound-cpus 2-3 --sound-name \"DMA IRQ\" ") != std::string::npos);
    }
    SECTION("a priority that inverts MPD's threads is refused, and nothing is written") {
        p.tuning.irqs.sound = {IrqPriority::Mode::value, 30};
        Plan refused = plan_for(p, facts);
        CHECK(refused.refused());
        CHECK(has(refused, "irq-priority-inversion"));
        CHECK_FALSE(change(refused, "/etc/systemd/system/rtprov-irq-tune@.service"));
    }
    SECTION("irqbalance is told the reserved cores, and refuses reserved sound IRQs") {
        facts.units.insert("irqbalance.service");
        Plan with_irqbalance = plan_for(p, facts);
        CHECK(content(with_irqbalance, "/etc/systemd/system/irqbalance.service.d/60-rtprov.conf")
                  .ends_with("[Service]\nEnvironment=IRQBALANCE_BANNED_CPULIST=2-3\n"));
        p.tuning.irqs.sound_cpus = IrqCpus::reserved;
        Plan refused = plan_for(p, facts);
        CHECK(refused.refused());
        CHECK(has(refused, "irqbalance-reserved-irqs"));
    }
    SECTION("off: none of it") {
        p.tuning.irqs.sound = {};
        p.tuning.housekeeping_workqueues = false;
        Plan none = plan_for(p, facts);
        CHECK_FALSE(change(none, "/etc/systemd/system/rtprov-irq-tune@.service"));
        CHECK_FALSE(change(none, "/etc/udev/rules.d/60-rtprov-sound.rules"));
    }
}

namespace {

const std::string k_firstboot_link =
    "/etc/systemd/system/multi-user.target.wants/" + std::string(k_firstboot_unit);

Plan firstboot_plan(const TargetFacts& facts, std::optional<std::string> config) {
    PlanOptions options;
    options.firstboot_config = std::move(config);
    Plan plan;
    systemd::plan_firstboot(plan, facts, options);
    return plan;
}

FileState text(std::string content) {
    FileState state;
    state.content = std::move(content);
    return state;
}

} // namespace

TEST_CASE("--firstboot writes firstboot.yaml and enables the unit where systemctl finds it") {
    TargetFacts facts;
    facts.files["/usr/lib/systemd/system/rtprov-firstboot.service"] = text("[Unit]\n");
    Plan plan = firstboot_plan(facts, "profile: pi4\n");
    REQUIRE(plan.changes.size() == 2);
    CHECK(plan.changes[0].path == k_firstboot_config_path);
    CHECK(plan.changes[0].next.content == "profile: pi4\n");
    CHECK_FALSE(plan.changes[0].next.symlink);
    CHECK(plan.changes[1].path == k_firstboot_link);
    CHECK(plan.changes[1].next.symlink);
    CHECK(plan.changes[1].next.content == "/usr/lib/systemd/system/rtprov-firstboot.service");
    CHECK(systemd::firstboot_link() == k_firstboot_link);
    CHECK(plan.findings.empty());
    // A copy earlier on systemctl's search path is the one it links to.
    facts.files["/usr/local/lib/systemd/system/rtprov-firstboot.service"] = text("[Unit]\n");
    CHECK(content(firstboot_plan(facts, "x"), k_firstboot_link) ==
          "/usr/local/lib/systemd/system/rtprov-firstboot.service");
    facts.files["/etc/systemd/system/rtprov-firstboot.service"] = text("[Unit]\n");
    CHECK(content(firstboot_plan(facts, "x"), k_firstboot_link) ==
          "/etc/systemd/system/rtprov-firstboot.service");
    // Already there as planned: nothing to change.
    facts.files[k_firstboot_config_path] = text("x");
    facts.files[k_firstboot_link] = symlink_to("/etc/systemd/system/rtprov-firstboot.service");
    Plan again = firstboot_plan(facts, "x");
    CHECK(again.changes.empty());
    CHECK(again.unchanged == std::vector<std::string>{k_firstboot_config_path, k_firstboot_link});
}

TEST_CASE("--firstboot is refused for a target without the unit, or with it masked") {
    TargetFacts facts;
    Plan missing = firstboot_plan(facts, "x");
    CHECK(missing.changes.empty());
    REQUIRE(missing.findings.size() == 1);
    CHECK(missing.findings[0].severity == Severity::error);
    CHECK(missing.findings[0].message ==
          "--firstboot enables rtprov-firstboot.service, and the target has none (looked in "
          "/etc/systemd/system, /usr/local/lib/systemd/system, /usr/lib/systemd/system): install "
          "rtprov's package for the image's architecture in it before the apply");
    facts.files["/usr/lib/systemd/system/rtprov-firstboot.service"] = text("[Unit]\n");
    facts.files["/etc/systemd/system/rtprov-firstboot.service"] = symlink_to("/dev/null");
    Plan masked = firstboot_plan(facts, "x");
    CHECK(masked.changes.empty());
    REQUIRE(masked.findings.size() == 1);
    CHECK(masked.findings[0].code == "firstboot-unit-masked");
    CHECK(masked.findings[0].message ==
          "rtprov-firstboot.service is masked in the target "
          "(/etc/systemd/system/rtprov-firstboot.service links to /dev/null), so it cannot be "
          "enabled: remove that link, or drop --firstboot");
}

TEST_CASE("without --firstboot, offline plans drop first boot's files, live plans keep them") {
    TargetFacts facts;
    facts.files[k_firstboot_config_path] = text("profile: pi4\n");
    facts.files[k_firstboot_link] = symlink_to("/usr/lib/systemd/system/rtprov-firstboot.service");
    // offline: not planned, so apply retires what an earlier apply wrote
    Plan offline = firstboot_plan(facts, std::nullopt);
    CHECK(offline.changes.empty());
    CHECK(offline.unchanged.empty());
    CHECK(offline.kept.empty());
    // live (first boot's own apply, or its trial's commit): kept as they are, neither
    // written nor taken for what rtprov wrote
    facts.mode = TargetMode::live;
    Plan live = firstboot_plan(facts, std::nullopt);
    CHECK(live.changes.empty());
    CHECK(live.unchanged.empty());
    CHECK(live.kept == std::vector<std::string>{k_firstboot_config_path, k_firstboot_link});
}
