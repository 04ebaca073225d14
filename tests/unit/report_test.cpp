// SPDX-License-Identifier: Apache-2.0
#include "provisioner/selftest/report.hpp"

#include "tests/unit/catch.hpp"

#include <algorithm>
#include <cmath>

using namespace rtprov::selftest;

namespace {

CoreLatency latency(unsigned cpu, IdlePolicy idle, std::initializer_list<std::int64_t> ns) {
    CoreLatency l;
    l.cpu = cpu;
    l.idle = idle;
    for (std::int64_t sample : ns)
        l.histogram.add(sample);
    l.cycles = l.histogram.count();
    l.avg_us = l.histogram.avg_ns() / 1000.0;
    l.max_us = double(l.histogram.max_ns()) / 1000.0;
    l.p99_us = double(l.histogram.percentile_ns(99)) / 1000.0;
    return l;
}

SelftestReport report_at(const std::string& when, double max_us_cpu2) {
    SelftestReport r;
    r.started_at = when;
    r.parameters = {10'000, 100, 99, ""};
    r.cores.push_back(judge_core(
        CoreRole::reserved,
        latency(2, IdlePolicy::system_default, {5'000, std::int64_t(max_us_cpu2 * 1000)}), {}));
    return r;
}

} // namespace

TEST_CASE("a core passes when no sample is above its role's limit") {
    Thresholds t{500, 10'000};
    auto reserved =
        judge_core(CoreRole::reserved, latency(2, IdlePolicy::held, {40'000, 500'000, 501'000}), t);
    CHECK(reserved.threshold_us == 500);
    CHECK(reserved.above == 1);
    CHECK_FALSE(reserved.passed);
    auto housekeeping =
        judge_core(CoreRole::housekeeping, latency(0, IdlePolicy::held, {40'000, 501'000}), t);
    CHECK(housekeeping.threshold_us == 10'000);
    CHECK(housekeeping.passed);
    // no sample at all proves nothing
    CHECK_FALSE(judge_core(CoreRole::reserved, latency(3, IdlePolicy::held, {}), t).passed);
}

TEST_CASE("a report keeps the worst late seconds of a long bad run, in the run's order") {
    CoreLatency l = latency(1, IdlePolicy::system_default, {40'000});
    const std::size_t seconds = k_max_late_seconds + 1400;
    for (std::size_t s = 0; s < seconds; ++s) // all over the limit; every 7th is the worst
        l.max_per_s_us.push_back(std::uint32_t(s % 7 == 0 ? 5000 : 600 + s % 5));
    l.missed_per_s.assign(seconds, 0);
    const CoreReport c = judge_core(CoreRole::reserved, l, {500, 10'000});
    CHECK(c.late_seconds_total == seconds);
    REQUIRE(c.late_seconds.size() == k_max_late_seconds);
    CHECK(std::is_sorted(c.late_seconds.begin(), c.late_seconds.end(),
                         [](const LateSecond& a, const LateSecond& b) { return a.at_s < b.at_s; }));
    std::size_t worst = 0;
    for (const LateSecond& s : c.late_seconds)
        worst += s.max_us == 5000;
    CHECK(worst == (seconds + 6) / 7); // every one of the worst is kept
    CHECK(c.late_seconds.front().at_s == 0);
}

TEST_CASE("the PI probe passes without starvation and within one critical section plus the limit") {
    PiProbeResult r;
    r.acquisitions = 100;
    r.critical_section_us = 200;
    r.worst_wait_us = 10'150;
    auto ok = judge_pi_probe(r, {500, 10'000});
    CHECK(ok.limit_us == 10'200);
    CHECK(ok.passed);
    r.worst_wait_us = 10'300;
    CHECK_FALSE(judge_pi_probe(r, {500, 10'000}).passed);
    r.worst_wait_us = 300;
    r.starved.push_back(StarvedThread{});
    CHECK_FALSE(judge_pi_probe(r, {500, 10'000}).passed);
}

TEST_CASE("a report passes only when every core and the probe pass") {
    SelftestReport r = report_at("t1", 40);
    conclude(r);
    CHECK(r.passed);
    r.cores.push_back(judge_core(CoreRole::reserved, latency(3, IdlePolicy::held, {900'000}), {}));
    conclude(r);
    CHECK_FALSE(r.passed);
    SelftestReport empty;
    conclude(empty);
    CHECK_FALSE(empty.passed);
}

TEST_CASE("a run still going or interrupted does not pass, whatever its numbers") {
    SelftestReport r = report_at("t1", 40);
    r.complete = false;
    conclude(r);
    CHECK_FALSE(r.passed);
    r.complete = true;
    r.interrupted = true;
    conclude(r);
    CHECK_FALSE(r.passed);
    r.interrupted = false;
    conclude(r);
    CHECK(r.passed);
}

TEST_CASE("history lines survive a round trip and broken lines are skipped") {
    auto entries = history_entries(report_at("2026-11-30T01:00:00Z", 40));
    REQUIRE(entries.size() == 1);
    CHECK(entries[0].idle == "default");
    CHECK(entries[0].parameters == "duration=10000ms interval=100us priority=99 load=none");
    std::string text = format_history(entries);
    CHECK(text == "2026-11-30T01:00:00Z\tduration=10000ms interval=100us priority=99 "
                  "load=none\t2\tdefault\t22.500\t40.000\t40.000\tpass\n");
    auto back = parse_history("garbage\n" + text + "x\ty\n");
    REQUIRE(back.size() == 1);
    CHECK(back[0].cpu == 2);
    CHECK(back[0].max_us == 40.0);
    CHECK(back[0].passed);
    // numbers no latency can be: skipped, not drawn
    for (const char* bad : {"nan", "inf", "-1.0"})
        CHECK(parse_history("2026-11-30T01:00:00Z\tk\t2\tdefault\t1.0\t2.0\t" + std::string(bad) +
                            "\tpass\n")
                  .empty());
}

TEST_CASE("compare finds the latest earlier run measured the same way") {
    std::vector<HistoryEntry> history;
    for (auto [when, max] : {std::pair{"t1", 40.0}, {"t2", 60.0}})
        for (HistoryEntry& e : history_entries(report_at(when, max)))
            history.push_back(e);
    SelftestReport other = report_at("t3", 80);
    other.parameters.interval_us = 200; // not like with like
    for (HistoryEntry& e : history_entries(other))
        history.push_back(e);

    auto now = report_at("t4", 50);
    auto c = compare(now, history);
    REQUIRE(c.size() == 1);
    REQUIRE(c[0].before);
    CHECK(c[0].before->started_at == "t2");
    CHECK(c[0].before->max_us == 60.0);

    now.parameters.load_cpus = "0-1";
    CHECK_FALSE(compare(now, history)[0].before);
}

TEST_CASE("a core that missed more planned wake-ups than the limit fails; at the limit it passes") {
    CoreLatency l = latency(1, IdlePolicy::system_default, {20'000, 30'000});
    l.cycles = 8014; // as a guest measured it: every sample fine, 1986 of 10000 missed
    l.overruns = 1986;
    CoreReport fifth = judge_core(CoreRole::reserved, l, {});
    CHECK(fifth.planned == 10'000);
    CHECK(fifth.max_missed_per_mille == 10);
    CHECK(fifth.above == 0);
    CHECK(fifth.missed_too_many);
    CHECK_FALSE(fifth.passed);
    CHECK(std::abs(fifth.missed_percent() - 19.86) < 1e-9);

    l.cycles = 9900; // exactly 1 %
    l.overruns = 100;
    CHECK(judge_core(CoreRole::reserved, l, {}).passed);
    l.overruns = 101;
    CHECK_FALSE(judge_core(CoreRole::reserved, l, {}).passed);
    Thresholds none_missed;
    none_missed.max_missed_per_mille = 0;
    l.overruns = 1;
    CHECK_FALSE(judge_core(CoreRole::housekeeping, l, none_missed).passed);
    l.overruns = 0;
    CHECK(judge_core(CoreRole::housekeeping, l, none_missed).passed);
}

TEST_CASE(
    "a CPU without a role is held to the reserved cores' limit and not the housekeeping one") {
    Thresholds t{500, 10'000};
    CoreReport c =
        judge_core(CoreRole::unassigned, latency(0, IdlePolicy::held, {40'000, 600'000}), t);
    CHECK(c.threshold_us == 500);
    CHECK(c.above == 1);
    CHECK_FALSE(c.passed);
}

TEST_CASE("a run --stop-above cut short does not pass, whatever its numbers") {
    SelftestReport r = report_at("2026-11-30T01:00:00Z", 90);
    conclude(r);
    CHECK(r.passed);
    r.cores[0].latency.stopped_run = true;
    conclude(r);
    CHECK_FALSE(r.passed);
}

TEST_CASE("the late seconds are the ones over the core's limit or with a missed wake-up") {
    CoreLatency l = latency(2, IdlePolicy::system_default, {40'000, 600'000});
    l.max_per_s_us = {41, 600, 12, 501, 0};
    l.missed_per_s = {0, 0, 3, 0, 0};
    CoreReport c = judge_core(CoreRole::reserved, l, Thresholds{500, 10'000});
    REQUIRE(c.late_seconds.size() == 3);
    CHECK(c.late_seconds[0].at_s == 1);
    CHECK(c.late_seconds[0].max_us == 600);
    CHECK(c.late_seconds[1].at_s == 2);
    CHECK(c.late_seconds[1].missed == 3);
    CHECK(c.late_seconds[2].at_s == 3); // 501 µs rounded up is over 500
    // a housekeeping core is held to its own limit
    CHECK(judge_core(CoreRole::housekeeping, l, Thresholds{500, 10'000}).late_seconds.size() == 1);
}
