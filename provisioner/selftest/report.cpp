// SPDX-License-Identifier: Apache-2.0
#include "provisioner/selftest/report.hpp"

#include "provisioner/core/text.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <tuple>

namespace rtprov::selftest {

std::string_view to_string(CoreRole role) {
    switch (role) {
    case CoreRole::reserved:
        return "reserved";
    case CoreRole::housekeeping:
        return "housekeeping";
    case CoreRole::unassigned:
        break;
    }
    return "unassigned";
}

std::string RunParameters::key() const {
    return "duration=" + std::to_string(duration_ms) +
           "ms interval=" + std::to_string(interval_us) +
           "us priority=" + std::to_string(priority) +
           " load=" + (load_cpus.empty() ? std::string("none") : load_cpus) +
           (stop_above_us ? " stop_above=" + std::to_string(stop_above_us) + "us" : "") +
           (method == "rtprov" ? "" : " method=" + method);
}

CoreReport judge_core(CoreRole role, CoreLatency latency, const Thresholds& thresholds) {
    CoreReport core;
    core.role = role;
    core.threshold_role =
        role == CoreRole::housekeeping ? CoreRole::housekeeping : CoreRole::reserved;
    core.threshold_us = core.threshold_role == CoreRole::housekeeping ? thresholds.housekeeping_us
                                                                      : thresholds.reserved_us;
    core.above = latency.histogram.count_above(core.threshold_us);
    core.planned = latency.cycles + latency.overruns;
    core.max_missed_per_mille = thresholds.max_missed_per_mille;
    // Integer arithmetic: 'missed / planned > per_mille / 1000' without rounding.
    core.missed_too_many =
        latency.overruns * 1000 > std::uint64_t(core.max_missed_per_mille) * core.planned;
    core.latency = std::move(latency);
    core.passed = core_passes(core);
    const CoreLatency& l = core.latency;
    for (std::size_t s = 0; s < l.max_per_s_us.size(); ++s) {
        const std::uint32_t missed = s < l.missed_per_s.size() ? l.missed_per_s[s] : 0;
        if (l.max_per_s_us[s] > core.threshold_us || missed > 0)
            core.late_seconds.push_back({unsigned(s), l.max_per_s_us[s], missed});
    }
    core.late_seconds_total = core.late_seconds.size();
    if (core.late_seconds.size() > k_max_late_seconds) { // the worst, in the run's order
        auto worse = [](const LateSecond& a, const LateSecond& b) {
            return std::tie(a.max_us, a.missed, b.at_s) > std::tie(b.max_us, b.missed, a.at_s);
        };
        auto keep = core.late_seconds.begin() + std::ptrdiff_t(k_max_late_seconds);
        std::nth_element(core.late_seconds.begin(), keep, core.late_seconds.end(), worse);
        core.late_seconds.erase(keep, core.late_seconds.end());
        std::sort(core.late_seconds.begin(), core.late_seconds.end(),
                  [](const LateSecond& a, const LateSecond& b) { return a.at_s < b.at_s; });
    }
    return core;
}

bool core_passes(const CoreReport& core) {
    // A run without a single sample proves nothing, so it does not pass.
    return core.latency.cycles > 0 && core.above == 0 && !core.missed_too_many;
}

bool probe_passes(const PiProbeReport& probe) {
    const PiProbeResult& r = probe.result;
    return r.acquisitions > 0 && r.starved.empty() && r.worst_wait_us <= probe.limit_us;
}

double CoreReport::missed_percent() const {
    return planned ? 100.0 * double(latency.overruns) / double(planned) : 0.0;
}

PiProbeReport judge_pi_probe(PiProbeResult result, const Thresholds& thresholds) {
    PiProbeReport probe;
    probe.limit_us = result.critical_section_us + thresholds.housekeeping_us;
    probe.result = std::move(result);
    probe.passed = probe_passes(probe);
    return probe;
}

void conclude(SelftestReport& report) {
    // a run still going, or cut short by a signal or --stop-above, measured less than it
    // was asked to: it proves nothing
    report.passed = !report.cores.empty() && report.complete && !report.interrupted;
    for (const CoreReport& core : report.cores)
        report.passed = report.passed && core.passed && !core.latency.stopped_run;
    if (report.pi_probe)
        report.passed = report.passed && report.pi_probe->passed;
}

std::vector<HistoryEntry> history_entries(const SelftestReport& report) {
    std::vector<HistoryEntry> entries;
    for (const CoreReport& core : report.cores)
        entries.push_back({report.started_at, report.parameters.key(), core.latency.cpu,
                           std::string(to_string(core.latency.idle)), core.latency.avg_us,
                           core.latency.p99_us, core.latency.max_us, core.passed});
    return entries;
}

namespace {

std::string number(double value) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.3f", value);
    return buffer;
}

template <typename T> bool parse_number(const std::string& text, T& value) {
    const char* end = text.data() + text.size();
    auto [ptr, ec] = std::from_chars(text.data(), end, value);
    return ec == std::errc() && ptr == end;
}

} // namespace

std::string format_history(const std::vector<HistoryEntry>& entries) {
    std::string out;
    for (const HistoryEntry& e : entries)
        out += e.started_at + '\t' + e.parameters + '\t' + std::to_string(e.cpu) + '\t' + e.idle +
               '\t' + number(e.avg_us) + '\t' + number(e.p99_us) + '\t' + number(e.max_us) + '\t' +
               (e.passed ? "pass" : "fail") + '\n';
    return out;
}

std::vector<HistoryEntry> parse_history(const std::string& text) {
    std::vector<HistoryEntry> entries;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        std::vector<std::string> f = core::split(line, '\t');
        HistoryEntry e;
        if (f.size() != 8 || f[0].empty() || f[1].empty() || f[3].empty() ||
            !parse_number(f[2], e.cpu) || !parse_number(f[4], e.avg_us) ||
            !parse_number(f[5], e.p99_us) || !parse_number(f[6], e.max_us) ||
            (f[7] != "pass" && f[7] != "fail"))
            continue;
        // from_chars reads 'nan' and 'inf' too: no latency is either, or negative
        auto sane = [](double us) { return std::isfinite(us) && us >= 0; };
        if (!sane(e.avg_us) || !sane(e.p99_us) || !sane(e.max_us))
            continue;
        e.started_at = f[0];
        e.parameters = f[1];
        e.idle = f[3];
        e.passed = f[7] == "pass";
        entries.push_back(std::move(e));
    }
    return entries;
}

std::vector<Comparison> compare(const SelftestReport& report,
                                const std::vector<HistoryEntry>& history) {
    std::vector<Comparison> out;
    for (HistoryEntry& now : history_entries(report)) {
        Comparison c{now, std::nullopt};
        for (auto it = history.rbegin(); it != history.rend(); ++it)
            if (it->parameters == now.parameters && it->cpu == now.cpu && it->idle == now.idle) {
                c.before = *it;
                break;
            }
        out.push_back(std::move(c));
    }
    return out;
}

unsigned safe_period_frames(double worst_us, unsigned rate) {
    for (unsigned frames = k_min_period_frames; frames <= k_max_period_frames; frames *= 2)
        if (2.0 * worst_us <= 1e6 * frames / rate)
            return frames;
    return 0;
}

Verdict verdict(const SelftestReport& report, unsigned rate) {
    Verdict v;
    v.rate = rate;
    bool reserved = false, default_idle = false;
    for (const CoreReport& c : report.cores) {
        reserved = reserved || c.role == CoreRole::reserved;
        default_idle = default_idle || c.latency.idle == IdlePolicy::system_default;
    }
    for (const CoreReport& c : report.cores) {
        if ((reserved && c.role != CoreRole::reserved) ||
            (default_idle && c.latency.idle != IdlePolicy::system_default))
            continue;
        if (c.missed_too_many)
            v.missed.push_back(&c);
        if (c.latency.cycles == 0 || c.above > 0)
            v.failed.push_back(&c);
        if (c.latency.cycles && (!v.worst || c.latency.max_us > v.worst->latency.max_us))
            v.worst = &c;
    }
    if (v.worst)
        v.period_frames = safe_period_frames(v.worst->latency.max_us, rate);
    return v;
}

} // namespace rtprov::selftest
