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

namespace {

// 60 s of audio at 48 kHz, a 4096-frame buffer (85.333 ms) in 1024-frame periods, at
// worst 'left_ms' left.
AudioResult audio_played(double left_ms) {
    AudioResult r;
    r.device = "hw:CARD=DAC,DEV=0";
    r.card = "DAC";
    r.rate = 48000;
    r.format = "S32_LE";
    r.channels = 2;
    r.period_frames = 1024;
    r.buffer_frames = 4096;
    r.policy = rtprov::core::SchedPolicy::fifo;
    r.priority = 40;
    r.cpus = "2-3";
    r.memory_locked = true;
    r.played_s = 60;
    r.frames_written = 60 * 48000;
    r.longest_gap_ms = 21.9;
    r.min_left_ms = left_ms;
    r.min_left_at_s = 12.5;
    for (unsigned s = 0; s < 60; ++s)
        r.seconds.push_back({s, left_ms + s, 0});
    return r;
}

} // namespace

TEST_CASE("the audio test passes with no underrun and the headroom left at every write") {
    const AudioReport a = judge_audio(audio_played(64.0), 25);
    CHECK(a.min_headroom_percent == 25);
    CHECK(a.min_headroom_ms == 21.333); // 25 % of 4096 frames at 48 kHz, whole µs
    CHECK(a.seconds_total == 60);
    CHECK(a.passed);
    CHECK(audio_passes(a));
}

TEST_CASE("one underrun fails the audio test, whatever was left otherwise") {
    AudioResult r = audio_played(64.0);
    r.underruns = 1;
    r.underrun_list = {{12.5, 0.8}};
    CHECK_FALSE(judge_audio(r, 25).passed);
    CHECK_FALSE(judge_audio(r, 0).passed);
}

TEST_CASE("less audio left than the headroom fails the audio test; exactly the headroom passes") {
    CHECK_FALSE(judge_audio(audio_played(21.332), 25).passed);
    CHECK(judge_audio(audio_played(21.333), 25).passed);
    // below a µs it is judged as the report keeps it: 21.3325 is 21.333 ms there
    CHECK(judge_audio(audio_played(21.3326), 25).passed);
    CHECK(judge_audio(audio_played(1.0), 0).passed);
    // more than the whole buffer is never left: 100 % at most
    CHECK(judge_audio(audio_played(85.333), 150).min_headroom_percent == 100);
}

TEST_CASE("an audio test the device stopped early, or that measured nothing, does not pass") {
    AudioResult stopped = audio_played(64.0);
    stopped.stopped_because = "the device 'hw:CARD=DAC,DEV=0' went away (No such device)";
    CHECK_FALSE(judge_audio(stopped, 25).passed);
    AudioResult none = audio_played(64.0);
    none.min_left_ms = -1; // no write measured what was left
    CHECK_FALSE(judge_audio(none, 25).passed);
    AudioResult silent = audio_played(64.0);
    silent.frames_written = 0;
    CHECK_FALSE(judge_audio(silent, 25).passed);
    CHECK_FALSE(judge_audio(AudioResult{}, 25).passed);
    // a rate of 0 (nothing was opened) asks for no headroom and divides by nothing
    CHECK(judge_audio(AudioResult{}, 25).min_headroom_ms == 0);
}

TEST_CASE("the audio test's times are kept in whole µs and its seconds capped at the worst") {
    AudioResult r = audio_played(30.00049);
    r.longest_gap_ms = std::nan("");
    r.cpu_ms = -3;
    r.seconds.clear();
    for (unsigned s = 0; s < k_max_report_audio_seconds + 10; ++s)
        r.seconds.push_back({s, 50.0, 0});
    r.seconds[7] = {7, 1.0, 0};
    r.seconds[3605] = {3605, 50.0, 2};
    const AudioReport a = judge_audio(r, 25);
    CHECK(a.result.min_left_ms == 30.0);
    CHECK(a.result.longest_gap_ms == 0);
    CHECK(a.result.cpu_ms == 0);
    CHECK(a.seconds_total == k_max_report_audio_seconds + 10);
    REQUIRE(a.result.seconds.size() == k_max_report_audio_seconds);
    CHECK(
        std::is_sorted(a.result.seconds.begin(), a.result.seconds.end(),
                       [](const AudioSecond& x, const AudioSecond& y) { return x.at_s < y.at_s; }));
    auto kept = [&](unsigned at) {
        return std::any_of(a.result.seconds.begin(), a.result.seconds.end(),
                           [&](const AudioSecond& s) { return s.at_s == at; });
    };
    CHECK(kept(7));    // the least left
    CHECK(kept(3605)); // the underruns
    CHECK(kept(0));    // then the earliest of the alike
    CHECK_FALSE(kept(k_max_report_audio_seconds + 9));
}

TEST_CASE("a report with the audio test passes only when the audio passes too") {
    SelftestReport r = report_at("t1", 40);
    r.audio = judge_audio(audio_played(64.0), 25);
    conclude(r);
    CHECK(r.passed);
    r.audio = judge_audio(audio_played(10.0), 25);
    conclude(r);
    CHECK_FALSE(r.passed);
}

TEST_CASE("the audio test's history line survives a round trip; older readers skip it") {
    SelftestReport r = report_at("2026-11-30T01:00:00Z", 40);
    AudioResult played = audio_played(64.0);
    played.device = "my dac\tone"; // a tab or a space of a device stays out of the line
    r.audio = judge_audio(played, 25);
    auto entries = history_entries(r);
    REQUIRE(entries.size() == 2);
    REQUIRE(entries[1].audio);
    CHECK(entries[1].parameters ==
          "audio device=my\\x20dac\\x09one rate=48000 format=S32_LE channels=2 "
          "period=1024frames buffer=4096frames policy=fifo priority=40 cpus=2-3; "
          "duration=10000ms interval=100us priority=99 load=none");
    const std::string text = format_history(entries);
    const std::string audio_line =
        "2026-11-30T01:00:00Z\t" + entries[1].parameters + "\taudio\t0\t64.000\t21.900\tpass\n";
    CHECK(text.ends_with(audio_line));
    auto back = parse_history(text);
    REQUIRE(back.size() == 2);
    CHECK_FALSE(back[0].audio);
    REQUIRE(back[1].audio);
    CHECK(back[1].parameters == entries[1].parameters);
    CHECK(back[1].audio->underruns == 0);
    CHECK(back[1].audio->min_left_ms == 64.0);
    CHECK(back[1].audio->longest_gap_ms == 21.9);
    CHECK(back[1].passed);
    CHECK(format_history(back) == text);
    // an older history (core lines only) reads as before, and the audio line has 7 fields,
    // so a reader that wants 8 (rtprov before the audio test) skips it
    CHECK(parse_history(text.substr(0, text.size() - audio_line.size())).size() == 1);
    CHECK(std::count(audio_line.begin(), audio_line.end(), '\t') == 6);
    // none measured, and broken audio lines
    CHECK(parse_history("t\tk\taudio\t3\tnone\t1.0\tfail\n").at(0).audio->min_left_ms == -1);
    for (const char* bad : {"t\tk\taudio\t-1\t1.0\t1.0\tpass\n", "t\tk\taudio\t1\tnan\t1.0\tpass\n",
                            "t\tk\taudio\t1\t1.0\tinf\tpass\n", "t\tk\taudio\t1\t1.0\t1.0\tok\n",
                            "t\tk\tsound\t1\t1.0\t1.0\tpass\n"})
        CHECK(parse_history(bad).empty());
}

TEST_CASE("compare finds the last audio test measured the same way") {
    auto run = [](const std::string& when, double left, unsigned priority) {
        SelftestReport r = report_at(when, 40);
        AudioResult a = audio_played(left);
        a.priority = int(priority);
        r.audio = judge_audio(a, 25);
        return r;
    };
    std::vector<HistoryEntry> history;
    for (const SelftestReport& r : {run("t1", 50, 40), run("t2", 60, 40), run("t3", 70, 45)})
        for (HistoryEntry& e : history_entries(r))
            history.push_back(e);
    auto c = compare(run("t4", 30, 40), history);
    REQUIRE(c.size() == 2);
    CHECK_FALSE(c[0].now.audio);
    REQUIRE(c[1].now.audio);
    REQUIRE(c[1].before);
    CHECK(c[1].before->started_at == "t2"); // t3 played at another priority
    CHECK(c[1].before->audio->min_left_ms == 60);
    CHECK_FALSE(compare(run("t5", 30, 50), history)[1].before);
    // a report without the audio test compares its cores only
    CHECK(compare(report_at("t6", 40), history).size() == 1);
}
