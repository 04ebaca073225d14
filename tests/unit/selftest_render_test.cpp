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
          "   max  at s  limit  over  result\n"
          "  0  housekeeping  default      10000       0    0.00    20.0    20.0    20.0    20.0 "
          "   90.0   0.5  10000     0  pass\n"
          "  1  reserved      default       8014    1986   19.86    20.0    20.0    20.0    20.0 "
          "   95.0   0.5    500     0  FAIL\n"
          "(µs; 'missed': planned wake-ups skipped, not measured, because a sample came a whole "
          "interval late; 'at s': when the maximum came, seconds into the run; 'over': samples "
          "above the limit)\n"
          "a core passes with no sample over its limit and at most 1.0 % of its wake-ups missed "
          "(tuning.selftest.max_missed_per_mille: 10)\n"
          "CPU 1, idle default: missed 1986 of 10000 planned wake-ups (19.86 %), more than 1.0 "
          "%: its thread did not run for whole intervals, and the latencies above leave those "
          "out\n"
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
          "95.000, \"max_at_s\": 0.500, \"threshold_us\": 500, \"threshold_of\": \"reserved\", "
          "\"above_threshold\": 0, \"passed\": false,");
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
          "  600.0   0.5    500     1  FAIL");
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
