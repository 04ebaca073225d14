// SPDX-License-Identifier: Apache-2.0
#include "provisioner/cli/selftest_render.hpp"

#include "provisioner/core/error.hpp"

#include "tests/unit/catch.hpp"

#include <string>

using namespace rtprov;
using namespace rtprov::selftest;

namespace {

// A report with every part filled: two cores (one traced, with late seconds), the probe
// with a starved window, a trace that lost events.
SelftestReport full_report() {
    SelftestReport r;
    r.started_at = "2026-12-04T10:00:00Z";
    r.started_unix = 1796378400;
    r.profile = "pi4";
    r.kernel_release = "6.12.117+deb13-rt-amd64";
    r.kernel.version = "#1 SMP PREEMPT_RT Debian 6.12.117-1";
    r.kernel.preempt_rt = true;
    r.kernel.push_ipi = PushIpiState::unknown;
    r.parameters = {4000, 1000, 30, "0-1", 0, "timerlat"};
    r.trace = {true, true, "", 7, 2, ""};
    for (unsigned cpu : {2u, 3u}) {
        CoreLatency l;
        l.cpu = cpu;
        for (int i = 0; i < 3990; ++i)
            l.histogram.add(12'345 + i);
        l.histogram.add(20'000'000); // overflow
        l.cycles = l.histogram.count();
        l.overruns = 9;
        l.min_us = 12.345;
        l.avg_us = l.histogram.avg_ns() / 1000.0;
        l.max_us = 20000;
        l.p50_us = 15;
        l.p99_us = 17;
        l.p999_us = 17;
        l.p9999_us = 20000;
        l.max_at_s = 2.5;
        l.measured_s = 3.999;
        l.max_per_s_us = {16, 17, 20000, 17, 0};
        l.missed_per_s = {0, 0, 9, 0, 0};
        if (cpu == 3) {
            WakeupCause w;
            w.at_s = 2.5;
            w.activation = 2500;
            w.thread_latency_ns = 20'000'000;
            w.split_known = true;
            w.irq_latency_ns = 1500;
            w.irq_handler_delay_ns = 700;
            w.timer_irq_ns = 3000;
            w.blocking_thread = "rtprov-burner:812";
            w.blocking_ns = 19'990'000;
            w.interference = {{Interference::Kind::irq, "ttyS1:3", 4000},
                              {Interference::Kind::thread, "irq/3-ttyS1:90", 1000}};
            w.irq_ns = 4000;
            w.thread_ns = 1000;
            w.stack = {"timerlat_irq", "do_idle"};
            l.cause = w;
        }
        r.cores.push_back(judge_core(CoreRole::reserved, l, {500, 10000, 10}));
    }
    PiProbeReport probe;
    probe.result.workers = 4;
    probe.result.critical_section_us = 200;
    probe.result.acquisitions = 100;
    probe.result.worker_acquisitions = 400;
    probe.result.avg_wait_us = 150;
    probe.result.worst_wait_us = 900;
    probe.result.worst_wait_at_s = 1.25;
    probe.result.windows = 20;
    probe.result.schedstat_seen = true;
    probe.result.starved.push_back({812, "pi-worker", std::chrono::milliseconds(300),
                                    std::chrono::milliseconds(100), 90'000'000, 1'000'000});
    probe.limit_us = 10200;
    r.pi_probe = judge_pi_probe(probe.result, {500, 10000, 10});
    conclude(r);
    return r;
}

std::string error_of(const std::string& text) {
    try {
        cli::read_selftest_json(text, "r.json");
    } catch (const Error& e) {
        return e.what();
    }
    return "no error";
}

} // namespace

TEST_CASE("a report read back writes the same JSON, the same table and the same page") {
    const SelftestReport r = full_report();
    const std::string json = cli::selftest_json(r);
    const SelftestReport back = cli::read_selftest_json(json, "r.json");
    CHECK(cli::selftest_json(back) == json);
    CHECK(cli::selftest_text(back) == cli::selftest_text(r));
    CHECK(cli::selftest_html(back, {}) == cli::selftest_html(r, {}));
    CHECK(back.started_unix == r.started_unix);
}

TEST_CASE("a report that is not one rtprov wrote is refused at the place, saying what to do") {
    const std::string json = cli::selftest_json(full_report());
    const std::string tail = "; this is not a report rtprov selftest wrote, or it was changed: run "
                             "'rtprov selftest' for a new one";
    CHECK(error_of("[1,") == "r.json:1:4: unexpected end of the file; expected a JSON value; "
                             "this is not a report rtprov selftest wrote: run 'rtprov selftest' "
                             "for a new one");
    auto changed = [&](const std::string& from, const std::string& to) {
        std::string text = json;
        const auto at = text.find(from);
        REQUIRE(at != std::string::npos);
        return error_of(text.replace(at, from.size(), to));
    };
    CHECK(changed("\"rtprov.selftest\"", "\"rtprov.audit\"") ==
          "r.json:2:13: 'schema' is 'rtprov.audit', not 'rtprov.selftest'" + tail);
    CHECK(changed("\"schema_version\": 2", "\"schema_version\": 3") ==
          "r.json:2:50: 'schema_version' is 3, not 1 or 2, the versions this rtprov reads" + tail);
    CHECK(changed("\"limit_us\": 10000", "\"limit_us\": 4000000000")
              .ends_with("'limit_us' must be a whole number from 0 to 1000000" + tail));
    CHECK(changed("\"counts\": {\"13\"", "\"counts\": {\"99999\"")
              .ends_with("bucket '99999' is not a whole number of µs up to 10000" + tail));
    CHECK(changed("\"overflow\": 1,", "\"overflow\": 2,")
              .ends_with("the histogram holds 3992 samples, the report says 3991" + tail));
    CHECK(changed("\"idle\": \"default\"", "\"idle\": \"sleepy\"")
              .ends_with("'idle' holds 'sleepy', which rtprov does not write there" + tail));
    CHECK(changed("\"cpu\": 2,", "\"cpu\": 1e9,")
              .ends_with("'cpu' must be a whole number from 0 to 4095" + tail));
    CHECK(changed("\"cpu\": 2,", "").ends_with("'cpu' is missing" + tail));
    CHECK(changed("\"started_at\": \"2026-12-04T10:00:00Z\"", "\"started_at\": \"yesterday\"")
              .ends_with("'started_at' is not a UTC time as rtprov writes it" + tail));
    CHECK(changed("\"passed\": false\n}", "\"passed\": \"no\"\n}")
              .ends_with("'passed' must be true or false, not a string" + tail));
    // the verdicts are judged again, not taken from the file
    CHECK(changed("\"passed\": false\n}", "\"passed\": true\n}")
              .ends_with("'passed' does not follow from the cores, the probe and the audio test" +
                         tail));
    CHECK(changed("\"above_threshold\": 1,", "\"above_threshold\": 0,")
              .ends_with("'above_threshold' is 0, the histogram holds 1 above 500 µs" + tail));
    CHECK(changed("\"late_seconds_total\": 1,", "\"late_seconds_total\": 0,")
              .ends_with("'late_seconds' holds 1 seconds; rtprov keeps at most 3600 and no more "
                         "than 'late_seconds_total'" +
                         tail));
    CHECK(changed("\"schema_version\": 2", "\"schema_version\": 2, \"schema_version\": 2")
              .ends_with("the member 'schema_version' is given twice; this is not a report "
                         "rtprov selftest wrote: run 'rtprov selftest' for a new one"));
    CHECK(changed("{\"cpu\": 3", "{\"cpu\": 2")
              .ends_with("CPU 2 is given twice for one idle policy" + tail));
}

namespace {

// A report whose audio test underran twice: every part of the audio object filled.
SelftestReport report_with_audio() {
    SelftestReport r = full_report();
    AudioResult a;
    a.device = "hw:CARD=DAC,DEV=0";
    a.card = "DAC";
    a.through = "pipewire";
    a.rate = 44100;
    a.format = "S16_LE";
    a.channels = 2;
    a.period_frames = 5512;
    a.buffer_frames = 22050;
    a.policy = rtprov::core::SchedPolicy::rr;
    a.priority = 40;
    a.cpus = "2-3";
    a.memory_locked = true;
    a.cpu_ms = 12.3456; // kept to the µs
    a.played_s = 3.9994;
    a.frames_written = 176400;
    a.underruns = 2;
    a.recovery_ms_total = 2.5;
    a.recovery_ms_max = 1.5;
    a.longest_gap_ms = 130.25;
    a.min_left_ms = 0;
    a.min_left_at_s = 2.5;
    a.underrun_list = {{2.5, 1.0}, {2.75, 1.5}};
    // what ran: a full list at the first, past which two more; one of a policy not known
    WhatRan full{"2-3", {}, 2};
    full.threads.push_back({812, 812, "burn \"45\"", rtprov::core::SchedPolicy::rr, 45, 2, 'S'});
    for (int i = 0; i < 7; ++i)
        full.threads.push_back({900 + i, 910 + i, "kworker/3:" + std::to_string(i),
                                rtprov::core::SchedPolicy::other, 0, 3, 'R'});
    a.underrun_list[0].running = full;
    a.underrun_list[1].running = WhatRan{"2-3", {{77, 77, "odd", std::nullopt, 0, 2, 'D'}}, 0};
    a.seconds = {{0, 480.5, 0}, {1, 470.0, 0}, {2, 0, 2}, {3, -1, 0}};
    a.server_xruns = 4;
    a.stopped_because = "the device went away";
    r.audio = judge_audio(a, 30);
    conclude(r);
    return r;
}

} // namespace

TEST_CASE("a report with the audio test reads back as it was written") {
    const SelftestReport r = report_with_audio();
    const std::string json = cli::selftest_json(r);
    CHECK(json.find("\"schema_version\": 2") != std::string::npos);
    const SelftestReport back = cli::read_selftest_json(json, "r.json");
    REQUIRE(back.audio);
    CHECK(cli::selftest_json(back) == json);
    CHECK(cli::selftest_text(back) == cli::selftest_text(r));
    CHECK(cli::selftest_html(back, {}) == cli::selftest_html(r, {}));
    // (the latency's _sum is the average read back times the count: not compared here)
    auto audio_metrics = [](const std::string& text) {
        return text.substr(text.find("# HELP rtprov_selftest_audio"));
    };
    CHECK(audio_metrics(cli::selftest_prometheus(back)) ==
          audio_metrics(cli::selftest_prometheus(r)));
    const AudioResult& a = back.audio->result;
    CHECK(a.cpu_ms == 12.346);
    CHECK(a.played_s == 3.999);
    CHECK(a.through == "pipewire");
    CHECK(a.policy == rtprov::core::SchedPolicy::rr);
    CHECK(a.server_xruns == std::optional<std::uint64_t>(4));
    CHECK(a.seconds.back().min_left_ms == -1);
    REQUIRE(a.underrun_list[0].running);
    CHECK(a.underrun_list[0].running->cpus == "2-3");
    CHECK(a.underrun_list[0].running->threads.size() == 8);
    CHECK(a.underrun_list[0].running->more == 2);
    CHECK(a.underrun_list[0].running->threads[0].comm == "burn \"45\"");
    CHECK(a.underrun_list[0].running->threads[0].priority == 45);
    CHECK(a.underrun_list[0].running->threads[7].tid == 916);
    REQUIRE(a.underrun_list[1].running);
    CHECK_FALSE(a.underrun_list[1].running->threads[0].policy);
    CHECK(a.underrun_list[1].running->threads[0].state == 'D');
    CHECK(back.audio->min_headroom_percent == 30);
    CHECK(back.audio->min_headroom_ms == 150.0); // 30 % of 500 ms
    CHECK(back.audio->seconds_total == 4);
    CHECK_FALSE(back.audio->passed);
    CHECK_FALSE(back.passed);
    // and one that passed, without a server, a card or a stop
    SelftestReport ok = full_report();
    AudioResult played = r.audio->result;
    played.through = played.card = played.stopped_because = "";
    played.server_xruns.reset();
    played.underruns = 0;
    played.underrun_list.clear();
    played.min_left_ms = 150;
    played.seconds = {{0, 150, 0}};
    ok.audio = judge_audio(played, 30);
    CHECK(ok.audio->passed);
    const std::string ok_json = cli::selftest_json(ok);
    CHECK(ok_json.find("\"card\": null, \"through\": null,") != std::string::npos);
    CHECK(cli::selftest_json(cli::read_selftest_json(ok_json, "r.json")) == ok_json);
}

TEST_CASE("a report without the audio test writes null, and one of version 1 reads too") {
    const SelftestReport r = full_report();
    std::string json = cli::selftest_json(r);
    const std::string null_audio = ",\n  \"audio\": null";
    const auto at = json.find(null_audio);
    REQUIRE(at != std::string::npos);
    CHECK_FALSE(cli::read_selftest_json(json, "r.json").audio);
    // what rtprov wrote before the audio test: version 1, no "audio"
    std::string v1 = json;
    v1.erase(at, null_audio.size());
    v1.replace(v1.find("\"schema_version\": 2"), 19, "\"schema_version\": 1");
    const SelftestReport back = cli::read_selftest_json(v1, "old.json");
    CHECK_FALSE(back.audio);
    CHECK(cli::selftest_json(back) == json);
    // version 2 names it, even when the test did not run
    CHECK(error_of(json.erase(at, null_audio.size()))
              .ends_with("'audio' is missing; this is not a report rtprov selftest wrote, or it "
                         "was changed: run "
                         "'rtprov selftest' for a new one"));
}

TEST_CASE("an audio test that is not one rtprov wrote is refused or kept in bounds") {
    const std::string json = cli::selftest_json(report_with_audio());
    const std::string tail = "; this is not a report rtprov selftest wrote, or it was changed: run "
                             "'rtprov selftest' for a new one";
    auto changed = [&](const std::string& from, const std::string& to) {
        std::string text = json;
        const auto at = text.find(from);
        REQUIRE(at != std::string::npos);
        return error_of(text.replace(at, from.size(), to));
    };
    // wrong types
    CHECK(changed("\"underruns\": 2,", "\"underruns\": \"2\",")
              .ends_with("'underruns' must be a number, not a string" + tail));
    CHECK(changed("\"result\": {", "\"result\": [{").find("expected") != std::string::npos);
    CHECK(changed("\"loopback\": false", "\"loopback\": 0")
              .ends_with("'loopback' must be true or false, not a number" + tail));
    CHECK(changed("\"audio\": {", "\"audio\": 1, \"x\": {")
              .ends_with("'audio' must be an object or null, not a number" + tail));
    // negative values, NaN (not JSON), numbers out of range
    CHECK(changed("\"longest_gap_ms\": 130.250", "\"longest_gap_ms\": -1")
              .ends_with("'longest_gap_ms' is out of range" + tail));
    CHECK(changed("\"min_left_ms\": 0.000,", "\"min_left_ms\": -0.5,")
              .ends_with("'min_left_ms' is out of range" + tail));
    CHECK(changed("\"cpu_ms\": 12.346", "\"cpu_ms\": NaN")
              .ends_with(":289: unexpected 'N'; expected a JSON value; this is not a report rtprov "
                         "selftest wrote: run 'rtprov selftest' for a new one"));
    CHECK(changed("\"played_s\": 3.999", "\"played_s\": 1e300")
              .ends_with("'played_s' is out of range" + tail));
    CHECK(changed("\"rate\": 44100", "\"rate\": 44100.5")
              .ends_with("'rate' must be a whole number from 0 to 100000000" + tail));
    CHECK(changed("\"priority\": 40, \"cpus\"", "\"priority\": 140, \"cpus\"")
              .ends_with("'priority' must be a whole number from 0 to 99" + tail));
    CHECK(changed("\"min_headroom_percent\": 30", "\"min_headroom_percent\": 101")
              .ends_with("'min_headroom_percent' must be a whole number from 0 to 100" + tail));
    // words and lists rtprov does not write
    CHECK(changed("\"policy\": \"rr\"", "\"policy\": \"SCHED_RR\"")
              .ends_with("'policy' holds 'SCHED_RR', which rtprov does not write there" + tail));
    CHECK(changed("\"through\": \"pipewire\"", "\"through\": \"pulse\"")
              .ends_with("'through' holds 'pulse', which rtprov does not write there" + tail));
    CHECK(changed("\"cpus\": \"2-3\"", "\"cpus\": \"2-\\n\"")
              .ends_with("'cpus' holds '2-\\x0a', not a CPU list" + tail));
    // huge arrays: more underruns listed than counted, more seconds than kept
    CHECK(changed("\"underruns\": 2,", "\"underruns\": 1,")
              .ends_with("'underrun_list' holds 2 underruns; rtprov keeps at most 1000 and no "
                         "more than 'underruns'" +
                         tail));
    std::string many = "\"seconds\": [";
    for (unsigned s = 0; s <= k_max_report_audio_seconds; ++s)
        many += (s ? ", " : "") + std::string("{\"at_s\": ") + std::to_string(s) +
                ", \"min_left_ms\": 1, \"underruns\": 0}";
    CHECK(changed("\"seconds\": [", many + ", ")
              .ends_with("'seconds' holds 3605 seconds; rtprov keeps at most 3600" + tail));
    CHECK(changed("\"seconds_total\": 4", "\"seconds_total\": 3")
              .ends_with("'seconds_total' is 3, fewer than the 4 seconds the report holds" + tail));
    CHECK(
        changed("{\"at_s\": 1, \"min_left_ms\": 470.000", "{\"at_s\": 0, \"min_left_ms\": 470.000")
            .ends_with("'at_s' does not come after the second before it" + tail));
    CHECK(changed("{\"at_s\": 2.750", "{\"at_s\": 2.250")
              .ends_with("'at_s' comes before the underrun before it" + tail));
    // what ran at an underrun
    const std::string odd = "{\"pid\": 77, \"tid\": 77, \"comm\": \"odd\", \"policy\": null, "
                            "\"priority\": 0, \"cpu\": 2, \"state\": \"D\"}";
    CHECK(changed(odd, "{\"pid\": 77, \"tid\": 77, \"comm\": \"odd\", \"policy\": \"SCHED_RR\", "
                       "\"priority\": 0, \"cpu\": 2, \"state\": \"D\"}")
              .ends_with("'policy' holds 'SCHED_RR', which rtprov does not write there" + tail));
    CHECK(changed(odd, "{\"pid\": 77, \"tid\": 77, \"comm\": \"odd\", \"policy\": null, "
                       "\"priority\": 0, \"cpu\": 5, \"state\": \"D\"}")
              .ends_with("'cpu' is 5, not one of 'cpus' '2-3'" + tail));
    CHECK(changed(odd, "{\"pid\": 77, \"tid\": 77, \"comm\": \"odd\", \"policy\": null, "
                       "\"priority\": 0, \"cpu\": 2, \"state\": \"DD\"}")
              .ends_with("'state' holds 'DD', not one character as /proc shows a thread's state" +
                         tail));
    CHECK(changed(odd, "{\"pid\": 77, \"tid\": 77, \"comm\": \"o\\nd\", \"policy\": null, "
                       "\"priority\": 0, \"cpu\": 2, \"state\": \"D\"}")
              .ends_with("'comm' is not a thread's name on one line of at most 64 bytes" + tail));
    CHECK(changed(odd, "{\"pid\": 4194305, \"tid\": 77, \"comm\": \"odd\", \"policy\": null, "
                       "\"priority\": 0, \"cpu\": 2, \"state\": \"D\"}")
              .ends_with("'pid' must be a whole number from 0 to 4194304" + tail));
    CHECK(changed(odd + "], \"more\": 0", odd + "], \"more\": 3")
              .ends_with("'more' is 3, but only 1 threads are listed: rtprov counts only those "
                         "past 8" +
                         tail));
    CHECK(changed(odd + "]", odd + ", " + odd + ", " + odd + ", " + odd + ", " + odd + ", " + odd +
                                 ", " + odd + ", " + odd + ", " + odd + "]")
              .ends_with("'threads' holds 9 threads; rtprov keeps at most 8" + tail));
    // the highest priority first
    CHECK(changed(odd, "{\"pid\": 77, \"tid\": 77, \"comm\": \"odd\", \"policy\": null, "
                       "\"priority\": 0, \"cpu\": 2, \"state\": \"D\"}, {\"pid\": 78, "
                       "\"tid\": 78, \"comm\": \"up\", \"policy\": \"fifo\", \"priority\": 50, "
                       "\"cpu\": 2, \"state\": \"R\"}")
              .ends_with("the thread ranks above the one before it; rtprov lists the highest "
                         "priority first" +
                         tail));
    CHECK(changed("\"cpus\": \"2-3\", \"threads\"", "\"cpus\": \"\", \"threads\"")
              .ends_with("'cpus' holds '', not a CPU list" + tail));
    // the first underruns only
    {
        SelftestReport late = report_with_audio();
        AudioResult& a = late.audio->result;
        a.underruns = 12;
        a.underrun_list.resize(11);
        for (std::size_t i = 2; i < 11; ++i)
            a.underrun_list[i] = {3.0 + double(i), 1.0, std::nullopt};
        a.underrun_list[10].running = a.underrun_list[1].running;
        CHECK(error_of(cli::selftest_json(late))
                  .ends_with("'running' is set for underrun 11; rtprov looks at what ran for the "
                             "first 10 only" +
                             tail));
        a.underrun_list[10].running.reset();
        CHECK(cli::selftest_json(cli::read_selftest_json(cli::selftest_json(late), "r.json")) ==
              cli::selftest_json(late));
    }
    // the judgement is made again from the figures
    CHECK(
        changed("\"min_headroom_ms\": 150.000", "\"min_headroom_ms\": 1.000")
            .ends_with("'min_headroom_ms' is 1.000, but 30 % of the buffer is 150.000 ms" + tail));
    CHECK(changed("\"min_headroom_percent\": 30, \"min_headroom_ms\": 150.000, \"passed\": false",
                  "\"min_headroom_percent\": 30, \"min_headroom_ms\": 150.000, \"passed\": true")
              .ends_with("'passed' does not follow from the audio test's figures" + tail));
}

TEST_CASE("the players' advice reads back as written, and a report without it reads too") {
    SelftestReport r = full_report();
    PlayerAdvice mpd;
    mpd.app = "mpd";
    mpd.name = "MPD";
    mpd.now = "125ms in 500ms";
    mpd.now_default = true;
    mpd.now_deadline_ms = 375;
    mpd.where = "/etc/mpd.conf";
    mpd.now_holds = true;
    mpd.supports = "5ms in 20ms";
    mpd.need_ms = 1.25;
    mpd.deadline_ms = 15;
    mpd.setting = "buffer_time \"20000\" and period_time \"5000\" in the ALSA audio_output of "
                  "/etc/mpd.conf";
    PlayerAdvice sl;
    sl.app = "squeezelite";
    sl.name = "squeezelite";
    sl.where = "/etc/default/squeezelite:1";
    sl.problem = "/etc/default/squeezelite:1: 'SB_EXTRA_ARGS' holds a variable";
    r.players = {mpd, sl};
    const std::string json = cli::selftest_json(r);
    const SelftestReport back = cli::read_selftest_json(json, "r.json");
    REQUIRE(back.players.size() == 2);
    CHECK(back.players[0].now_holds == true);
    CHECK(back.players[0].now_deadline_ms == 375);
    CHECK_FALSE(back.players[1].now_holds);
    CHECK(back.players[1].now.empty());
    CHECK(cli::selftest_json(back) == json);
    // a report of this version from before the advice: no "players"
    std::string older = json;
    const auto at = older.find(",\n  \"players\": [");
    REQUIRE(at != std::string::npos);
    older.erase(at, older.find("\n  ]", at) + 4 - at);
    CHECK(cli::read_selftest_json(older, "old.json").players.empty());
}
