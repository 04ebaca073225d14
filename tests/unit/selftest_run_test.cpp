// SPDX-License-Identifier: Apache-2.0
#include "provisioner/pipeline/selftest_run.hpp"

#include "provisioner/core/error.hpp"
#include "provisioner/profile/app_loader.hpp"
#include "provisioner/profile/profile_loader.hpp"
#include "tests/unit/catch.hpp"

using namespace rtprov;

namespace {

const std::string k_source = RTPROV_SOURCE_DIR;

core::CpuList cpus(const std::string& list) {
    return *core::parse_cpu_list(list);
}

// A machine with 'online' of 'present' CPUs.
system::Cpus machine(const std::string& online = "0-3", const std::string& present = "0-3") {
    system::Cpus c;
    c.online = {cpus(online), "", false};
    c.present = {cpus(present), "", false};
    return c;
}

// The built-in x86-debian13 profile (on 4 CPUs: housekeeping 0-1, reserved 2-3) with 'sets'.
core::Profile x86(std::vector<std::string> sets = {}) {
    std::vector<profile::Override> overrides;
    for (std::string& set : sets)
        overrides.push_back({std::move(set)});
    return profile::load_profile("x86-debian13", {{k_source + "/board-profiles", "built-in"}},
                                 overrides);
}

} // namespace

TEST_CASE("without an applied profile every online CPU is measured with the default limits") {
    pipeline::SelftestRun run = pipeline::plan_selftest_run({}, std::nullopt, machine("0-2"));
    CHECK(run.options.cpus.to_string() == "0-2");
    CHECK_FALSE(run.roles);
    CHECK(run.role_of(1) == selftest::CoreRole::unassigned);
    CHECK(run.duration_s == 10);
    CHECK(run.interval_us == 100);
    CHECK(run.options.duration == std::chrono::milliseconds(10'000));
    CHECK(run.options.interval == std::chrono::microseconds(100));
    CHECK(run.options.priority == 99);
    CHECK(run.thresholds.reserved_us == 500);
    CHECK(run.thresholds.housekeeping_us == 10'000);
    CHECK(run.stack_above_us == 500);
    CHECK(run.options.load_cpus.empty());
}

TEST_CASE("with an applied profile its reserved cores and one housekeeping core are measured") {
    const core::Profile profile =
        x86({"tuning.selftest.duration_s=30", "tuning.selftest.interval_us=250",
             "tuning.selftest.max_latency_us.reserved=200"});
    pipeline::SelftestRun run = pipeline::plan_selftest_run({}, profile, machine());
    CHECK(run.options.cpus.to_string() == "0,2-3");
    REQUIRE(run.roles);
    CHECK(run.role_of(2) == selftest::CoreRole::reserved);
    CHECK(run.role_of(0) == selftest::CoreRole::housekeeping);
    CHECK(run.duration_s == 30);
    CHECK(run.interval_us == 250);
    CHECK(run.thresholds.reserved_us == 200);
    CHECK(run.stack_above_us == 200);

    // what the options give wins over the profile's
    pipeline::SelftestRequest request;
    request.cpus = "3";
    request.duration_s = 5;
    request.interval_us = 1000;
    request.stop_above_us = 150;
    run = pipeline::plan_selftest_run(request, profile, machine());
    CHECK(run.options.cpus.to_string() == "3");
    CHECK(run.duration_s == 5);
    CHECK(run.interval_us == 1000);
    CHECK(run.options.stop_above_us == 150);
    CHECK(run.stack_above_us == 150);
    const selftest::RunParameters p = run.parameters();
    CHECK(p.duration_ms == 5000);
    CHECK(p.interval_us == 1000);
    CHECK(p.stop_above_us == 150);
    CHECK(p.method == "rtprov");
}

TEST_CASE("the profile's cores are resolved on the CPUs present, also with one offline") {
    pipeline::SelftestRun run = pipeline::plan_selftest_run({}, x86(), machine("0-2", "0-3"));
    REQUIRE(run.roles);
    CHECK(run.roles->reserved.to_string() == "2-3");
}

TEST_CASE("the load goes on the housekeeping cores, or without a profile where nothing is "
          "measured") {
    pipeline::SelftestRequest request;
    request.load = true;
    CHECK(pipeline::plan_selftest_run(request, x86(), machine()).options.load_cpus.to_string() ==
          "0-1");
    request.cpus = "2";
    CHECK(pipeline::plan_selftest_run(request, std::nullopt, machine())
              .options.load_cpus.to_string() == "0-1,3");
    request.cpus = "0-3";
    CHECK_THROWS_WITH(pipeline::plan_selftest_run(request, std::nullopt, machine()),
                      "--load: no CPU is left to load: every online CPU is measured; narrow "
                      "--cpus");
    CHECK_THROWS_AS(pipeline::plan_selftest_run(request, std::nullopt, machine()), UsageError);
}

TEST_CASE("a self-test is refused on CPUs it cannot name") {
    pipeline::SelftestRequest request;
    request.cpus = "two";
    CHECK_THROWS_WITH(pipeline::plan_selftest_run(request, std::nullopt, machine()),
                      "--cpus: 'two' is not a CPU list: 'two' is not a CPU number; give e.g. 2-3 "
                      "or 0,2");
    system::Cpus unknown;
    unknown.online = system::Fact<core::CpuList>::failed(
        "cannot read '/sys/devices/system/cpu/online': No such file or directory", true);
    CHECK_THROWS_WITH(pipeline::plan_selftest_run({}, std::nullopt, unknown),
                      "cannot tell which CPUs are online: cannot read "
                      "'/sys/devices/system/cpu/online': No such file or directory; is sysfs "
                      "mounted?");
    system::Cpus empty = machine();
    empty.online = {core::CpuList(), "", false};
    CHECK_THROWS_WITH(pipeline::plan_selftest_run({}, std::nullopt, empty),
                      "cannot tell which CPUs are online: '/sys/devices/system/cpu/online' is "
                      "empty; is sysfs mounted?");
    system::Cpus no_present = machine();
    no_present.present = system::Fact<core::CpuList>::failed("cannot read 'present'");
    CHECK_NOTHROW(pipeline::plan_selftest_run({}, std::nullopt, no_present));
    CHECK_THROWS_WITH(pipeline::plan_selftest_run({}, x86(), no_present),
                      "cannot tell which CPUs are present, which the applied profile's cores are "
                      "resolved on: cannot read 'present'; is sysfs mounted?");
}

TEST_CASE("the idle policies, and a soak run's summaries") {
    pipeline::SelftestRequest request;
    pipeline::SelftestRun run = pipeline::plan_selftest_run(request, std::nullopt, machine());
    pipeline::schedule_selftest_run(run, request);
    CHECK(run.policies == std::vector<selftest::IdlePolicy>{selftest::IdlePolicy::system_default});
    CHECK(run.total_s == 10);
    CHECK(run.summary_s == 0);

    request.idle = "both";
    request.duration_s = 400;
    run = pipeline::plan_selftest_run(request, std::nullopt, machine());
    pipeline::schedule_selftest_run(run, request);
    CHECK(run.policies == std::vector<selftest::IdlePolicy>{selftest::IdlePolicy::system_default,
                                                            selftest::IdlePolicy::held});
    CHECK(run.total_s == 800);
    CHECK(run.summary_s == 60); // longer than 10 minutes in all

    request.idle = "held";
    request.summary_s = 0;
    run = pipeline::plan_selftest_run(request, std::nullopt, machine());
    pipeline::schedule_selftest_run(run, request);
    CHECK(run.policies == std::vector<selftest::IdlePolicy>{selftest::IdlePolicy::held});
    CHECK(run.summary_s == 0);

    request.duration_s = 10;
    request.summary_s = 10;
    run = pipeline::plan_selftest_run(request, std::nullopt, machine());
    CHECK_THROWS_WITH(pipeline::schedule_selftest_run(run, request),
                      "--summary 10 would never come: each idle policy is measured for 10 s; "
                      "pass a shorter --summary or a longer --duration");
}

namespace {

std::vector<core::AppKnowledge> apps() {
    return profile::load_apps(k_source + "/board-profiles/apps");
}

std::optional<pipeline::AudioPlan> audio_plan(const pipeline::AudioRequest& request,
                                              const std::optional<core::Profile>& profile) {
    std::optional<core::ResolvedCores> roles;
    if (profile)
        roles = core::resolve_cores(*profile, 4);
    return pipeline::plan_audio(request, profile, roles, apps());
}

pipeline::AudioRequest asked(std::optional<std::string> period = std::nullopt,
                             std::optional<std::string> buffer = std::nullopt) {
    pipeline::AudioRequest request;
    request.device = "";
    request.period = std::move(period);
    request.buffer = std::move(buffer);
    return request;
}

} // namespace

TEST_CASE("the underrun test is planned only when asked", "[audio]") {
    CHECK_FALSE(audio_plan({}, x86()));
}

TEST_CASE("the underrun test plays as the profile's player: MPD's sizes, thread and cores",
          "[audio]") {
    auto plan = audio_plan(asked(), x86());
    REQUIRE(plan);
    CHECK(plan->options.period == core::AudioSize{125, core::AudioSize::Unit::ms});
    CHECK(plan->options.buffer == core::AudioSize{500, core::AudioSize::Unit::ms});
    CHECK(plan->options.policy == core::SchedPolicy::fifo);
    CHECK(plan->options.priority == 40);
    CHECK(plan->options.cpus.to_string() == "2-3");
    CHECK(plan->sizes_from == "MPD's defaults");
    CHECK(plan->min_headroom_percent == 25);
    CHECK(plan->wanted.empty());
}

TEST_CASE("the underrun test takes the profile's device and headroom", "[audio]") {
    auto plan = audio_plan(asked(), x86({"tuning.selftest.audio_device=hw:CARD=DAC,DEV=0",
                                         "tuning.selftest.audio_min_headroom_percent=40"}));
    REQUIRE(plan);
    CHECK(plan->wanted == "hw:CARD=DAC,DEV=0");
    CHECK(plan->min_headroom_percent == 40);
    pipeline::AudioRequest named = asked();
    named.device = "loopback";
    CHECK(audio_plan(named, x86({"tuning.selftest.audio_device=hw:1,0"}))->wanted == "loopback");
}

TEST_CASE("without a player the underrun test plays with MPD's defaults, unpinned", "[audio]") {
    auto plan = audio_plan(asked(), std::nullopt);
    REQUIRE(plan);
    CHECK(plan->options.period.to_string() == "125ms");
    CHECK(plan->options.buffer.to_string() == "500ms");
    CHECK(plan->options.priority == 40);
    CHECK(plan->options.cpus.empty());
    CHECK(plan->sizes_from == "MPD's defaults (no player in the profile)");
}

TEST_CASE("--period and --buffer: one alone makes the other as MPD does", "[audio]") {
    auto both = audio_plan(asked("10ms", "40ms"), x86());
    CHECK(both->options.period.to_string() == "10ms");
    CHECK(both->options.buffer.to_string() == "40ms");
    CHECK(audio_plan(asked("256frames"), x86())->options.buffer.to_string() == "1024frames");
    CHECK(audio_plan(asked(std::nullopt, "100ms"), x86())->options.period.to_string() == "25ms");
}

TEST_CASE("--period and --buffer are refused when they make no ring of two periods", "[audio]") {
    CHECK_THROWS_WITH(audio_plan(asked("100ms", "150ms"), x86()),
                      Catch::Matchers::Contains("holds less than two 100ms periods"));
    CHECK_THROWS_WITH(audio_plan(asked("10"), x86()), Catch::Matchers::Contains("has no unit"));
    CHECK_THROWS_WITH(audio_plan(asked(std::nullopt, "3ms"), x86()),
                      Catch::Matchers::Contains("give both --period and --buffer"));
    CHECK_THROWS_AS(audio_plan(asked("2000ms"), x86()), UsageError);
}
