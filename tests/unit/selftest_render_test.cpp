// SPDX-License-Identifier: Apache-2.0
#include "provisioner/cli/selftest_render.hpp"

#include "tests/unit/catch.hpp"

#include <cstring>
#include <set>
#include <sstream>
#include <string>

using namespace rtprov;
using namespace rtprov::selftest;
using rtprov::cli::selftest_json;
using rtprov::cli::selftest_prometheus;
using rtprov::cli::selftest_text;

namespace {

// A core's result with 'cycles' samples of 20 µs, the last one 'max_us', and 'missed'
// planned wake-ups skipped.
CoreLatency latency(unsigned cpu, std::uint64_t cycles, std::uint64_t missed, double max_us) {
    CoreLatency l;
    l.cpu = cpu;
    l.idle = IdlePolicy::system_default;
    for (std::uint64_t i = 1; i < cycles; ++i)
        l.histogram.add(20'000);
    l.histogram.add(std::int64_t(max_us * 1000));
    l.cycles = l.histogram.count();
    l.overruns = missed;
    l.min_us = 20;
    l.avg_us = 20;
    l.p50_us = 20;
    l.p99_us = 20;
    l.p999_us = 20;
    l.p9999_us = max_us;
    l.max_us = max_us;
    l.max_at_s = 0.5;
    l.measured_s = 1;
    return l;
}

SelftestReport report(const std::string& profile) {
    SelftestReport r;
    r.started_at = "2026-11-30T01:00:00Z";
    r.started_unix = 1796000000;
    r.profile = profile;
    r.kernel_release = "6.12.117+deb13-amd64";
    r.kernel.version = "#1 SMP PREEMPT_DYNAMIC Debian 6.12.117-1";
    r.kernel.push_ipi = PushIpiState::on;
    r.parameters = {1000, 100, 99, ""};
    return r;
}

// The line of 'text' that starts with 'start', without its newline; "" when none does.
std::string line_starting(const std::string& text, const std::string& start) {
    for (std::size_t at = 0; at < text.size();) {
        std::size_t end = text.find('\n', at);
        if (end == std::string::npos)
            end = text.size();
        if (text.compare(at, start.size(), start) == 0)
            return text.substr(at, end - at);
        at = end + 1;
    }
    return "";
}

} // namespace

TEST_CASE("the table shows missed wake-ups and fails a core that missed a fifth of them") {
    // The case seen in a guest: 1986 of 10000 wake-ups missed, every measured one fine.
    SelftestReport r = report("x86-debian13");
    r.cores.push_back(judge_core(CoreRole::housekeeping, latency(0, 10000, 0, 90), {}));
    r.cores.push_back(judge_core(CoreRole::reserved, latency(1, 8014, 1986, 95), {}));
    conclude(r);
    CHECK_FALSE(r.passed);
    CHECK(selftest_text(r) ==
          "rtprov selftest 2026-11-30T01:00:00Z: profile 'x86-debian13'; 1 s per idle policy, "
          "every 100 µs at SCHED_FIFO 99, no load\n"
          "kernel 6.12.117+deb13-amd64 (#1 SMP PREEMPT_DYNAMIC Debian 6.12.117-1), not "
          "PREEMPT_RT, RT_PUSH_IPI on\n"
          "CPU  role          idle        cycles  missed  miss %     min     avg     p99   p99.9  "
          "   max  at s   limit  over  result\n"
          "  0  housekeeping  default      10000       0    0.00    20.0    20.0    20.0    20.0 "
          "   90.0   0.5   10000     0  pass\n"
          "  1  reserved      default       8014    1986   19.86    20.0    20.0    20.0    20.0 "
          "   95.0   0.5     500     0  FAIL\n"
          "(µs; 'missed': planned wake-ups skipped, not measured, because a sample came a whole "
          "interval late; 'at s': when the maximum came, seconds into the run; 'over': samples "
          "above the limit)\n"
          "a core passes with no sample over its limit and at most 1.0 % of its wake-ups missed "
          "(tuning.selftest.max_missed_per_mille: 10)\n"
          "CPU 1, idle default: missed 1986 of 10000 planned wake-ups (19.86 %), more than 1.0 "
          "%: its thread did not run for whole intervals, and the latencies above leave those "
          "out\n"
          "histogram (samples per range of µs, log scale):\n"
          "                           ≤10  ≤20  ≤50 ≤100 ≤200 ≤500  ≤1k  ≤2k  ≤5k ≤10k >10k\n"
          "  0  housekeeping default    ·    █    ·    ▁    ·    ·    ·    ·    ·    ·    ·\n"
          "  1  reserved     default    ·    █    ·    ▁    ·    ·    ·    ·    ·    ·    ·\n"
          "verdict: not safe for audio yet: CPU 1 (reserved, idle default) missed 19.86 % of its "
          "wake-ups, each a whole interval late, so no ALSA period can be promised until that is "
          "found (see the table above)\n"
          "result: did not pass\n");
}

TEST_CASE("JSON and Prometheus carry the missed wake-ups and their limit") {
    SelftestReport r = report("x86-debian13");
    r.cores.push_back(judge_core(CoreRole::reserved, latency(1, 8014, 1986, 95), {}));
    conclude(r);
    CHECK(line_starting(selftest_json(r), "    {\"cpu\": 1,") ==
          "    {\"cpu\": 1, \"role\": \"reserved\", \"idle\": \"default\", \"cycles\": 8014, "
          "\"overruns\": 1986, \"planned_wakeups\": 10000, \"missed_percent\": 19.860, "
          "\"max_missed_per_mille\": 10, \"min_us\": 20.000, \"avg_us\": 20.000, \"max_us\": "
          "95.000, \"p50_us\": 20.000, \"p99_us\": 20.000, \"p99_9_us\": 20.000, \"p99_99_us\": "
          "95.000, \"max_at_s\": 0.500, \"measured_s\": 1.000, \"threshold_us\": 500, "
          "\"threshold_of\": \"reserved\", "
          "\"above_threshold\": 0, \"passed\": false, \"stopped_run\": false,");
    const std::string prometheus = selftest_prometheus(r);
    CHECK(line_starting(prometheus, "rtprov_selftest_missed_wakeups{") ==
          "rtprov_selftest_missed_wakeups{cpu=\"1\",role=\"reserved\",idle=\"default\"} 1986");
    CHECK(line_starting(prometheus, "rtprov_selftest_planned_wakeups{") ==
          "rtprov_selftest_planned_wakeups{cpu=\"1\",role=\"reserved\",idle=\"default\"} 10000");
    CHECK(line_starting(prometheus, "rtprov_selftest_core_passed{") ==
          "rtprov_selftest_core_passed{cpu=\"1\",role=\"reserved\",idle=\"default\"} 0");
    // base units, a summary with quantile labels, _sum and _count, and when it ran
    CHECK(line_starting(prometheus, "rtprov_selftest_latency_seconds{cpu=\"1\",role=\"reserved\","
                                    "idle=\"default\",quantile=\"1\"}") ==
          "rtprov_selftest_latency_seconds{cpu=\"1\",role=\"reserved\",idle=\"default\","
          "quantile=\"1\"} 0.000095000");
    CHECK(line_starting(prometheus, "rtprov_selftest_latency_seconds_sum{") ==
          "rtprov_selftest_latency_seconds_sum{cpu=\"1\",role=\"reserved\",idle=\"default\"} "
          "0.160280000");
    CHECK(line_starting(prometheus, "rtprov_selftest_latency_seconds_count{") ==
          "rtprov_selftest_latency_seconds_count{cpu=\"1\",role=\"reserved\",idle=\"default\"} "
          "8014");
    CHECK(line_starting(prometheus, "rtprov_selftest_limit_seconds{") ==
          "rtprov_selftest_limit_seconds{cpu=\"1\",role=\"reserved\",idle=\"default\"} "
          "0.000500000");
    CHECK(prometheus.find("\nrtprov_selftest_last_run_timestamp_seconds 1796000000\n") !=
          std::string::npos);
    // every metric has its # HELP and # TYPE before its first sample
    std::set<std::string> described;
    std::istringstream lines(prometheus);
    for (std::string line; std::getline(lines, line);) {
        if (line.starts_with("# TYPE "))
            described.insert(line.substr(7, line.find(' ', 7) - 7));
        if (line.empty() || line.starts_with('#'))
            continue;
        std::string name = line.substr(0, line.find_first_of("{ "));
        for (const char* suffix : {"_sum", "_count"})
            if (name.ends_with(suffix) &&
                described.count(name.substr(0, name.size() - std::strlen(suffix))))
                name = name.substr(0, name.size() - std::strlen(suffix));
        CHECK(described.count(name) == 1);
        CHECK(name.find("microseconds") == std::string::npos);
    }
}

TEST_CASE("without a profile the table says every CPU is held to the reserved limit") {
    SelftestReport r = report("");
    r.cores.push_back(judge_core(CoreRole::unassigned, latency(0, 10000, 0, 600), {}));
    r.cores.push_back(judge_core(CoreRole::unassigned, latency(1, 10000, 0, 90), {}));
    conclude(r);
    const std::string text = selftest_text(r);
    CHECK(line_starting(text, "  0  ") ==
          "  0  unassigned    default      10000       0    0.00    20.0    20.0    20.0    20.0 "
          "  600.0   0.5     500     1  FAIL");
    CHECK(line_starting(text, "unassigned") ==
          "unassigned: no profile is applied, so CPUs 0-1 are held to the reserved cores' limit "
          "of 500 µs (an audio box's CPU is held to audio latency unless a profile makes it "
          "housekeeping)");
    CHECK(line_starting(selftest_json(r), "    {\"cpu\": 0,")
              .find("\"threshold_us\": 500, \"threshold_of\": \"reserved\", ") !=
          std::string::npos);

    SelftestReport with_profile = report("x86-debian13");
    with_profile.cores.push_back(judge_core(CoreRole::housekeeping, latency(0, 10000, 0, 90), {}));
    with_profile.cores.push_back(judge_core(CoreRole::unassigned, latency(5, 10000, 0, 90), {}));
    const std::string text2 = selftest_text(with_profile);
    CHECK(line_starting(text2, "unassigned") ==
          "unassigned: profile 'x86-debian13' gives CPU 5 no role, so it is held to the reserved "
          "cores' limit of 500 µs");
    CHECK(line_starting(selftest_json(with_profile), "    {\"cpu\": 0,")
              .find("\"threshold_us\": 10000, \"threshold_of\": \"housekeeping\", ") !=
          std::string::npos);
}

namespace {

// A report whose PI-boost probe starved, on a generic kernel whose RT_PUSH_IPI is 'state'.
SelftestReport starved_probe(PushIpiState state) {
    SelftestReport r = report("x86-debian13");
    r.kernel.push_ipi = state;
    PiProbeResult probe;
    probe.workers = 4;
    probe.critical_section_us = 200;
    probe.acquisitions = 5000;
    probe.worst_wait_us = 3'000'000;
    probe.windows = 50;
    probe.schedstat_seen = true;
    r.pi_probe = judge_pi_probe(probe, {});
    conclude(r);
    return r;
}

} // namespace

TEST_CASE("the PI-probe hint blames RT_PUSH_IPI only when it was read as off") {
    CHECK(line_starting(selftest_text(starved_probe(PushIpiState::off)), "  RT_PUSH_IPI") ==
          "  RT_PUSH_IPI is off (read from /sys/kernel/debug/sched/features), the condition of "
          "the priority-boost starvation: enable tuning.rt_push_ipi_guard in the profile, or run "
          "'echo RT_PUSH_IPI > /sys/kernel/debug/sched/features'");
    CHECK(line_starting(selftest_text(starved_probe(PushIpiState::unreadable)), "  RT_PUSH_IPI") ==
          "  RT_PUSH_IPI could not be checked: '/sys/kernel/debug/sched/features' cannot be read "
          "(debugfs is not mounted, or the kernel has no CONFIG_SCHED_DEBUG); mount debugfs "
          "('mount -t debugfs debugfs /sys/kernel/debug') and rerun 'rtprov selftest' to see "
          "whether it is off");
    CHECK(line_starting(selftest_text(starved_probe(PushIpiState::unknown)), "  RT_PUSH_IPI") ==
          "  RT_PUSH_IPI is not the cause: '/sys/kernel/debug/sched/features' lists neither "
          "RT_PUSH_IPI nor NO_RT_PUSH_IPI, so this kernel has no push IPI");
    CHECK(line_starting(selftest_text(starved_probe(PushIpiState::on)), "  RT_PUSH_IPI") == "");
}

TEST_CASE("the safe ALSA period: the smallest power of two from 32 frames that the worst "
          "wake-up takes at most half of") {
    // 32 frames at 48 kHz are 666.7 µs: a wake-up of up to 333.3 µs leaves it safe
    CHECK(safe_period_frames(0, 48000) == 32);
    CHECK(safe_period_frames(333.3, 48000) == 32);
    CHECK(safe_period_frames(333.4, 48000) == 64);
    CHECK(safe_period_frames(87, 48000) == 32);
    CHECK(safe_period_frames(1000, 48000) == 128); // 2.67 ms
    CHECK(safe_period_frames(85333.3, 48000) == 8192);
    CHECK(safe_period_frames(85334, 48000) == 0);
    CHECK(safe_period_frames(300, 44100) == 32); // 725.6 µs
}

TEST_CASE("the verdict is made from the reserved cores' worst wake-up, as the box runs") {
    SelftestReport r = report("pi4");
    r.cores.push_back(judge_core(CoreRole::housekeeping, latency(0, 1000, 0, 2500), {}));
    r.cores.push_back(judge_core(CoreRole::reserved, latency(3, 1000, 0, 87), {}));
    CoreLatency held = latency(3, 1000, 0, 40);
    held.idle = IdlePolicy::held;
    r.cores.push_back(judge_core(CoreRole::reserved, held, {}));
    Verdict v = verdict(r);
    REQUIRE(v.worst);
    CHECK(v.worst->latency.cpu == 3);
    CHECK(v.worst->latency.max_us == 87); // the housekeeping core and the held run left out
    CHECK(v.period_frames == 32);
    CHECK(cli::verdict_text(r) ==
          "worst wake-up 87 µs on CPU 3 (reserved, idle default): consistent with ALSA periods "
          "of 32 frames (0.67 ms) and longer at 48 kHz, leaving half of each period for the "
          "player's own work (a timer's wake-up; the sound card's interrupt adds its own); "
          "measured for 1 s, and rarer delays need longer runs (--duration)");
    CHECK(line_starting(selftest_text(r), "verdict: ") == "verdict: " + cli::verdict_text(r));

    // over the core's limit: no period is promised
    r.cores[1] = judge_core(CoreRole::reserved, latency(3, 1000, 0, 1200), {});
    CHECK(cli::verdict_text(r) == "not safe for audio yet: CPU 3 (reserved, idle default) woke "
                                  "1200 µs late, over its limit of 500 µs (1 wake-ups over it)");
    const Thresholds loose{100'000, 100'000, 10};
    r.cores[1] = judge_core(CoreRole::reserved, latency(3, 1000, 0, 1200), loose);
    CHECK(cli::verdict_text(r).find("consistent with ALSA periods of 128 frames (2.67 ms)") !=
          std::string::npos);
    r.cores[1] = judge_core(CoreRole::reserved, latency(3, 1000, 0, 90000), loose);
    CHECK(cli::verdict_text(r).find("too late for any ALSA period up to 8192 frames") !=
          std::string::npos);
    // a core that took no sample proves nothing
    CoreLatency none;
    none.cpu = 2;
    r.cores[1] = judge_core(CoreRole::reserved, none, loose);
    CHECK(cli::verdict_text(r) ==
          "not safe for audio yet: CPU 2 (reserved, idle default) took no sample, so nothing "
          "can be said about it");
    // missed wake-ups: no period is promised, whatever the latencies
    r.cores[1] = judge_core(CoreRole::reserved, latency(3, 1000, 200, 87), {});
    CHECK(cli::verdict_text(r).rfind("not safe for audio yet: CPU 3 (reserved, idle default) "
                                     "missed 16.67 %",
                                     0) == 0);
    r.cores.clear();
    CHECK(cli::verdict_text(r).rfind("no wake-up was measured", 0) == 0);
}

TEST_CASE("an interrupted run says so, in the verdict, the table, JSON and Prometheus") {
    SelftestReport r = report("pi4");
    r.parameters.duration_ms = 86'400'000;
    CoreLatency l = latency(3, 1000, 0, 87);
    l.measured_s = 3723.4;
    r.cores.push_back(judge_core(CoreRole::reserved, l, {}));
    r.interrupted = true;
    conclude(r);
    CHECK(cli::verdict_text(r) ==
          "interrupted after 3723 s of 86400 s per idle policy, so it proves nothing about the "
          "whole run; of what it measured: worst wake-up 87 µs on CPU 3 (reserved, idle "
          "default): consistent with ALSA periods of 32 frames (0.67 ms) and longer at 48 kHz, "
          "leaving half of each period for the player's own work (a timer's wake-up; the sound "
          "card's interrupt adds its own); measured for 3723 s");
    const std::string text = selftest_text(r);
    CHECK(line_starting(text, "interrupted: ") ==
          "interrupted: ended early by a signal; each core measured for the seconds in its "
          "report (measured_s), the rest of the run was not measured");
    CHECK(line_starting(text, "result: ") == "result: did not pass");
    const std::string json = selftest_json(r);
    CHECK(json.find("\"complete\": true, \"interrupted\": true") != std::string::npos);
    CHECK(json.find("\"measured_s\": 3723.400") != std::string::npos);
    CHECK(selftest_prometheus(r).find("\nrtprov_selftest_complete 1\n") != std::string::npos);

    // a snapshot of a run still going
    r.interrupted = false;
    r.complete = false;
    conclude(r);
    CHECK(cli::verdict_text(r).starts_with(
        "not complete: written after 3723 s of 86400 s per idle policy while the run went on "
        "(it may still be running, or it was killed), so it proves nothing about the whole "
        "run; of what it measured: "));
    CHECK(cli::verdict_text(r).ends_with("; measured for 3723 s"));
    CHECK(selftest_prometheus(r).find("\nrtprov_selftest_complete 0\n") != std::string::npos);
    CHECK(line_starting(selftest_text(r), "result: ") == "result: did not pass");
}

TEST_CASE("the terminal histogram: one line per core, a bar per range on a log scale") {
    SelftestReport r = report("pi4");
    CoreLatency l = latency(3, 1000, 0, 150); // 999 samples of 20 µs, one of 150
    r.cores.push_back(judge_core(CoreRole::reserved, l, {}));
    const std::string text = selftest_text(r);
    CHECK(line_starting(text, "  3  reserved     default ") ==
          "  3  reserved     default    ·    █    ·    ·    ▁    ·    ·    ·    ·    ·    ·");
    CHECK(line_starting(text, "                         ") ==
          "                           ≤10  ≤20  ≤50 ≤100 ≤200 ≤500  ≤1k  ≤2k  ≤5k ≤10k >10k");
}

TEST_CASE("the HTML page is self-contained and escapes what it shows") {
    SelftestReport r = report("<b>pi4</b>");
    r.cores.push_back(judge_core(CoreRole::reserved, latency(3, 1000, 0, 87), {}));
    CoreLatency held = latency(3, 1000, 0, 40);
    held.idle = IdlePolicy::held;
    r.cores.push_back(judge_core(CoreRole::reserved, held, {}));
    std::string html = cli::selftest_html(r, {});
    CHECK(html.find("&lt;b&gt;pi4&lt;/b&gt;") != std::string::npos);
    CHECK(html.find("<b>pi4") == std::string::npos);
    CHECK(html.find("<script") == std::string::npos);
    CHECK(html.find("no trend yet") != std::string::npos);
    // one chart for CPU 3, both idle policies in it
    std::size_t svgs = 0, lines = 0;
    for (std::size_t at = 0; (at = html.find("<svg", at)) != std::string::npos; ++at)
        ++svgs;
    for (std::size_t at = 0; (at = html.find("<polyline", at)) != std::string::npos; ++at)
        ++lines;
    CHECK(svgs == 1);
    CHECK(lines == 2);
    // an earlier run measured alike draws the trend
    HistoryEntry before{
        "2026-11-29T01:00:00Z", r.parameters.key(), 3, "default", 20, 20, 300, true, std::nullopt};
    html = cli::selftest_html(r, {before});
    CHECK(html.find("CPU 3, idle default: 2 runs") != std::string::npos);
    CHECK(html.find("2026-11-29T01:00:00Z") != std::string::npos);
}

TEST_CASE("the late seconds read as when in the run a core went over or missed") {
    CoreLatency l = latency(1, 1000, 7, 812);
    l.max_per_s_us = {20, 812, 20, 20, 20, 600, 20, 700, 800, 900, 20};
    l.missed_per_s = {0, 4, 0, 0, 0, 0, 3, 0, 0, 0, 0};
    l.measured_s = 9.9999; // the last planned wake-up, a little before the end
    SelftestReport r = report("pi4");
    r.cores.push_back(judge_core(CoreRole::reserved, l, {}));
    CHECK(cli::late_text(r.cores[0]) ==
          "CPU 1, idle default: over its limit of 500 µs or missing wake-ups in 6 of 10 s: at "
          "1 s (812 µs, 4 missed), 5 s (600 µs), 6 s (20 µs, 3 missed), 7 s (700 µs), 8 s (800 "
          "µs) and 1 more");
    CHECK(line_starting(selftest_text(r), "CPU 1, idle default: over") ==
          cli::late_text(r.cores[0]));
    CHECK(line_starting(cli::selftest_json(r),
                        "     \"late_seconds_total\": 6, \"late_seconds\": [{\"at_s\": 1, ") != "");
}

TEST_CASE("a traced run names what held its worst wake-up up, in text, JSON and HTML") {
    TimerlatAnalysis analysis(1'000'000, 10);
    analysis.add_text(
        "  <idle>-0 [003] d.h1. 120.001002: #1 context irq timer_latency 1500 ns\n"
        "  <idle>-0 [003] dNh1. 120.001004: irq_noise: local_timer:236 start 120.001001200 "
        "duration 3000 ns\n"
        "  timerlat/3-512 [003] ..... 120.001008: #1 context thread timer_latency 8000 ns\n"
        "  burner-1777 [003] d.h1. 120.002002: #2 context irq timer_latency 1400 ns\n"
        "  burner-1777 [003] dNh1. 120.002004: irq_noise: local_timer:236 start 120.002001300 "
        "duration 2800 ns\n"
        "  burner-1777 [003] d...3. 120.004100: thread_noise: burner:1777 start 120.002004100 "
        "duration 2090000 ns\n"
        "  timerlat/3-512 [003] ..... 120.004104: #2 context thread timer_latency 2104000 ns\n");
    CoreLatency l = latency(3, 1000, 0, 2104);
    l.cause = analysis.cores().at(3).worst;
    SelftestReport r = report("pi4");
    r.parameters.method = "timerlat";
    r.trace.asked = r.trace.traced = true;
    r.cores.push_back(judge_core(CoreRole::reserved, l, {}));
    conclude(r);
    const std::string text = selftest_text(r);
    CHECK(line_starting(text, "measured by ") ==
          "measured by the kernel's timerlat tracer (--trace): its thread on each CPU at "
          "SCHED_FIFO 99, in a tracefs instance of rtprov's own");
    CHECK(line_starting(text, "why CPU 3") ==
          "why CPU 3 (reserved, idle default) woke 2104.0 µs late, 0.003 s into the run "
          "(timerlat activation #2):");
    CHECK(line_starting(text, "  mostly ") ==
          "  mostly thread 'burner:1777' running when the timer expired: 2090.0 µs (99 %)");
    CHECK(line_starting(text, "  blocking thread") ==
          "  blocking thread             2090.0 µs  'burner:1777', running when the timer "
          "expired");
    CHECK(line_starting(text, "  timer to its IRQ") == "  timer to its IRQ               0.7 µs");
    const std::string json = selftest_json(r);
    CHECK(json.find("\"method\": \"timerlat\"}") != std::string::npos);
    CHECK(json.find("\"blocking_thread\": \"burner:1777\", \"blocking_us\": 2090.000") !=
          std::string::npos);
    CHECK(json.find("\"main\": {\"what\": \"thread 'burner:1777' running when the timer "
                    "expired\", \"us\": 2090.000}") != std::string::npos);
    const std::string html = cli::selftest_html(r, {});
    CHECK(html.find("<td class=\"l\">blocking thread</td><td>2090.0</td><td>99 %</td>") !=
          std::string::npos);
    CHECK(html.find("the kernel's timerlat tracer (--trace)") != std::string::npos);
    // the history keeps traced runs apart from rtprov's own
    CHECK(r.parameters.key() == "duration=1000ms interval=100us priority=99 load=none "
                                "method=timerlat");
    // a thread's name as it gave it, on one line (a report read back may hold anything)
    r.cores.back().latency.cause->blocking_thread = "\nresult: passed:1777";
    const std::string named = selftest_text(r);
    CHECK(line_starting(named, "  blocking thread") ==
          "  blocking thread             2090.0 µs  '\\x0aresult: passed:1777', running when the "
          "timer expired");
    CHECK(line_starting(named, "result: passed") == "");
}

TEST_CASE("a trace asked for on a kernel without the tracer says why and names no cause") {
    SelftestReport r = report("pi4");
    r.trace.asked = true;
    r.trace.not_traced_because = "this kernel has no timerlat tracer";
    r.cores.push_back(judge_core(CoreRole::reserved, latency(3, 1000, 0, 2104), {}));
    conclude(r);
    const std::string text = selftest_text(r);
    CHECK(line_starting(text, "not traced: ") ==
          "not traced: this kernel has no timerlat tracer; measured with rtprov's own "
          "threads, so no cause is named");
    CHECK(text.find("why CPU") == std::string::npos);
    CHECK(selftest_json(r).find(
              "\"trace\": {\"asked\": true, \"traced\": false, "
              "\"not_traced_because\": \"this kernel has no timerlat "
              "tracer\", \"lost_events\": 0, \"unparsed_lines\": 0, \"kept_trace\": null}") !=
          std::string::npos);
}

TEST_CASE("the deep-idle hint rests on the two idle policies measured on the same core") {
    SelftestReport r = report("pi4");
    r.cores.push_back(judge_core(CoreRole::reserved, latency(2, 1000, 0, 211), {100, 1000, 10}));
    CoreLatency held = latency(2, 1000, 0, 43);
    held.idle = IdlePolicy::held;
    r.cores.push_back(judge_core(CoreRole::reserved, held, {100, 1000, 10}));
    CHECK(line_starting(selftest_text(r), "deep idle: ") ==
          "deep idle: CPU 2 woke up to 211 µs late with deep idle allowed and 43 µs with "
          "/dev/cpu_dma_latency held at 0, the only difference between the two runs: the exit "
          "from deep idle costs it; tuning.hold_cpu_dma_latency holds it at 0 (at a cost in "
          "idle power)");
    // within the limit, or not far apart: no hint
    r.cores[0] = judge_core(CoreRole::reserved, latency(2, 1000, 0, 60), {100, 1000, 10});
    CHECK(line_starting(selftest_text(r), "deep idle: ").empty());
}

namespace {

// 60 s of silence to a DAC at 48 kHz, a 4096-frame buffer in 1024-frame periods, from a
// SCHED_FIFO 40 thread on CPUs 2-3, at worst 'left_ms' left, with 'underruns' underruns.
AudioResult audio_played(double left_ms, unsigned underruns = 0) {
    AudioResult a;
    a.device = "hw:CARD=DAC,DEV=0";
    a.card = "DAC";
    a.rate = 48000;
    a.format = "S32_LE";
    a.channels = 2;
    a.period_frames = 1024;
    a.buffer_frames = 4096;
    a.policy = rtprov::core::SchedPolicy::fifo;
    a.priority = 40;
    a.cpus = "2-3";
    a.memory_locked = true;
    a.cpu_ms = 412.5;
    a.played_s = 60.0;
    a.frames_written = 60 * 48000;
    a.longest_gap_ms = underruns ? 47.25 : 21.9;
    a.min_left_ms = left_ms;
    a.min_left_at_s = 12.5;
    a.underruns = underruns;
    for (unsigned i = 0; i < underruns; ++i)
        a.underrun_list.push_back({3.2 + i * 0.35, 1.25});
    a.recovery_ms_total = 1.25 * underruns;
    a.recovery_ms_max = underruns ? 1.25 : 0;
    for (unsigned s = 0; s < 3; ++s)
        a.seconds.push_back({s, left_ms + 10 * s, s == 1 ? underruns : 0});
    return a;
}

SelftestReport with_audio(const AudioResult& audio) {
    SelftestReport r = report("pi4");
    r.cores.push_back(judge_core(CoreRole::reserved, latency(2, 10000, 0, 40), {}));
    r.audio = judge_audio(audio, 25);
    conclude(r);
    return r;
}

} // namespace

TEST_CASE("the audio test's block: the device, what it took, the thread, what was left") {
    const SelftestReport r = with_audio(audio_played(312.0));
    CHECK(r.passed);
    const std::string text = selftest_text(r);
    INFO(text);
    CHECK(text.find("audio test: 'hw:CARD=DAC,DEV=0' (card 'DAC')\n"
                    "  taken: 48000 Hz, S32_LE, 2 channels; period 1024 frames (21.3 ms), buffer "
                    "4096 frames (85.3 ms)\n"
                    "  thread: SCHED_FIFO 40 on CPUs 2-3, memory locked; 412.5 ms of CPU time\n"
                    "  at worst 312 ms of audio was left; 0 underruns in 60 s\n"
                    "  a pass needs 0 underruns and at least 21.3 ms (25 % of the buffer, "
                    "tuning.selftest.audio_min_headroom_percent) left at every write: pass\n") !=
          std::string::npos);
    CHECK(line_starting(text, "verdict: ")
              .ends_with("; no dropout in 60 s of audio to 'hw:CARD=DAC,DEV=0', and at worst "
                         "312 ms of audio was left (a pass needs 21.3 ms, 25 % of the buffer)"));
    CHECK(line_starting(text, "result: ") == "result: passed");
}

TEST_CASE("a loopback card and a sound server are said plainly") {
    AudioResult loop = audio_played(40.0);
    loop.device = "hw:CARD=Loopback,DEV=0";
    loop.card = "Loopback";
    loop.loopback = true;
    const std::string text = selftest_text(with_audio(loop));
    CHECK(text.find("audio test: 'hw:CARD=Loopback,DEV=0' (card 'Loopback')\n  a loopback card: "
                    "this measures the scheduling, not the DAC's own path\n") != std::string::npos);
    CHECK(line_starting(text, "verdict: ")
              .find("to 'hw:CARD=Loopback,DEV=0' (a loopback card: the scheduling, not a DAC's "
                    "path)") != std::string::npos);
    AudioResult server = audio_played(40.0);
    server.device = "pipewire";
    server.card = "";
    server.through = "pipewire";
    server.server_xruns = 3;
    server.cpus = "";
    server.policy = rtprov::core::SchedPolicy::other;
    const std::string through = selftest_text(with_audio(server));
    CHECK(through.find("audio test: 'pipewire'\n  through PipeWire: its ALSA plugin, at the "
                       "server's quantum; the server plays to the card\n") != std::string::npos);
    CHECK(through.find("  thread: SCHED_OTHER, not pinned, memory locked;") != std::string::npos);
    CHECK(through.find("  PipeWire counted 3 xruns of its own\n") != std::string::npos);
}

TEST_CASE("a failed audio test says when the underruns came, what was left, the gap and the "
          "recovery") {
    const SelftestReport r = with_audio(audio_played(0.0, 16));
    CHECK_FALSE(r.passed);
    const std::string text = selftest_text(r);
    INFO(text);
    CHECK(text.find("  at worst 0.0 ms of audio was left; 16 underruns in 60 s\n"
                    "  underruns at 3.20 s, 3.55 s, 3.90 s, 4.25 s, 4.60 s, 4.95 s, 5.30 s, "
                    "5.65 s and 8 more\n"
                    "  the least was left 12.50 s in; the longest gap between two writes was 47.2 "
                    "ms\n"
                    "  recovering took 20.0 ms in all, 1.2 ms at most\n") != std::string::npos);
    CHECK(line_starting(text, "verdict: ")
              .ends_with("; a listener would have heard 16 dropouts in 60 s of audio to "
                         "'hw:CARD=DAC,DEV=0' (the first 3.20 s in): the player's thread did not "
                         "write in time"));
    // too little left, no underrun
    CHECK(line_starting(selftest_text(with_audio(audio_played(12.0))), "verdict: ")
              .ends_with("; no dropout in 60 s of audio to 'hw:CARD=DAC,DEV=0', but at worst "
                         "12.0 ms was left, less than the 21.3 ms, 25 % of the buffer a pass "
                         "needs: a little more delay and a listener would hear one"));
    // the device went away
    AudioResult gone = audio_played(40.0);
    gone.played_s = 4.25;
    gone.stopped_because = "the device went away (No such device)\nunplugged";
    gone.underruns = 1;
    gone.underrun_list = {{4.0, 0.5}};
    const std::string stopped = selftest_text(with_audio(gone));
    CHECK(stopped.find(
              "  stopped after 4.2 s: the device went away (No such device)\\x0aunplugged\n") !=
          std::string::npos);
    CHECK(
        line_starting(stopped, "verdict: ")
            .ends_with("; the audio to 'hw:CARD=DAC,DEV=0' stopped after 4.2 s (the device "
                       "went away (No such device)\\x0aunplugged): a listener would have heard it "
                       "cut out, after 1 dropout (the first 4.00 s in)"));
    // nothing played
    AudioResult nothing;
    nothing.device = "hw:CARD=DAC,DEV=0";
    CHECK(line_starting(selftest_text(with_audio(nothing)), "verdict: ")
              .ends_with("; no audio was played to 'hw:CARD=DAC,DEV=0', so nothing can be said "
                         "about what a listener would hear"));
}

TEST_CASE("Prometheus carries the audio test in base units with the device label escaped") {
    AudioResult a = audio_played(312.0, 2);
    a.device = "plug:\"dac\\1\"\nx";
    const std::string prometheus = selftest_prometheus(with_audio(a));
    const std::string label = "{device=\"plug:\\\"dac\\\\1\\\"\\nx\"}";
    CHECK(prometheus.find("# HELP rtprov_selftest_audio_underruns_total Underruns in the last "
                          "self-test's audio test: writes that found the ALSA buffer empty, each "
                          "a dropout a listener hears.\n"
                          "# TYPE rtprov_selftest_audio_underruns_total counter\n"
                          "rtprov_selftest_audio_underruns_total" +
                          label + " 2\n") != std::string::npos);
    CHECK(line_starting(prometheus, "rtprov_selftest_audio_min_headroom_seconds{") ==
          "rtprov_selftest_audio_min_headroom_seconds" + label + " 0.312000");
    CHECK(line_starting(prometheus, "rtprov_selftest_audio_min_headroom_limit_seconds{") ==
          "rtprov_selftest_audio_min_headroom_limit_seconds" + label + " 0.021333");
    CHECK(line_starting(prometheus, "rtprov_selftest_audio_passed{") ==
          "rtprov_selftest_audio_passed" + label + " 0");
    CHECK(prometheus.find("# TYPE rtprov_selftest_audio_passed gauge\n") != std::string::npos);
    // none measured: the metric without a sample; no audio test: none of them
    a.min_left_ms = -1;
    CHECK(line_starting(selftest_prometheus(with_audio(a)),
                        "rtprov_selftest_audio_min_headroom_seconds{") == "");
    CHECK(selftest_prometheus(report("pi4")).find("audio") == std::string::npos);
}

TEST_CASE("--compare shows the audio test next to the last one measured alike") {
    SelftestReport before = with_audio(audio_played(40.0, 2));
    before.started_at = "2026-11-29T01:00:00Z";
    const SelftestReport now = with_audio(audio_played(64.0));
    const std::string text = cli::comparison_text(compare(now, history_entries(before)));
    CHECK(line_starting(text, "  audio: ") ==
          "  audio: 2 → 0 underruns, at worst 40.0 ms → 64.0 ms left (+24.0), longest gap 47.2 "
          "→ 21.9 ms since 2026-11-29T01:00:00Z");
    CHECK(line_starting(cli::comparison_text(compare(now, {})), "  audio: ") ==
          "  audio: no earlier run with " + audio_key(now.audio->result, now.parameters));
}

TEST_CASE("the page draws the underruns beside the late seconds and the headroom over time") {
    AudioResult a = audio_played(0.0, 2);
    a.device = "<b>dac</b>";
    a.seconds.push_back({3, -1, 0}); // no write measured in it: a gap in the line
    SelftestReport r = with_audio(a);
    r.cores[0].late_seconds = {{1, 900, 0}};
    const std::string html = cli::selftest_html(r, {});
    CHECK(html.find("<h2>Audio</h2>") != std::string::npos);
    CHECK(html.find("&lt;b&gt;dac&lt;/b&gt;") != std::string::npos);
    CHECK(html.find("<b>dac") == std::string::npos);
    CHECK(html.find("<title>underruns and late seconds over the run</title>") != std::string::npos);
    CHECK(html.find("<title>audio left in the buffer over time</title>") != std::string::npos);
    std::size_t svgs = 0, underruns = 0, late = 0;
    for (std::size_t at = 0; (at = html.find("<svg", at)) != std::string::npos; ++at)
        ++svgs;
    // an underrun is a red mark on the time line; a late second an orange bar
    for (std::size_t at = 0;
         (at = html.find("stroke=\"#c0392b\" stroke-width=\"2\"", at)) != std::string::npos; ++at)
        ++underruns;
    for (std::size_t at = 0; (at = html.find("fill=\"#d9730d\"", at)) != std::string::npos; ++at)
        ++late;
    CHECK(svgs == 3); // the core's histogram, the time line, the headroom
    CHECK(underruns == 2);
    CHECK(late == 1);
    CHECK(html.find("headroom needed 21.3 ms") != std::string::npos);
    // the audio test's trend is a table of its own, never a latency chart
    SelftestReport before = with_audio(audio_played(40.0));
    before.started_at = "2026-11-29T01:00:00Z";
    const std::string trend =
        cli::selftest_html(with_audio(audio_played(0.0, 2)), history_entries(before));
    CHECK(trend.find("<h3>Audio: 2 runs</h3>") != std::string::npos);
    CHECK(trend.find("<td class=\"l\">2026-11-29T01:00:00Z</td><td>0</td><td>40.0</td>") !=
          std::string::npos);
    CHECK(trend.find("CPU 0, idle") == std::string::npos);
    // without the audio test, no audio section
    CHECK(cli::selftest_html(report("pi4"), {}).find("<h2>Audio</h2>") == std::string::npos);
}
