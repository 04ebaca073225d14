// SPDX-License-Identifier: Apache-2.0
// The self-test as one HTML page a person would rather look at: nothing is fetched and
// nothing runs (inline CSS and SVG, no script), so it opens from a USB stick, in a mail,
// or in a text browser (the verdict is words and the numbers are tables; the histograms
// are only charts).
#include "provisioner/cli/selftest_render.hpp"

#include "provisioner/core/sched_policy.hpp"
#include "provisioner/selftest/underrun_watch.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

namespace rtprov::cli {

namespace {

// Text as HTML character data or an attribute value.
std::string esc(const std::string& text) {
    std::string out;
    for (char c : text) {
        switch (c) {
        case '&':
            out += "&amp;";
            break;
        case '<':
            out += "&lt;";
            break;
        case '>':
            out += "&gt;";
            break;
        case '"':
            out += "&quot;";
            break;
        case '\'':
            out += "&#39;";
            break;
        default:
            out += c;
        }
    }
    return out;
}

// The playing thread's policy as the kernel names it, with its priority where it has one.
std::string core_policy(const selftest::AudioResult& a) {
    return core::kernel_name(a.policy) +
           (core::has_static_priority(a.policy) ? " " + std::to_string(a.priority) : "");
}

constexpr double k_width = 640, k_height = 260;
constexpr double k_left = 56, k_right = 16, k_top = 16, k_bottom = 40;
const char* const k_colours[] = {"#1f5fa8", "#d9730d"}; // default, held

// A round axis end at or above 'value': 1, 2 or 5 times a power of ten.
double nice_ceiling(double value) {
    double decade = std::pow(10.0, std::floor(std::log10(std::max(value, 1.0))));
    for (double step : {1.0, 2.0, 5.0, 10.0})
        if (step * decade >= value)
            return step * decade;
    return 10 * decade;
}

// The latency histograms of one CPU, one series per idle policy, on a log count scale
// (as the OSADL latency plots draw them): x in µs up to the largest sample, the limit
// as a dashed line.
std::string histogram_svg(const std::vector<const selftest::CoreReport*>& series) {
    double x_max = 1;
    std::uint64_t most = 1;
    for (const selftest::CoreReport* c : series) {
        x_max = std::max(x_max, c->latency.max_us);
        for (std::uint64_t n : c->latency.histogram.buckets())
            most = std::max(most, n);
        most = std::max(most, c->latency.histogram.overflow());
    }
    const unsigned threshold = series.front()->threshold_us;
    x_max = nice_ceiling(std::max(x_max * 1.05, threshold <= 2 * x_max ? threshold * 1.05 : 0));
    const double decades = std::max(1.0, std::ceil(std::log10(double(most))));
    const double plot_w = k_width - k_left - k_right, plot_h = k_height - k_top - k_bottom;
    auto x_of = [&](double us) { return k_left + plot_w * std::min(us, x_max) / x_max; };
    // counts from 1 (the bottom) to 10^decades; a bucket with one sample stands a little
    // above the axis so it is seen
    auto y_of = [&](double n) {
        double level = n <= 0 ? -0.15 : std::log10(n) / decades;
        return k_top + plot_h * (1 - std::max(level, -0.15) / 1.15 - 0.13);
    };
    std::string svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 " +
                      fixed(k_width, 0) + " " + fixed(k_height, 0) + "\" width=\"" +
                      fixed(k_width, 0) + "\" height=\"" + fixed(k_height, 0) +
                      "\" role=\"img\">\n<title>latency histogram, CPU " +
                      std::to_string(series.front()->latency.cpu) + "</title>\n";
    // axes and grid: decades of samples, round µs
    for (int d = 0; d <= int(decades); ++d) {
        double y = y_of(std::pow(10.0, d));
        svg += "<line x1=\"" + fixed(k_left) + "\" x2=\"" + fixed(k_width - k_right) + "\" y1=\"" +
               fixed(y) + "\" y2=\"" + fixed(y) + "\" class=\"grid\"/>\n" + "<text x=\"" +
               fixed(k_left - 6) + "\" y=\"" + fixed(y + 4) +
               "\" class=\"tick\" text-anchor=\"end\">" +
               (d == 0 ? std::string("1")
                       : "10<tspan dy=\"-6\" font-size=\"9\">" + std::to_string(d) + "</tspan>") +
               "</text>\n";
    }
    for (int i = 0; i <= 5; ++i) {
        double us = x_max * i / 5, x = x_of(us);
        svg += "<line x1=\"" + fixed(x) + "\" x2=\"" + fixed(x) + "\" y1=\"" + fixed(k_top) +
               "\" y2=\"" + fixed(k_height - k_bottom) + "\" class=\"grid\"/>\n<text x=\"" +
               fixed(x) + "\" y=\"" + fixed(k_height - k_bottom + 16) +
               "\" class=\"tick\" text-anchor=\"" + (i == 5 ? "end" : "middle") + "\">" +
               fixed(us, us < 10 ? 1 : 0) + "</text>\n";
    }
    svg += "<text x=\"" + fixed(k_left + plot_w / 2) + "\" y=\"" + fixed(k_height - 6) +
           "\" class=\"axis\" text-anchor=\"middle\">wake-up latency (µs)</text>\n"
           "<text x=\"14\" y=\"" +
           fixed(k_top + plot_h / 2) +
           "\" class=\"axis\" text-anchor=\"middle\" "
           "transform=\"rotate(-90 14 " +
           fixed(k_top + plot_h / 2) + ")\">samples</text>\n";
    // one step line per idle policy; buckets narrower than a pixel are summed into it
    const double pixels = plot_w;
    for (std::size_t s = 0; s < series.size(); ++s) {
        const selftest::CoreReport& c = *series[s];
        const auto& buckets = c.latency.histogram.buckets();
        std::map<int, std::uint64_t> per_pixel;
        for (std::size_t us = 0; us < buckets.size(); ++us)
            if (buckets[us])
                per_pixel[int(std::min(double(us), x_max) / x_max * pixels)] += buckets[us];
        if (c.latency.histogram.overflow())
            per_pixel[int(pixels)] += c.latency.histogram.overflow();
        std::string points;
        double last_y = y_of(0);
        int last_px = -1;
        for (const auto& [px, n] : per_pixel) {
            double x = k_left + px, y = y_of(double(n));
            if (px > last_px + 1)
                points += fixed(k_left + last_px + 1) + "," + fixed(y_of(0)) + " " + fixed(x) +
                          "," + fixed(y_of(0)) + " ";
            else if (last_px >= 0)
                points += fixed(x) + "," + fixed(last_y) + " ";
            points += fixed(x) + "," + fixed(y) + " " + fixed(x + 1) + "," + fixed(y) + " ";
            last_y = y;
            last_px = px;
        }
        points += fixed(k_left + last_px + 1) + "," + fixed(y_of(0));
        const char* colour = k_colours[c.latency.idle == selftest::IdlePolicy::held ? 1 : 0];
        svg += "<polyline fill=\"none\" stroke=\"" + std::string(colour) +
               "\" stroke-width=\"1.5\" points=\"" + points + "\"/>\n";
    }
    if (threshold <= x_max) {
        double x = x_of(threshold);
        svg += "<line x1=\"" + fixed(x) + "\" x2=\"" + fixed(x) + "\" y1=\"" + fixed(k_top) +
               "\" y2=\"" + fixed(k_height - k_bottom) + "\" class=\"limit\"/>\n<text x=\"" +
               fixed(x + 4) + "\" y=\"" + fixed(k_top + 12) + "\" class=\"tick\">limit " +
               std::to_string(threshold) + " µs</text>\n";
    } else {
        svg += "<text x=\"" + fixed(k_width - k_right) + "\" y=\"" + fixed(k_top + 12) +
               "\" class=\"tick\" text-anchor=\"end\">limit " + std::to_string(threshold) +
               " µs, far right of every sample</text>\n";
    }
    return svg + "</svg>\n";
}

// The worst wake-up of each earlier run with the same CPU, idle policy and parameters,
// and this one's, as a line: how the machine changed between runs measured alike.
std::string trend_svg(const std::vector<selftest::HistoryEntry>& runs) {
    double most = 1;
    for (const selftest::HistoryEntry& e : runs)
        most = std::max(most, e.max_us);
    most = nice_ceiling(most * 1.05);
    const double plot_w = k_width - k_left - k_right, plot_h = 160 - k_top - 28;
    auto x_of = [&](std::size_t i) {
        return k_left + (runs.size() > 1 ? plot_w * double(i) / double(runs.size() - 1) : 0);
    };
    auto y_of = [&](double us) { return k_top + plot_h * (1 - us / most); };
    std::string svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 " +
                      fixed(k_width, 0) + " 160\" width=\"" + fixed(k_width, 0) +
                      "\" height=\"160\" role=\"img\">\n<title>trend</title>\n";
    for (int i = 0; i <= 2; ++i) {
        double us = most * i / 2, y = y_of(us);
        svg += "<line x1=\"" + fixed(k_left) + "\" x2=\"" + fixed(k_width - k_right) + "\" y1=\"" +
               fixed(y) + "\" y2=\"" + fixed(y) + "\" class=\"grid\"/>\n<text x=\"" +
               fixed(k_left - 6) + "\" y=\"" + fixed(y + 4) +
               "\" class=\"tick\" text-anchor=\"end\">" + fixed(us, 0) + "</text>\n";
    }
    std::string worst, p99;
    for (std::size_t i = 0; i < runs.size(); ++i) {
        worst += fixed(x_of(i)) + "," + fixed(y_of(runs[i].max_us)) + " ";
        p99 += fixed(x_of(i)) + "," + fixed(y_of(runs[i].p99_us)) + " ";
        svg += "<circle cx=\"" + fixed(x_of(i)) + "\" cy=\"" + fixed(y_of(runs[i].max_us)) +
               "\" r=\"3\" fill=\"" + (runs[i].passed ? "#1f5fa8" : "#c0392b") + "\"/>\n";
    }
    svg += "<polyline fill=\"none\" stroke=\"#1f5fa8\" points=\"" + worst +
           "\"/>\n<polyline fill=\"none\" stroke=\"#888\" stroke-dasharray=\"4 3\" points=\"" +
           p99 + "\"/>\n<text x=\"" + fixed(k_left) + "\" y=\"154\" class=\"tick\">" +
           esc(runs.front().started_at) + "</text>\n<text x=\"" + fixed(k_width - k_right) +
           "\" y=\"154\" class=\"tick\" text-anchor=\"end\">" + esc(runs.back().started_at) +
           "</text>\n";
    return svg + "</svg>\n";
}

// Why a traced core's worst wake-up was late: a table of its parts, each with its share.
std::string cause_html(const selftest::CoreReport& c) {
    const selftest::WakeupCause& w = *c.latency.cause;
    const auto [what, ns] = w.main_part();
    std::string out = "<p><b>Why " + esc(cause_heading(c)) + "</b>: mostly " + esc(what) + ", " +
                      fixed(double(ns) / 1000.0) + " µs (" + fixed(share(w, ns), 0) + " %).</p>\n";
    const std::vector<CauseRow> rows = cause_rows(w);
    if (rows.empty())
        return out;
    out += "<table>\n<tr><th class=\"l\">part</th><th>µs</th><th>share</th><th "
           "class=\"l\">what</th></tr>\n";
    for (const CauseRow& row : rows)
        out += "<tr><td class=\"l\">" + esc(row.label) + "</td><td>" +
               fixed(double(row.ns) / 1000.0) + "</td><td>" + fixed(share(w, row.ns), 0) +
               " %</td><td class=\"l\">" + esc(row.note) + "</td></tr>\n";
    out += "</table>\n";
    if (!w.stack.empty()) {
        std::string frames;
        for (const std::string& f : w.stack)
            frames += (frames.empty() ? "" : " &lt;- ") + esc(f);
        out += "<p>Kernel stack at the timer's IRQ: <code>" + frames + "</code></p>\n";
    }
    return out;
}

// The run as a time line, in seconds from its start: a row for the audio test with a red
// mark at each underrun, and a row per core and idle policy with a mark at each second it
// went over its limit or missed wake-ups. The idle policies are measured one after the
// other (default first), so a later policy's seconds start after the earlier ones'.
std::string timeline_svg(const selftest::SelftestReport& r) {
    const selftest::AudioReport& audio = *r.audio;
    const double policy_s = r.parameters.duration_ms / 1000.0;
    auto offset = [&](const selftest::CoreReport& c) {
        double before = 0;
        if (c.latency.idle == selftest::IdlePolicy::held)
            for (const selftest::CoreReport& o : r.cores)
                if (o.latency.idle == selftest::IdlePolicy::system_default) {
                    before = policy_s;
                    break;
                }
        return before;
    };
    double end = std::max(1.0, audio.result.played_s);
    for (const selftest::CoreReport& c : r.cores)
        end = std::max(end, offset(c) + c.latency.measured_s);
    end = nice_ceiling(end);
    const double row = 18, top = k_top, left = 150;
    const double height = top + row * double(r.cores.size() + 1) + 40;
    const double plot_w = k_width - left - k_right;
    auto x_of = [&](double s) { return left + plot_w * std::min(s, end) / end; };
    std::string svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 " +
                      fixed(k_width, 0) + " " + fixed(height, 0) + "\" width=\"" +
                      fixed(k_width, 0) + "\" height=\"" + fixed(height, 0) +
                      "\" role=\"img\">\n<title>underruns and late seconds over the run</title>\n";
    const double bottom = top + row * double(r.cores.size() + 1);
    for (int i = 0; i <= 5; ++i) {
        const double s = end * i / 5, x = x_of(s);
        svg += "<line x1=\"" + fixed(x) + "\" x2=\"" + fixed(x) + "\" y1=\"" + fixed(top) +
               "\" y2=\"" + fixed(bottom) + "\" class=\"grid\"/>\n<text x=\"" + fixed(x) +
               "\" y=\"" + fixed(bottom + 16) + "\" class=\"tick\" text-anchor=\"" +
               (i == 5 ? "end" : "middle") + "\">" + fixed(s, s < 10 ? 1 : 0) + "</text>\n";
    }
    svg += "<text x=\"" + fixed(left + plot_w / 2) + "\" y=\"" + fixed(height - 6) +
           "\" class=\"axis\" text-anchor=\"middle\">seconds into the run</text>\n";
    auto label = [&](double y, const std::string& text) {
        return "<text x=\"" + fixed(left - 6) + "\" y=\"" + fixed(y + 4) +
               "\" class=\"tick\" text-anchor=\"end\">" + esc(text) + "</text>\n";
    };
    double y = top + row / 2;
    svg += label(y, "audio underruns") + "<line x1=\"" + fixed(left) + "\" x2=\"" +
           fixed(x_of(audio.result.played_s)) + "\" y1=\"" + fixed(y) + "\" y2=\"" + fixed(y) +
           "\" stroke=\"#1f5fa8\" stroke-width=\"2\"/>\n";
    for (const selftest::Underrun& u : audio.result.underrun_list)
        svg += "<line x1=\"" + fixed(x_of(u.at_s)) + "\" x2=\"" + fixed(x_of(u.at_s)) + "\" y1=\"" +
               fixed(y - 7) + "\" y2=\"" + fixed(y + 7) +
               "\" stroke=\"#c0392b\" stroke-width=\"2\"/>\n";
    for (const selftest::CoreReport& c : r.cores) {
        y += row;
        const double from = offset(c);
        svg += label(y, "CPU " + std::to_string(c.latency.cpu) + ", idle " +
                            std::string(selftest::to_string(c.latency.idle))) +
               "<line x1=\"" + fixed(x_of(from)) + "\" x2=\"" +
               fixed(x_of(from + c.latency.measured_s)) + "\" y1=\"" + fixed(y) + "\" y2=\"" +
               fixed(y) + "\" class=\"grid\" stroke-width=\"2\"/>\n";
        for (const selftest::LateSecond& l : c.late_seconds)
            svg += "<rect x=\"" + fixed(x_of(from + l.at_s)) + "\" y=\"" + fixed(y - 5) +
                   "\" width=\"" +
                   fixed(std::max(1.0, x_of(from + l.at_s + 1) - x_of(from + l.at_s))) +
                   "\" height=\"10\" fill=\"#d9730d\"/>\n";
    }
    return svg + "</svg>\n";
}

// The least audio left in the buffer, second by second (AudioSecond.min_left_ms), from 0
// to the whole buffer, with the headroom a pass needs as a dashed line and the seconds
// with underruns in red. Seconds not kept (a long run keeps the worst) and seconds with no
// measure break the line.
std::string headroom_svg(const selftest::AudioReport& audio) {
    const selftest::AudioResult& a = audio.result;
    const double buffer_ms = a.ms_of(a.buffer_frames);
    double top_ms = std::max(buffer_ms, audio.min_headroom_ms);
    for (const selftest::AudioSecond& s : a.seconds)
        top_ms = std::max(top_ms, s.min_left_ms);
    top_ms = nice_ceiling(std::max(top_ms, 1.0));
    double end = std::max(1.0, a.played_s);
    for (const selftest::AudioSecond& s : a.seconds)
        end = std::max(end, s.at_s + 1.0);
    end = nice_ceiling(end);
    const double plot_w = k_width - k_left - k_right, plot_h = 180 - k_top - k_bottom;
    auto x_of = [&](double s) { return k_left + plot_w * std::min(s, end) / end; };
    auto y_of = [&](double ms) { return k_top + plot_h * (1 - std::min(ms, top_ms) / top_ms); };
    std::string svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 " +
                      fixed(k_width, 0) + " 180\" width=\"" + fixed(k_width, 0) +
                      "\" height=\"180\" role=\"img\">\n<title>audio left in the buffer over "
                      "time</title>\n";
    for (int i = 0; i <= 2; ++i) {
        const double ms = top_ms * i / 2, yy = y_of(ms);
        svg += "<line x1=\"" + fixed(k_left) + "\" x2=\"" + fixed(k_width - k_right) + "\" y1=\"" +
               fixed(yy) + "\" y2=\"" + fixed(yy) + "\" class=\"grid\"/>\n<text x=\"" +
               fixed(k_left - 6) + "\" y=\"" + fixed(yy + 4) +
               "\" class=\"tick\" text-anchor=\"end\">" + fixed(ms, 0) + "</text>\n";
    }
    for (int i = 0; i <= 5; ++i) {
        const double s = end * i / 5;
        svg += "<text x=\"" + fixed(x_of(s)) + "\" y=\"" + fixed(180 - k_bottom + 16) +
               "\" class=\"tick\" text-anchor=\"" + (i == 5 ? "end" : "middle") + "\">" +
               fixed(s, s < 10 ? 1 : 0) + "</text>\n";
    }
    svg += "<text x=\"" + fixed(k_left + plot_w / 2) +
           "\" y=\"174\" class=\"axis\" text-anchor=\"middle\">seconds of playback</text>\n"
           "<text x=\"14\" y=\"" +
           fixed(k_top + plot_h / 2) +
           "\" class=\"axis\" text-anchor=\"middle\" transform=\"rotate(-90 14 " +
           fixed(k_top + plot_h / 2) + ")\">ms left</text>\n";
    // one step line per run of consecutive measured seconds
    std::string points;
    long last = -2;
    auto flush = [&] {
        if (!points.empty())
            svg += "<polyline fill=\"none\" stroke=\"#1f5fa8\" stroke-width=\"1.5\" points=\"" +
                   points + "\"/>\n";
        points.clear();
    };
    for (const selftest::AudioSecond& s : a.seconds) {
        if (s.min_left_ms < 0 || long(s.at_s) != last + 1)
            flush();
        if (s.min_left_ms >= 0) {
            points += fixed(x_of(s.at_s)) + "," + fixed(y_of(s.min_left_ms)) + " " +
                      fixed(x_of(s.at_s + 1.0)) + "," + fixed(y_of(s.min_left_ms)) + " ";
            last = long(s.at_s);
        } else {
            last = -2;
        }
    }
    flush();
    for (const selftest::AudioSecond& s : a.seconds)
        if (s.underruns > 0)
            svg += "<circle cx=\"" + fixed(x_of(s.at_s + 0.5)) + "\" cy=\"" + fixed(y_of(0)) +
                   "\" r=\"3.5\" fill=\"#c0392b\"/>\n";
    const double limit = y_of(audio.min_headroom_ms);
    svg += "<line x1=\"" + fixed(k_left) + "\" x2=\"" + fixed(k_width - k_right) + "\" y1=\"" +
           fixed(limit) + "\" y2=\"" + fixed(limit) + "\" class=\"limit\"/>\n<text x=\"" +
           fixed(k_width - k_right) + "\" y=\"" + fixed(limit - 4) +
           "\" class=\"tick\" text-anchor=\"end\">headroom needed " + fixed(audio.min_headroom_ms) +
           " ms</text>\n";
    return svg + "</svg>\n";
}

// A line per underrun whose running threads were looked at: what could take the CPU from
// the player, against its own policy and priority.
std::string what_ran_html(const selftest::AudioResult& a) {
    std::string items;
    for (const selftest::Underrun& u : a.underrun_list)
        if (u.running)
            items += "<li>" + esc(what_ran_text(u, a)) + "</li>\n";
    if (items.empty())
        return "";
    return "<h3>What ran at the underruns</h3>\n<p>The other threads that were real-time or "
           "runnable on the player's CPUs when each of the first " +
           std::to_string(selftest::k_max_underruns_looked_at) +
           " underruns was seen (within about " +
           std::to_string(selftest::k_underrun_poll.count()) +
           " ms of it), the highest priority first.</p>\n<ul>\n" + items + "</ul>\n";
}

// The audio test: what a listener would have heard, the device and what it took, when the
// underruns came beside the cores' late seconds, and the headroom over time.
std::string audio_html(const selftest::SelftestReport& r) {
    const selftest::AudioReport& audio = *r.audio;
    const selftest::AudioResult& a = audio.result;
    auto row = [](const std::string& head, const std::string& value) {
        return "<tr><th class=\"l\">" + head + "</th><td class=\"l\">" + value + "</td></tr>\n";
    };
    auto size = [&](unsigned frames) {
        return std::to_string(frames) + " frames (" + fixed(a.ms_of(frames)) + " ms)";
    };
    std::string out =
        "<h2>Audio</h2>\n<p>" + esc(audio_verdict_text(audio)) + ": " +
        (audio.passed ? std::string("pass") : "<span class=\"fail\">FAIL</span>") +
        ".</p>\n<table>\n" +
        row("device", esc(a.device) + (a.card.empty() ? "" : " (card " + esc(a.card) + ")"));
    if (a.loopback)
        out += row("path", "a loopback card: this measures the scheduling, not the DAC's own path");
    if (!a.through.empty())
        out += row("path", "through " + esc(a.through) + "'s ALSA plugin, at the server's quantum");
    out +=
        row("taken", std::to_string(a.rate) + " Hz, " + esc(a.format) + ", " +
                         std::to_string(a.channels) + " channels; period " + size(a.period_frames) +
                         ", buffer " + size(a.buffer_frames)) +
        row("thread", esc(core_policy(a)) +
                          (a.cpus.empty() ? ", not pinned" : " on CPUs " + esc(a.cpus)) +
                          (a.memory_locked ? ", memory locked" : ", memory not locked") + "; " +
                          fixed(a.cpu_ms) + " ms of CPU time") +
        row("played", fixed(a.played_s, 1) + " s, " + std::to_string(a.underruns) + " underruns, " +
                          (a.min_left_ms < 0 ? std::string("no measure of what was left")
                                             : "at worst " + fixed(a.min_left_ms) + " ms left, " +
                                                   fixed(a.min_left_at_s, 2) + " s in") +
                          "; the longest gap between two writes " + fixed(a.longest_gap_ms) +
                          " ms; recovering took " + fixed(a.recovery_ms_total) + " ms") +
        row("a pass needs", "0 underruns and at least " + fixed(audio.min_headroom_ms) + " ms (" +
                                std::to_string(audio.min_headroom_percent) +
                                " % of the buffer) left at every write");
    if (a.server_xruns)
        out += row("server xruns", std::to_string(*a.server_xruns));
    if (!a.stopped_because.empty())
        out += row("stopped", esc(a.stopped_because));
    out += "</table>\n<h3>Underruns beside the latency</h3>\n" + timeline_svg(r) +
           "<p>Red: an underrun (the player's buffer ran empty: a dropout). Orange: a second in "
           "which a core went over its limit or missed wake-ups. The idle policies are "
           "measured one after the other, the audio plays through them all.</p>\n" +
           what_ran_html(a) + "<h3>Headroom over time</h3>\n" + headroom_svg(audio) +
           "<p>The least audio left in the buffer at a write, second by second; the dashed line "
           "is the headroom a pass needs";
    if (audio.seconds_total > a.seconds.size())
        out += "; the report keeps the " + std::to_string(a.seconds.size()) + " worst of " +
               std::to_string(audio.seconds_total) + " seconds, so the line has gaps";
    return out + ".</p>\n";
}

} // namespace

std::string selftest_html(const selftest::SelftestReport& r,
                          const std::vector<selftest::HistoryEntry>& history) {
    const selftest::RunParameters& p = r.parameters;
    const std::string title = "rtprov self-test " + r.started_at;
    std::string out =
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" +
        esc(title) +
        "</title>\n<style>\n"
        "body{font-family:sans-serif;max-width:60em;margin:1em auto;padding:0 1em;color:#222}\n"
        "table{border-collapse:collapse;margin:.5em 0}td,th{padding:.15em .6em;text-align:right;"
        "border-bottom:1px solid #ddd}th{background:#f3f3f3}td.l,th.l{text-align:left}\n"
        ".verdict{font-size:1.2em;padding:.6em;border-left:.4em solid #1f5fa8;background:#eef4fb}"
        "\n.fail{color:#c0392b;font-weight:bold}.grid{stroke:#e3e3e3}.limit{stroke:#c0392b;"
        "stroke-dasharray:5 3;stroke-width:1.5}.tick{font-size:11px;fill:#555}.axis{font-size:"
        "12px;fill:#333}\n.key{display:inline-block;width:1.5em;height:.3em;vertical-align:"
        "middle;margin:0 .3em}\n</style>\n</head>\n<body>\n<h1>" +
        esc(title) + "</h1>\n<p class=\"verdict\">" + esc(verdict_text(r)) + "</p>\n<p>Result: " +
        (r.passed ? std::string("<b>passed</b>")
                  : std::string("<span class=\"fail\">did not "
                                "pass</span>")) +
        ".</p>\n<table>\n<tr><th class=\"l\">profile</th><td class=\"l\">" +
        esc(r.profile.empty() ? "none applied" : r.profile) +
        "</td></tr>\n<tr><th class=\"l\">kernel</th><td class=\"l\">" + esc(r.kernel_release) +
        " (" + esc(r.kernel.version) +
        ")</td></tr>\n<tr><th class=\"l\">preemption</th><td class=\"l\">" +
        (r.kernel.preempt_rt ? "PREEMPT_RT" : "not PREEMPT_RT") +
        "</td></tr>\n<tr><th class=\"l\">RT_PUSH_IPI</th><td class=\"l\">" +
        esc(std::string(selftest::to_string(r.kernel.push_ipi))) +
        "</td></tr>\n<tr><th class=\"l\">measured</th><td class=\"l\">" +
        (r.interrupted ? std::string("interrupted, ")
         : !r.complete ? std::string("not complete (written while the run went on), ")
                       : std::string()) +
        fixed(p.duration_ms / 1000.0, 0) + " s per idle policy, a wake-up every " +
        std::to_string(p.interval_us) + " µs at SCHED_FIFO " + std::to_string(p.priority) + ", " +
        esc(p.load_cpus.empty() ? "no load" : "load on CPUs " + p.load_cpus) +
        "</td></tr>\n<tr><th class=\"l\">measured by</th><td class=\"l\">" +
        (r.trace.traced ? std::string("the kernel's timerlat tracer (--trace)")
                        : "rtprov's own threads" +
                              (r.trace.asked ? "; not traced: " + esc(r.trace.not_traced_because)
                                             : std::string())) +
        (r.trace.lost_events ? "; the trace lost " + std::to_string(r.trace.lost_events) +
                                   " events, so a cause may miss some of what was in the way"
                             : std::string()) +
        (r.trace.unparsed_lines
             ? "; " + std::to_string(r.trace.unparsed_lines) +
                   " trace lines could not be read, so a cause may miss some of what was in "
                   "the way"
             : std::string()) +
        "</td></tr>\n</table>\n<h2>Wake-up latency</h2>\n<table>\n<tr><th>CPU</th><th "
        "class=\"l\">role</th><th class=\"l\">idle</th><th>samples</th><th>missed</th><th>min"
        "</th><th>avg</th><th>p99</th><th>p99.9</th><th>max</th><th>limit</th><th "
        "class=\"l\">result</th></tr>\n";
    for (const selftest::CoreReport& c : r.cores) {
        const selftest::CoreLatency& l = c.latency;
        out += "<tr><td>" + std::to_string(l.cpu) + "</td><td class=\"l\">" +
               std::string(selftest::to_string(c.role)) + "</td><td class=\"l\">" +
               std::string(selftest::to_string(l.idle)) + "</td><td>" + std::to_string(l.cycles) +
               "</td><td>" + std::to_string(l.overruns) + " (" + fixed(c.missed_percent(), 2) +
               " %)</td><td>" + fixed(l.min_us) + "</td><td>" + fixed(l.avg_us) + "</td><td>" +
               fixed(l.p99_us) + "</td><td>" + fixed(l.p999_us) + "</td><td>" + fixed(l.max_us) +
               "</td><td>" + std::to_string(c.threshold_us) + "</td><td class=\"l\">" +
               (c.passed ? "pass" : "<span class=\"fail\">FAIL</span>") + "</td></tr>\n";
    }
    out += "</table>\n<p>Latencies in µs: how long after its planned moment the measuring "
           "thread ran. Missed: planned wake-ups skipped because one came a whole interval "
           "late. <span class=\"key\" style=\"background:" +
           std::string(k_colours[0]) +
           "\"></span>idle default (deep idle allowed, as the box runs) <span class=\"key\" "
           "style=\"background:" +
           k_colours[1] +
           "\"></span>idle held (/dev/cpu_dma_latency at 0, as cyclictest runs)</p>\n";
    // per CPU, its idle policies overlaid
    std::map<unsigned, std::vector<const selftest::CoreReport*>> by_cpu;
    for (const selftest::CoreReport& c : r.cores)
        by_cpu[c.latency.cpu].push_back(&c);
    for (const auto& [cpu, series] : by_cpu) {
        out += "<h3>CPU " + std::to_string(cpu) + " (" +
               std::string(selftest::to_string(series.front()->role)) + ")</h3>\n" +
               histogram_svg(series);
        for (const selftest::CoreReport* c : series)
            if (!c->late_seconds.empty())
                out += "<p>" + esc(late_text(*c)) + "</p>\n";
        for (const selftest::CoreReport* c : series)
            if (c->latency.cause)
                out += cause_html(*c);
        for (const selftest::CoreReport* c : series)
            if (c->latency.histogram.overflow())
                out += "<p>idle " + std::string(selftest::to_string(c->latency.idle)) + ": " +
                       std::to_string(c->latency.histogram.overflow()) + " samples above " +
                       std::to_string(c->latency.histogram.limit_us()) +
                       " µs, drawn at the right edge</p>\n";
    }
    if (!r.players.empty()) {
        out += "<h2>Players' buffers</h2>\n<table>\n<tr><th>player</th><th>runs with</th><th>set "
               "in</th><th>holds the margin</th><th>the measurement supports</th><th>the "
               "setting</th></tr>\n";
        for (const selftest::PlayerAdvice& pa : r.players)
            out +=
                "<tr><td>" + esc(pa.name) + "</td><td>" +
                (pa.now.empty() ? "not known: " + esc(pa.problem)
                                : esc(pa.now) + (pa.now_default ? " (its default)" : "")) +
                "</td><td>" + esc(pa.where) + "</td><td>" +
                (pa.now_holds ? (*pa.now_holds ? "yes" : "no") : "not known") + "</td><td>" +
                (pa.supports.empty() ? "none rtprov tries"
                                     : esc(pa.supports) + " (deadline " + fixed(pa.deadline_ms, 2) +
                                           " ms, " + fixed(pa.need_ms, 2) + " ms asked)") +
                "</td><td>" + esc(pa.setting) + "</td></tr>\n";
        out += "</table>\n";
    }
    if (r.pi_probe) {
        const selftest::PiProbeResult& pr = r.pi_probe->result;
        out += "<h2>Priority-inheritance probe</h2>\n<p>The SCHED_RR thread waited " +
               fixed(pr.worst_wait_us) + " µs at worst for a lock held by SCHED_OTHER workers (" +
               fixed(pr.avg_wait_us) + " µs on average, limit " + fixed(r.pi_probe->limit_us, 0) +
               " µs); " + std::to_string(pr.starved.size()) +
               " window(s) showed a thread runnable but not running: " +
               (r.pi_probe->passed ? "pass" : "<span class=\"fail\">FAIL</span>") + ".</p>\n";
    }
    if (r.audio)
        out += audio_html(r);
    // the trend: earlier runs measured the same way, and this one
    std::vector<selftest::HistoryEntry> now = selftest::history_entries(r);
    std::string trends;
    for (const selftest::HistoryEntry& e : now) {
        std::vector<selftest::HistoryEntry> runs;
        for (const selftest::HistoryEntry& h : history)
            if (h.parameters == e.parameters && h.audio.has_value() == e.audio.has_value() &&
                h.cpu == e.cpu && h.idle == e.idle)
                runs.push_back(h);
        if (e.audio) {
            if (runs.empty())
                continue;
            runs.push_back(e);
            trends += "<h3>Audio: " + std::to_string(runs.size()) +
                      " runs</h3>\n<table>\n<tr><th class=\"l\">run</th><th>underruns</th>"
                      "<th>least left (ms)</th><th>longest gap (ms)</th><th class=\"l\">result"
                      "</th></tr>\n";
            for (const selftest::HistoryEntry& h : runs)
                trends +=
                    "<tr><td class=\"l\">" + esc(h.started_at) + "</td><td>" +
                    std::to_string(h.audio->underruns) + "</td><td>" +
                    (h.audio->min_left_ms < 0 ? std::string("none") : fixed(h.audio->min_left_ms)) +
                    "</td><td>" + fixed(h.audio->longest_gap_ms) + "</td><td class=\"l\">" +
                    (h.passed ? "pass" : "<span class=\"fail\">FAIL</span>") + "</td></tr>\n";
            trends += "</table>\n";
            continue;
        }
        if (runs.empty())
            continue;
        runs.push_back(e);
        trends += "<h3>CPU " + std::to_string(e.cpu) + ", idle " + esc(e.idle) + ": " +
                  std::to_string(runs.size()) + " runs</h3>\n" + trend_svg(runs) +
                  "<table>\n<tr><th class=\"l\">run</th><th>avg</th><th>p99</th><th>max</th>"
                  "<th class=\"l\">result</th></tr>\n";
        for (const selftest::HistoryEntry& h : runs)
            trends += "<tr><td class=\"l\">" + esc(h.started_at) + "</td><td>" + fixed(h.avg_us) +
                      "</td><td>" + fixed(h.p99_us) + "</td><td>" + fixed(h.max_us) +
                      "</td><td class=\"l\">" +
                      (h.passed ? "pass" : "<span class=\"fail\">FAIL</span>") + "</td></tr>\n";
        trends += "</table>\n";
    }
    out += "<h2>Trend</h2>\n" +
           (trends.empty() ? "<p>No earlier run was measured the same way (CPU, idle policy, "
                             "duration, interval, priority, load), so there is no trend yet.</p>\n"
                           : "<p>The worst wake-up of each run (dots, red: did not pass) and "
                             "its p99 (dashed), in µs.</p>\n" +
                                 trends);
    return out + "<p><small>Written by rtprov selftest.</small></p>\n</body>\n</html>\n";
}

} // namespace rtprov::cli
