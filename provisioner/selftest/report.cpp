// SPDX-License-Identifier: Apache-2.0
#include "provisioner/selftest/report.hpp"

#include "provisioner/core/buffer_rule.hpp"

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

namespace {

// A time as the report keeps it: to 3 decimals (whole µs of a time in ms), never negative.
double thousandths(double value) {
    return std::isfinite(value) && value > 0 ? std::round(value * 1000.0) / 1000.0 : 0.0;
}

// The least audio left: thousandths, or -1 for none measured.
double left_ms(double value) {
    return std::isfinite(value) && value >= 0 ? thousandths(value) : -1.0;
}

std::int64_t whole_us(double ms) {
    return std::llround(ms * 1000.0);
}

} // namespace

AudioReport judge_audio(AudioResult result, unsigned min_headroom_percent) {
    AudioResult& r = result;
    for (double* value : {&r.cpu_ms, &r.played_s, &r.recovery_ms_total, &r.recovery_ms_max,
                          &r.longest_gap_ms, &r.min_left_at_s})
        *value = thousandths(*value);
    r.min_left_ms = left_ms(r.min_left_ms);
    if (r.underrun_list.size() > k_max_audio_events)
        r.underrun_list.resize(k_max_audio_events);
    for (Underrun& u : r.underrun_list) {
        u.at_s = thousandths(u.at_s);
        u.recovery_ms = thousandths(u.recovery_ms);
    }
    for (AudioSecond& second : r.seconds)
        second.min_left_ms = left_ms(second.min_left_ms);
    AudioReport audio;
    audio.seconds_total = r.seconds.size();
    if (r.seconds.size() > k_max_report_audio_seconds) { // the worst, in the run's order
        auto worse = [](const AudioSecond& a, const AudioSecond& b) {
            return std::tie(a.underruns, b.min_left_ms, b.at_s) >
                   std::tie(b.underruns, a.min_left_ms, a.at_s);
        };
        auto keep = r.seconds.begin() + std::ptrdiff_t(k_max_report_audio_seconds);
        std::nth_element(r.seconds.begin(), keep, r.seconds.end(), worse);
        r.seconds.erase(keep, r.seconds.end());
        std::sort(r.seconds.begin(), r.seconds.end(),
                  [](const AudioSecond& a, const AudioSecond& b) { return a.at_s < b.at_s; });
    }
    // more than the whole buffer is never left
    audio.min_headroom_percent = std::min(min_headroom_percent, 100u);
    audio.min_headroom_ms =
        thousandths(audio.min_headroom_percent / 100.0 * r.ms_of(r.buffer_frames));
    audio.result = std::move(result);
    audio.passed = audio_passes(audio);
    return audio;
}

bool audio_passes(const AudioReport& audio) {
    const AudioResult& r = audio.result;
    // compared in whole µs, as the report keeps both
    return r.frames_written > 0 && r.stopped_because.empty() && r.underruns == 0 &&
           r.min_left_ms >= 0 && whole_us(r.min_left_ms) >= whole_us(audio.min_headroom_ms);
}

void conclude(SelftestReport& report) {
    // a run still going, or cut short by a signal or --stop-above, measured less than it
    // was asked to: it proves nothing
    report.passed = !report.cores.empty() && report.complete && !report.interrupted;
    for (const CoreReport& core : report.cores)
        report.passed = report.passed && core.passed && !core.latency.stopped_run;
    if (report.pi_probe)
        report.passed = report.passed && report.pi_probe->passed;
    if (report.audio)
        report.passed = report.passed && report.audio->passed;
}

namespace {

// A word of the audio key: no space, tab, newline or backslash of its own (a device name
// comes from the user), each written as \xHH; "none" for an empty one.
std::string key_word(const std::string& text) {
    static const char k_hex[] = "0123456789abcdef";
    if (text.empty())
        return "none";
    std::string out;
    for (char ch : text) {
        const auto c = static_cast<unsigned char>(ch);
        if (c <= 0x20 || c == 0x7f || c == '\\') {
            out += "\\x";
            out += k_hex[c >> 4];
            out += k_hex[c & 15];
        } else {
            out += ch;
        }
    }
    return out;
}

} // namespace

std::string audio_key(const AudioResult& r, const RunParameters& parameters) {
    return "audio device=" + key_word(r.device) + " rate=" + std::to_string(r.rate) +
           " format=" + key_word(r.format) + " channels=" + std::to_string(r.channels) +
           " period=" + std::to_string(r.period_frames) +
           "frames buffer=" + std::to_string(r.buffer_frames) +
           "frames policy=" + core::to_string(r.policy) +
           " priority=" + std::to_string(r.priority) + " cpus=" + key_word(r.cpus) + "; " +
           parameters.key();
}

std::vector<HistoryEntry> history_entries(const SelftestReport& report) {
    std::vector<HistoryEntry> entries;
    for (const CoreReport& core : report.cores)
        entries.push_back({report.started_at, report.parameters.key(), core.latency.cpu,
                           std::string(to_string(core.latency.idle)), core.latency.avg_us,
                           core.latency.p99_us, core.latency.max_us, core.passed, std::nullopt});
    if (report.audio) {
        const AudioResult& r = report.audio->result;
        HistoryEntry e;
        e.started_at = report.started_at;
        e.parameters = audio_key(r, report.parameters);
        e.passed = report.audio->passed;
        e.audio = AudioHistory{r.underruns, r.min_left_ms, r.longest_gap_ms};
        entries.push_back(std::move(e));
    }
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
        if (e.audio)
            out += e.started_at + '\t' + e.parameters + "\taudio\t" +
                   std::to_string(e.audio->underruns) + '\t' +
                   (e.audio->min_left_ms < 0 ? "none" : number(e.audio->min_left_ms)) + '\t' +
                   number(e.audio->longest_gap_ms) + '\t' + (e.passed ? "pass" : "fail") + '\n';
        else
            out += e.started_at + '\t' + e.parameters + '\t' + std::to_string(e.cpu) + '\t' +
                   e.idle + '\t' + number(e.avg_us) + '\t' + number(e.p99_us) + '\t' +
                   number(e.max_us) + '\t' + (e.passed ? "pass" : "fail") + '\n';
    return out;
}

std::vector<HistoryEntry> parse_history(const std::string& text) {
    std::vector<HistoryEntry> entries;
    std::istringstream in(text);
    std::string line;
    // from_chars reads 'nan' and 'inf' too: no latency or time is either, or negative
    auto sane = [](double value) { return std::isfinite(value) && value >= 0; };
    while (std::getline(in, line)) {
        std::vector<std::string> f = core::split(line, '\t');
        HistoryEntry e;
        if (f.size() == 7 && f[2] == "audio") {
            AudioHistory a;
            if (f[0].empty() || f[1].empty() || !parse_number(f[3], a.underruns) ||
                !(f[4] == "none" || (parse_number(f[4], a.min_left_ms) && sane(a.min_left_ms))) ||
                !parse_number(f[5], a.longest_gap_ms) || !sane(a.longest_gap_ms) ||
                (f[6] != "pass" && f[6] != "fail"))
                continue;
            e.started_at = f[0];
            e.parameters = f[1];
            e.passed = f[6] == "pass";
            e.audio = a;
            entries.push_back(std::move(e));
            continue;
        }
        if (f.size() != 8 || f[0].empty() || f[1].empty() || f[3].empty() ||
            !parse_number(f[2], e.cpu) || !parse_number(f[4], e.avg_us) ||
            !parse_number(f[5], e.p99_us) || !parse_number(f[6], e.max_us) ||
            (f[7] != "pass" && f[7] != "fail"))
            continue;
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
            if (it->parameters == now.parameters &&
                it->audio.has_value() == now.audio.has_value() && it->cpu == now.cpu &&
                it->idle == now.idle) {
                c.before = *it;
                break;
            }
        out.push_back(std::move(c));
    }
    return out;
}

unsigned safe_period_frames(double worst_us, unsigned rate) {
    for (unsigned frames = k_min_period_frames; frames <= k_max_period_frames; frames *= 2)
        if (core::buffer_deadline_us({{frames, core::AudioSize::Unit::frames},
                                      {2 * frames, core::AudioSize::Unit::frames}},
                                     rate) >= core::k_buffer_margin * worst_us)
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
