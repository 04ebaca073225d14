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
    CHECK(changed("\"schema_version\": 1", "\"schema_version\": 2") ==
          "r.json:2:50: 'schema_version' is not 1, the only version this rtprov reads" + tail);
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
              .ends_with("'passed' does not follow from the cores and the probe" + tail));
    CHECK(changed("\"above_threshold\": 1,", "\"above_threshold\": 0,")
              .ends_with("'above_threshold' is 0, the histogram holds 1 above 500 µs" + tail));
    CHECK(changed("\"late_seconds_total\": 1,", "\"late_seconds_total\": 0,")
              .ends_with("'late_seconds' holds 1 seconds; rtprov keeps at most 3600 and no more "
                         "than 'late_seconds_total'" +
                         tail));
    CHECK(changed("\"schema_version\": 1", "\"schema_version\": 1, \"schema_version\": 1")
              .ends_with("the member 'schema_version' is given twice; this is not a report "
                         "rtprov selftest wrote: run 'rtprov selftest' for a new one"));
    CHECK(changed("{\"cpu\": 3", "{\"cpu\": 2")
              .ends_with("CPU 2 is given twice for one idle policy" + tail));
}
