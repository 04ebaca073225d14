// SPDX-License-Identifier: Apache-2.0
#include "provisioner/systemd/online.hpp"

#include "tests/unit/catch.hpp"

using namespace rtprov;
using namespace rtprov::core;

TEST_CASE("AllowedCPUs goes over D-Bus as a bit per CPU") {
    CHECK(systemd::cpu_mask_bytes(CpuList({0, 1})) == std::vector<std::uint8_t>{0x03});
    CHECK(systemd::cpu_mask_bytes(CpuList({2, 3})) == std::vector<std::uint8_t>{0x0c});
    CHECK(systemd::cpu_mask_bytes(CpuList({9})) == std::vector<std::uint8_t>{0x00, 0x02});
    CHECK(systemd::cpu_mask_bytes(CpuList()).empty());
}

TEST_CASE("a live apply reloads systemd and restarts what changed") {
    Profile profile;
    ServiceTuning mpd;
    mpd.name = "mpd";
    mpd.unit = "mpd.service";
    profile.tuning.services = {mpd};
    profile.tuning.reserve_method = ReserveMethod::cpuset;
    Plan plan;
    plan.changes.push_back({"/etc/systemd/system/mpd.service.d/60-rtprov.conf", {}, {}, ""});
    plan.changes.push_back({"/etc/systemd/system/rtprov-sched-features.service", {}, {}, ""});
    plan.changes.push_back({"/etc/default/grub.d/90-rtprov.cfg", {}, {}, ""});
    ResolvedCores cores{CpuList({0, 1}), CpuList({2, 3})};

    auto actions = systemd::online_actions(plan, profile, cores, false);
    CHECK(actions.reload);
    CHECK(actions.try_restart == std::vector<std::string>{"mpd.service"});
    CHECK(actions.restart == std::vector<std::string>{"rtprov-sched-features.service"});
    CHECK(actions.runtime_allowed_cpus.empty());

    auto runtime = systemd::online_actions(plan, profile, cores, true);
    REQUIRE(runtime.runtime_allowed_cpus.size() == 4);
    CHECK(runtime.runtime_allowed_cpus[1].first == "system.slice");
    CHECK(runtime.runtime_allowed_cpus[1].second == CpuList({0, 1}));
    CHECK(runtime.runtime_allowed_cpus[3].first == "rtprov.slice");
    CHECK(runtime.runtime_allowed_cpus[3].second == CpuList({2, 3}));

    Plan boot_only;
    boot_only.changes.push_back({"/boot/firmware/cmdline.txt", {}, {}, ""});
    CHECK_FALSE(systemd::online_actions(boot_only, profile, cores, false).reload);
}

TEST_CASE("after a rollback or a retirement systemd reloads, restarts and stops what went") {
    auto actions = systemd::rollback_actions({"/etc/systemd/system/mpd.service.d/60-rtprov.conf",
                                              "/etc/systemd/system/rtprov-cpu-dma-latency.service",
                                              "/boot/firmware/cmdline.txt"});
    CHECK(actions.reload);
    CHECK(actions.try_restart == std::vector<std::string>{"mpd.service"});
    CHECK(actions.stop == std::vector<std::string>{"rtprov-cpu-dma-latency.service"});
    CHECK(systemd::rollback_actions({"/etc/rtprov/profile.yaml"}).empty());
}

TEST_CASE("a rollback of the cpuset slices resets their runtime AllowedCPUs to every CPU") {
    auto actions = systemd::rollback_actions({"/etc/systemd/system/system.slice.d/60-rtprov.conf",
                                              "/etc/systemd/system/init.scope.d/60-rtprov.conf",
                                              "/etc/systemd/system/rtprov.slice"});
    REQUIRE(actions.runtime_allowed_cpus.size() == 2);
    CHECK(actions.runtime_allowed_cpus[0].first == "system.slice");
    CHECK(actions.runtime_allowed_cpus[0].second.empty());
    CHECK(actions.runtime_allowed_cpus[1].first == "init.scope");
    CHECK(actions.try_restart.empty());
    CHECK(actions.stop == std::vector<std::string>{"rtprov.slice"});
}

TEST_CASE("the steps of a live apply go in order, each with the systemctl command doing it") {
    systemd::OnlineActions actions;
    actions.reload = true;
    actions.try_restart = {"mpd.service"};
    actions.restart = {"rtprov-sched-features.service", "rtprov-cpu-dma-latency.service"};
    actions.runtime_allowed_cpus = {{"system.slice", CpuList({0, 1})}, {"user.slice", CpuList()}};
    auto steps = systemd::online_steps(actions);
    std::vector<std::string> texts, commands;
    for (const systemd::OnlineStep& step : steps) {
        texts.push_back(step.text());
        commands.push_back(step.command());
    }
    CHECK(texts == std::vector<std::string>{
                       "daemon-reload", "AllowedCPUs=0-1 on system.slice (runtime)",
                       "AllowedCPUs reset to every CPU on user.slice (runtime)",
                       "try-restart mpd.service", "restart rtprov-sched-features.service",
                       "restart rtprov-cpu-dma-latency.service"});
    CHECK(commands ==
          std::vector<std::string>{"systemctl daemon-reload",
                                   "systemctl set-property --runtime system.slice AllowedCPUs=0-1",
                                   "systemctl set-property --runtime user.slice AllowedCPUs=",
                                   "systemctl try-restart mpd.service",
                                   "systemctl restart rtprov-sched-features.service",
                                   "systemctl restart rtprov-cpu-dma-latency.service"});
    // Restarts of several units share one systemctl.
    CHECK(systemd::systemctl_commands(steps) ==
          "systemctl daemon-reload && systemctl set-property --runtime system.slice "
          "AllowedCPUs=0-1 && systemctl set-property --runtime user.slice AllowedCPUs= && "
          "systemctl try-restart mpd.service && systemctl restart rtprov-sched-features.service "
          "rtprov-cpu-dma-latency.service");
    CHECK(systemd::online_steps(systemd::OnlineActions{}).empty());
}

TEST_CASE("a unit name a shell would change is quoted in the commands to run by hand") {
    // systemd-escape writes '-' in a name as \x2d, which an unquoted shell word loses
    systemd::OnlineActions actions;
    actions.restart = {"mpd.service", "player@x\\x2dy.service"};
    actions.runtime_allowed_cpus = {{"a\\x2db.slice", CpuList({0})}};
    auto steps = systemd::online_steps(actions);
    CHECK(systemd::systemctl_commands(steps) ==
          "systemctl set-property --runtime 'a\\x2db.slice' AllowedCPUs=0 && systemctl restart "
          "mpd.service 'player@x\\x2dy.service'");
}
