// SPDX-License-Identifier: Apache-2.0
#include "provisioner/cli/selftest_render.hpp"

#include "provisioner/cli/json.hpp"
#include "provisioner/cli/render.hpp"
#include "provisioner/core/buffer_rule.hpp"
#include "provisioner/core/cpu_list.hpp"
#include "provisioner/core/error.hpp"
#include "provisioner/core/sched_policy.hpp"
#include "provisioner/core/text.hpp"
#include "provisioner/selftest/underrun_watch.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <tuple>

namespace rtprov::cli {

namespace {

std::string pad(std::string text, std::size_t width, bool right = true) {
    if (text.size() >= width)
        return text;
    std::string fill(width - text.size(), ' ');
    return right ? fill + text : text + fill;
}

std::string kernel_line(const selftest::SelftestReport& r) {
    std::string push = std::string(selftest::to_string(r.kernel.push_ipi));
    return "kernel " + core::one_line(r.kernel_release) + " (" + core::one_line(r.kernel.version) +
           "), " + (r.kernel.preempt_rt ? "PREEMPT_RT" : "not PREEMPT_RT") + ", RT_PUSH_IPI " +
           push + "\n";
}

// Why a probe that did not pass may have starved, saying which fact the hint rests on:
// RT_PUSH_IPI read as off, or not readable at all. "" when it was read as on.
std::string push_ipi_hint(selftest::PushIpiState state) {
    const std::string path = "/sys/kernel/debug/sched/features";
    switch (state) {
    case selftest::PushIpiState::on:
        break;
    case selftest::PushIpiState::off:
        return "  RT_PUSH_IPI is off (read from " + path +
               "), the condition of the priority-boost starvation: enable "
               "tuning.rt_push_ipi_guard in the profile, or run 'echo RT_PUSH_IPI > " +
               path + "'\n";
    case selftest::PushIpiState::unknown:
        return "  RT_PUSH_IPI is not the cause: '" + path +
               "' lists neither RT_PUSH_IPI nor NO_RT_PUSH_IPI, so this kernel has no push IPI\n";
    case selftest::PushIpiState::unreadable:
        return "  RT_PUSH_IPI could not be checked: '" + path +
               "' cannot be read (debugfs is not mounted, or the kernel has no "
               "CONFIG_SCHED_DEBUG); mount debugfs ('mount -t debugfs debugfs "
               "/sys/kernel/debug') and rerun 'rtprov selftest' to see whether it is off\n";
    }
    return "";
}

// The ranges of the terminal histogram, by their upper bound in µs (0: above the last).
constexpr unsigned k_ranges[] = {10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 0};

std::string range_label(unsigned upper) {
    if (upper == 0)
        return ">10k";
    return "≤" + (upper >= 1000 ? std::to_string(upper / 1000) + "k" : std::to_string(upper));
}

// Display width of a label: '≤' is one column in two bytes.
std::size_t columns(const std::string& text) {
    std::size_t n = 0;
    for (char c : text)
        n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    return n;
}

// One line per core and idle policy: the samples in each range as a bar from ▁ to █ on a
// log scale (· for none), so a tail of a few samples shows beside millions.
std::string histogram_text(const selftest::SelftestReport& r) {
    static const char* const k_bars[] = {"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
    std::string out = "histogram (samples per range of µs, log scale):\n" + std::string(25, ' ');
    for (unsigned upper : k_ranges)
        out += " " +
               pad(range_label(upper), 4 + range_label(upper).size() - columns(range_label(upper)));
    out += "\n";
    for (const selftest::CoreReport& c : r.cores) {
        const selftest::LatencyHistogram& h = c.latency.histogram;
        std::vector<std::uint64_t> counts;
        std::size_t us = 0;
        for (unsigned upper : k_ranges) {
            std::uint64_t n = 0;
            const std::size_t end = upper == 0 ? h.buckets().size() : upper + 1;
            for (; us < end && us < h.buckets().size(); ++us)
                n += h.buckets()[us];
            if (upper == 0)
                n += h.overflow();
            counts.push_back(n);
        }
        const std::uint64_t most = *std::max_element(counts.begin(), counts.end());
        out += pad(std::to_string(c.latency.cpu), 3) + "  " +
               pad(std::string(selftest::to_string(c.role)), 12, false) + " " +
               pad(std::string(selftest::to_string(c.latency.idle)), 7, false);
        for (std::uint64_t n : counts) {
            std::string cell = "·";
            if (n > 0) {
                double level = most > 1 ? std::log10(double(n)) / std::log10(double(most)) : 1;
                cell = k_bars[int(std::lround(level * 7))];
            }
            out += "    " + cell;
        }
        out += "\n";
    }
    return out;
}

std::string us(std::int64_t ns) {
    char buffer[40];
    std::snprintf(buffer, sizeof buffer, "%.1f", static_cast<double>(ns) / 1000.0);
    return buffer;
}

// Why a core's worst wake-up was late, as the trace split it: the part that weighed most,
// then each part in the order the CPU went through them.
std::string cause_text(const selftest::CoreReport& c) {
    const selftest::WakeupCause& w = *c.latency.cause;
    std::string out = "why " + cause_heading(c) + ":\n";
    const auto [what, ns] = w.main_part();
    out += "  mostly " + what + ": " + us(ns) + " µs (" + fixed(share(w, ns), 0) + " %)\n";
    for (const CauseRow& row : cause_rows(w))
        out += "  " + pad(row.label, 24, false) + pad(us(row.ns), 10) + " µs" +
               (row.note.empty() ? "" : "  " + row.note) + "\n";
    if (w.interference_left_out > 0)
        out += "  (and " + std::to_string(w.interference_left_out) +
               " runs of others in the way, counted in the sums)\n";
    if (!w.stack.empty()) {
        out += "  kernel stack at the timer's IRQ:";
        for (std::size_t i = 0; i < w.stack.size() && i < 12; ++i)
            out += (i ? " <- " : " ") + core::one_line(w.stack[i]);
        out += w.stack.size() > 12 ? " ...\n" : "\n";
    }
    return out;
}

// The trace a run asked for: how it measured, or why it could not, and what it lost.
std::string trace_text(const selftest::SelftestReport& r) {
    const selftest::TraceReport& t = r.trace;
    if (!t.asked)
        return "";
    if (!t.traced)
        return "not traced: " + t.not_traced_because +
               "; measured with rtprov's own threads, so no cause is named\n";
    std::string out;
    const selftest::CoreReport* worst = nullptr;
    bool shown = false;
    for (const selftest::CoreReport& c : r.cores) {
        if (!c.latency.cause)
            continue;
        if (!c.passed) {
            out += cause_text(c);
            shown = true;
        }
        if (!worst || c.latency.max_us > worst->latency.max_us)
            worst = &c;
    }
    if (!shown && worst)
        out += "every traced core stayed within its limit; the worst wake-up of all:\n" +
               cause_text(*worst);
    if (t.lost_events > 0)
        out += "the trace lost " + std::to_string(t.lost_events) +
               " events (rtprov read too slowly): a cause may miss some of what was in the "
               "way, and those wake-ups are not counted\n";
    if (t.unparsed_lines > 0)
        out += std::to_string(t.unparsed_lines) +
               " trace lines could not be read: a cause may miss some of what was in the way, "
               "and those wake-ups are not counted\n";
    if (!t.kept_trace.empty())
        out += "the trace's last lines before the stop are kept in " + t.kept_trace + "\n";
    return out;
}

// Cores measured under both idle policies whose worst wake-up was far later with deep
// idle allowed: the runs differ only in that, which is the fact the hint rests on.
std::string idle_hint(const selftest::SelftestReport& r) {
    std::string out;
    for (const selftest::CoreReport& a : r.cores) {
        if (a.latency.idle != selftest::IdlePolicy::system_default || a.latency.cycles == 0)
            continue;
        for (const selftest::CoreReport& b : r.cores)
            if (b.latency.idle == selftest::IdlePolicy::held && b.latency.cpu == a.latency.cpu &&
                b.latency.cycles > 0 && a.latency.max_us > 2 * b.latency.max_us &&
                a.latency.max_us > a.threshold_us)
                out += "deep idle: CPU " + std::to_string(a.latency.cpu) + " woke up to " +
                       fixed(a.latency.max_us, 0) + " µs late with deep idle allowed and " +
                       fixed(b.latency.max_us, 0) +
                       " µs with /dev/cpu_dma_latency held at 0, the only difference between "
                       "the two runs: the exit from deep idle costs it; "
                       "tuning.hold_cpu_dma_latency holds it at 0 (at a cost in idle power)\n";
    }
    return out;
}

} // namespace

std::string fixed(double value, int decimals) {
    char buffer[40];
    std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
    return buffer;
}

std::string cause_heading(const selftest::CoreReport& c) {
    const selftest::WakeupCause& w = *c.latency.cause;
    return "CPU " + std::to_string(c.latency.cpu) + " (" +
           std::string(selftest::to_string(c.role)) + ", idle " +
           std::string(selftest::to_string(c.latency.idle)) + ") woke " +
           fixed(double(w.thread_latency_ns) / 1000.0) + " µs late, " + fixed(w.at_s, 3) +
           " s into the run (timerlat activation #" + std::to_string(w.activation) + ")";
}

double share(const selftest::WakeupCause& w, std::int64_t ns) {
    return w.thread_latency_ns > 0 ? 100.0 * double(ns) / double(w.thread_latency_ns) : 0.0;
}

std::vector<CauseRow> cause_rows(const selftest::WakeupCause& w) {
    std::vector<CauseRow> rows;
    if (!w.split_known)
        return rows;
    const std::string before = w.idle_exit_ns > 0 ? "exit from idle"
                               : !w.earlier_irq.empty()
                                   ? "IRQ " + quoted(w.earlier_irq) + " was running"
                               : w.from_idle ? "the CPU was idle"
                                             : "";
    if (w.irq_handler_delay_ns >= 0)
        rows.push_back({"timer to its IRQ", w.irq_handler_delay_ns, before});
    rows.push_back({"IRQ latency", w.irq_latency_ns, "timer expiry until timerlat's handler ran"});
    rows.push_back({"the timer's IRQ", w.timer_irq_ns, ""});
    if (!w.blocking_thread.empty())
        rows.push_back({"blocking thread", w.blocking_ns,
                        w.from_idle
                            ? "the idle task " + quoted(w.blocking_thread) + ", leaving idle"
                            : quoted(w.blocking_thread) + ", running when the timer expired"});
    for (auto [kind, sum, label] :
         {std::tuple{selftest::Interference::Kind::irq, w.irq_ns, "IRQ interference"},
          {selftest::Interference::Kind::softirq, w.softirq_ns, "softirq interference"},
          {selftest::Interference::Kind::thread, w.thread_ns, "thread interference"},
          {selftest::Interference::Kind::nmi, w.nmi_ns, "NMI interference"}}) {
        if (sum == 0)
            continue;
        std::string names;
        for (const selftest::Interference& i : w.interference)
            if (i.kind == kind)
                names += (names.empty() ? "" : ", ") + quoted(i.name) + " " +
                         (i.count > 1 ? std::to_string(i.count) + " times " : "") +
                         fixed(double(i.duration_ns) / 1000.0);
        rows.push_back({label, sum, names});
    }
    rows.push_back(
        {"the rest", w.rest_ns(), "scheduling and the switch, or what the trace did not see"});
    rows.push_back({"thread latency", w.thread_latency_ns, "(100 %)"});
    return rows;
}

std::string late_text(const selftest::CoreReport& c) {
    if (c.late_seconds.empty())
        return "";
    const bool all = c.late_seconds.size() == c.late_seconds_total;
    std::string out =
        "CPU " + std::to_string(c.latency.cpu) + ", idle " +
        std::string(selftest::to_string(c.latency.idle)) + ": over its limit of " +
        std::to_string(c.threshold_us) + " µs or missing wake-ups in " +
        std::to_string(c.late_seconds_total) + " of " +
        std::to_string(static_cast<unsigned>(std::ceil(c.latency.measured_s))) + " s" +
        (all ? "" : " (the report keeps the worst " + std::to_string(c.late_seconds.size()) + ")") +
        ": at ";
    constexpr std::size_t k_shown = 5;
    for (std::size_t i = 0; i < c.late_seconds.size() && i < k_shown; ++i) {
        const selftest::LateSecond& l = c.late_seconds[i];
        out += std::string(i ? ", " : "") + std::to_string(l.at_s) + " s (" +
               std::to_string(l.max_us) + " µs" +
               (l.missed ? ", " + std::to_string(l.missed) + " missed" : std::string()) + ")";
    }
    if (c.late_seconds.size() > k_shown)
        out += " and " + std::to_string(c.late_seconds.size() - k_shown) + " more";
    return out;
}

namespace {

std::string verdict_of_measured(const selftest::SelftestReport& r);

// A length of audio in ms as people read it: whole ms from 100 ms, else one decimal.
std::string ms_text(double ms) {
    return fixed(ms, ms >= 100 ? 0 : 1) + " ms";
}

// Seconds played: whole from 10 s, else one decimal.
std::string s_text(double s) {
    return fixed(s, s >= 10 ? 0 : 1) + " s";
}

std::string server_name(const std::string& through) {
    return through == "pipewire" ? "PipeWire" : through == "jack" ? "JACK" : quoted(through);
}

std::string plural(std::uint64_t n, const std::string& one, const std::string& many) {
    return std::to_string(n) + " " + (n == 1 ? one : many);
}

// "the sound card" as the sentences name it: the device, and what kind of path it is.
std::string audio_where(const selftest::AudioResult& a) {
    return "to " + quoted(a.device) +
           (a.loopback           ? " (a loopback card: the scheduling, not a DAC's path)"
            : !a.through.empty() ? " (through " + server_name(a.through) + ")"
                                 : "");
}

// A thread's policy and priority as the kernel names them: "SCHED_RR 45", "SCHED_OTHER".
std::string policy_text(std::optional<core::SchedPolicy> policy, int priority) {
    if (!policy)
        return "a policy rtprov does not know";
    return core::kernel_name(*policy) +
           (core::has_static_priority(*policy) ? " " + std::to_string(priority) : "");
}

std::string state_text(char state) {
    switch (state) {
    case 'R':
        return "runnable";
    case 'S':
        return "sleeping";
    case 'D':
        return "waiting on I/O";
    default:
        break;
    }
    return "state " + std::string(1, state);
}

std::string running_thread_text(const selftest::RunningThread& t) {
    return core::one_line(t.comm) + " (pid " + std::to_string(t.pid) +
           (t.tid != t.pid ? ", thread " + std::to_string(t.tid) : "") + ", " +
           policy_text(t.policy, t.priority) + ", CPU " + std::to_string(t.cpu) + ", " +
           state_text(t.state) + ")";
}

} // namespace

std::string what_ran_text(const selftest::Underrun& u, const selftest::AudioResult& a) {
    if (!u.running)
        return "";
    const selftest::WhatRan& ran = *u.running;
    std::string out = "at " + fixed(u.at_s, 2) + " s, on CPUs " + core::one_line(ran.cpus) + ": ";
    if (ran.threads.empty())
        return out + "nothing else was real-time or runnable";
    const int player = selftest::run_rank(a.policy, a.priority);
    // the list is in rank order: one group above the player, one level with it, one below
    auto relation = [&](const selftest::RunningThread& t) {
        const int rank = selftest::run_rank(t.policy, t.priority);
        return rank > player ? 0 : rank == player ? 1 : 2;
    };
    const char* const words[] = {"above", "level with", "below"};
    bool first_group = true;
    for (std::size_t i = 0; i < ran.threads.size();) {
        const int group = relation(ran.threads[i]);
        std::string names;
        for (; i < ran.threads.size() && relation(ran.threads[i]) == group; ++i)
            names += (names.empty() ? "" : ", ") + running_thread_text(ran.threads[i]);
        out += (first_group ? "" : "; ") + names + " " + words[group] + " " +
               (first_group ? "the player's " + policy_text(a.policy, a.priority) : "it");
        first_group = false;
    }
    if (ran.more > 0)
        out += "; and " + std::to_string(ran.more) + " more";
    return out;
}

std::string audio_text(const selftest::AudioReport& report) {
    const selftest::AudioResult& a = report.result;
    std::string out = "audio test: " + quoted(a.device) +
                      (a.card.empty() ? "" : " (card " + quoted(a.card) + ")") + "\n";
    if (a.loopback)
        out += "  a loopback card: this measures the scheduling, not the DAC's own path\n";
    if (!a.through.empty())
        out += "  through " + server_name(a.through) +
               ": its ALSA plugin, at the server's quantum; the server plays to the card\n";
    auto size = [&](unsigned frames) {
        return std::to_string(frames) + " frames (" + fixed(a.ms_of(frames)) + " ms)";
    };
    out += "  taken: " + std::to_string(a.rate) + " Hz, " + core::one_line(a.format) + ", " +
           plural(a.channels, "channel", "channels") + "; period " + size(a.period_frames) +
           ", buffer " + size(a.buffer_frames) + "\n";
    out += "  thread: " + core::kernel_name(a.policy) +
           (core::has_static_priority(a.policy) ? " " + std::to_string(a.priority) : "") +
           (a.cpus.empty() ? ", not pinned" : " on CPUs " + core::one_line(a.cpus)) +
           (a.memory_locked ? ", memory locked" : ", memory not locked") + "; " + fixed(a.cpu_ms) +
           " ms of CPU time\n";
    out += "  " +
           (a.min_left_ms < 0 ? std::string("no write measured how much audio was left")
                              : "at worst " + ms_text(a.min_left_ms) + " of audio was left") +
           "; " + plural(a.underruns, "underrun", "underruns") + " in " + s_text(a.played_s) + "\n";
    if (!a.underrun_list.empty()) {
        constexpr std::size_t k_shown = 8;
        out += "  underruns at";
        for (std::size_t i = 0; i < a.underrun_list.size() && i < k_shown; ++i)
            out += (i ? ", " : " ") + fixed(a.underrun_list[i].at_s, 2) + " s";
        if (a.underruns > std::min(a.underrun_list.size(), k_shown))
            out += " and " +
                   std::to_string(a.underruns - std::min(a.underrun_list.size(), k_shown)) +
                   " more";
        out += "\n";
        for (const selftest::Underrun& u : a.underrun_list)
            if (u.running)
                out += "  " + what_ran_text(u, a) + "\n";
    }
    if (!report.passed && a.min_left_ms >= 0)
        out += "  the least was left " + fixed(a.min_left_at_s, 2) +
               " s in; the longest gap between two writes was " + ms_text(a.longest_gap_ms) + "\n";
    if (a.underruns > 0)
        out += "  recovering took " + ms_text(a.recovery_ms_total) + " in all, " +
               ms_text(a.recovery_ms_max) + " at most\n";
    if (a.server_xruns)
        out += "  " +
               (a.through.empty() ? std::string("the sound server") : server_name(a.through)) +
               " counted " + plural(*a.server_xruns, "xrun", "xruns") + " of its own\n";
    if (!a.stopped_because.empty())
        out += "  stopped after " + s_text(a.played_s) + ": " + core::one_line(a.stopped_because) +
               "\n";
    if (a.interrupted)
        out += "  interrupted: it played until the run was ended by a signal\n";
    out += "  a pass needs 0 underruns and at least " + ms_text(report.min_headroom_ms) + " (" +
           std::to_string(report.min_headroom_percent) +
           " % of the buffer, tuning.selftest.audio_min_headroom_percent) left at every write: " +
           (report.passed ? "pass" : "FAIL") + "\n";
    return out;
}

std::string audio_verdict_text(const selftest::AudioReport& report) {
    const selftest::AudioResult& a = report.result;
    const std::string where = audio_where(a);
    if (a.frames_written == 0)
        return "no audio was played " + where +
               (a.stopped_because.empty() ? "" : " (" + core::one_line(a.stopped_because) + ")") +
               ", so nothing can be said about what a listener would hear";
    const std::string first =
        a.underrun_list.empty()
            ? std::string()
            : " (the first " + fixed(a.underrun_list.front().at_s, 2) + " s in)";
    if (!a.stopped_because.empty())
        return "the audio " + where + " stopped after " + s_text(a.played_s) + " (" +
               core::one_line(a.stopped_because) + "): a listener would have heard it cut out" +
               (a.underruns ? ", after " + plural(a.underruns, "dropout", "dropouts") + first
                            : std::string());
    if (a.underruns > 0)
        return "a listener would have heard " + plural(a.underruns, "dropout", "dropouts") +
               " in " + s_text(a.played_s) + " of audio " + where + first +
               ": the player's thread did not write in time";
    if (a.min_left_ms < 0)
        return "no dropout in " + s_text(a.played_s) + " of audio " + where +
               ", but no write measured how much was left, so the headroom is not known";
    const std::string needs = ms_text(report.min_headroom_ms) + ", " +
                              std::to_string(report.min_headroom_percent) + " % of the buffer";
    if (!report.passed)
        return "no dropout in " + s_text(a.played_s) + " of audio " + where + ", but at worst " +
               ms_text(a.min_left_ms) + " was left, less than the " + needs +
               " a pass needs: a little more delay and a listener would hear one";
    return "no dropout in " + s_text(a.played_s) + " of audio " + where + ", and at worst " +
           ms_text(a.min_left_ms) + " of audio was left (a pass needs " + needs + ")";
}

std::string verdict_text(const selftest::SelftestReport& r) {
    if (!r.interrupted && r.complete)
        return verdict_of_measured(r);
    double measured = 0;
    for (const selftest::CoreReport& c : r.cores)
        measured = std::max(measured, c.latency.measured_s);
    const std::string of = fixed(measured, 0) + " s of " +
                           fixed(r.parameters.duration_ms / 1000.0, 0) + " s per idle policy";
    return (r.interrupted ? "interrupted after " + of
                          : "not complete: written after " + of +
                                " while the run went on (it may still be running, or it was "
                                "killed)") +
           ", so it proves nothing about the whole run; of what it measured: " +
           verdict_of_measured(r);
}

namespace {

std::string latency_verdict(const selftest::SelftestReport& r);

std::string verdict_of_measured(const selftest::SelftestReport& r) {
    return latency_verdict(r) + (r.audio ? "; " + audio_verdict_text(*r.audio) : "");
}

std::string latency_verdict(const selftest::SelftestReport& r) {
    const selftest::Verdict v = selftest::verdict(r);
    auto core = [](const selftest::CoreReport& c) {
        return "CPU " + std::to_string(c.latency.cpu) + " (" +
               std::string(selftest::to_string(c.role)) + ", idle " +
               std::string(selftest::to_string(c.latency.idle)) + ")";
    };
    const std::string rate = fixed(v.rate / 1000.0, 0) + " kHz";
    for (const selftest::CoreReport& c : r.cores)
        if (c.latency.stopped_run)
            return "stopped early by --stop-above " + std::to_string(r.parameters.stop_above_us) +
                   " µs when " + core(c) + " woke " + fixed(c.latency.max_us, 0) + " µs late, " +
                   fixed(c.latency.max_at_s, 3) +
                   " s into the run: a run cut short promises no ALSA period";
    if (!v.missed.empty()) {
        const selftest::CoreReport& c = *v.missed.front();
        return "not safe for audio yet: " + core(c) + " missed " + fixed(c.missed_percent(), 2) +
               " % of its wake-ups, each a whole interval late, so no ALSA period can be "
               "promised until that is found (see the table above)";
    }
    if (!v.failed.empty()) {
        const selftest::CoreReport& c = *v.failed.front();
        if (c.latency.cycles == 0)
            return "not safe for audio yet: " + core(c) +
                   " took no sample, so nothing can be said about it";
        return "not safe for audio yet: " + core(c) + " woke " + fixed(c.latency.max_us, 0) +
               " µs late, over its limit of " + std::to_string(c.threshold_us) + " µs (" +
               std::to_string(c.above) + " wake-ups over it)";
    }
    if (!v.worst)
        return "no wake-up was measured, so nothing can be said about audio periods";
    const std::string worst =
        "worst wake-up " + fixed(v.worst->latency.max_us, 0) + " µs on " + core(*v.worst);
    const std::string measured =
        "; measured for " + fixed(v.worst->latency.measured_s, 0) + " s" +
        (r.interrupted || !r.complete ? std::string()
                                      : ", and rarer delays need longer runs (--duration)");
    if (v.period_frames == 0)
        return worst + ": too late for any ALSA period up to " +
               std::to_string(selftest::k_max_period_frames) + " frames at " + rate + measured;
    // a timer's wake-up: the sound card's interrupt adds its own delay before the player's
    // thread runs, so this is the least a period needs, not a guarantee
    return worst + ": consistent with ALSA periods of " + std::to_string(v.period_frames) +
           " frames (" + fixed(1000.0 * v.period_frames / v.rate, 2) + " ms) and longer at " +
           rate +
           ", leaving half of each period for the player's own work (a timer's "
           "wake-up; the sound card's interrupt adds its own)" +
           measured;
}

} // namespace

std::string players_text(const std::vector<selftest::PlayerAdvice>& players) {
    if (players.empty())
        return "";
    std::string out = "players' buffers (docs/audio-buffers.md; the deadline is the buffer "
                      "less a period, rtprov's margin " +
                      std::to_string(core::k_buffer_margin) +
                      " times the worst wake-up on the player's cores):\n";
    for (const selftest::PlayerAdvice& p : players) {
        if (p.app.empty()) { // the players' files could not be read at all: nothing to advise
            out += "  " + p.name + ": " + p.problem + "\n";
            continue;
        }
        out += "  " + p.name + ": ";
        if (p.now.empty())
            out += "its setting is not known (" + p.problem + ")";
        else
            out +=
                "runs with " + p.now + (p.now_default ? " (its default)" : "") + ", set in " +
                p.where + ": " +
                (p.now_holds.value_or(false) ? "holds the margin" : "shorter than the margin asks");
        out += "\n    ";
        if (p.supports.empty())
            out += "no setting rtprov tries leaves a deadline of " + fixed(p.need_ms, 2) +
                   " ms: make the wake-up shorter first\n";
        else
            out += "the measurement supports " + p.supports + " and longer (deadline " +
                   fixed(p.deadline_ms, 2) + " ms, " + fixed(p.need_ms, 2) +
                   " ms asked): " + p.setting + "\n";
    }
    return out;
}

std::string selftest_text(const selftest::SelftestReport& r) {
    const selftest::RunParameters& p = r.parameters;
    std::string out = "rtprov selftest " + r.started_at + ": " +
                      (r.profile.empty() ? "no profile applied" : "profile " + quoted(r.profile)) +
                      "; " + fixed(p.duration_ms / 1000.0, 0) + " s per idle policy, every " +
                      std::to_string(p.interval_us) + " µs at SCHED_FIFO " +
                      std::to_string(p.priority) + ", " +
                      (p.load_cpus.empty() ? "no load" : "load on CPUs " + p.load_cpus) + "\n";
    out += kernel_line(r);
    if (r.trace.traced)
        out += "measured by the kernel's timerlat tracer (--trace): its thread on each CPU at "
               "SCHED_FIFO " +
               std::to_string(p.priority) + ", in a tracefs instance of rtprov's own\n";
    out += "CPU  role          idle        cycles  missed  miss %     min     avg     p99   p99.9  "
           "   max  at s   limit  over  result\n";
    for (const selftest::CoreReport& c : r.cores) {
        const selftest::CoreLatency& l = c.latency;
        out += pad(std::to_string(l.cpu), 3) + "  " +
               pad(std::string(selftest::to_string(c.role)), 12, false) + "  " +
               pad(std::string(selftest::to_string(l.idle)), 8, false) +
               pad(std::to_string(l.cycles), 10) + pad(std::to_string(l.overruns), 8) +
               pad(fixed(c.missed_percent(), 2), 8) + pad(fixed(l.min_us), 8) +
               pad(fixed(l.avg_us), 8) + pad(fixed(l.p99_us), 8) + pad(fixed(l.p999_us), 8) +
               pad(fixed(l.max_us), 8) + pad(fixed(l.max_at_s), 6) +
               pad(std::to_string(c.threshold_us), 8) + pad(std::to_string(c.above), 6) + "  " +
               (c.passed ? "pass" : "FAIL") + "\n";
    }
    out += "(µs; 'missed': planned wake-ups skipped, not measured, because a sample came a whole "
           "interval late; 'at s': when the maximum came, seconds into the run; 'over': "
           "samples above the limit)\n";
    if (!r.cores.empty()) {
        unsigned per_mille = r.cores.front().max_missed_per_mille;
        out += "a core passes with no sample over its limit and at most " +
               fixed(per_mille / 10.0) +
               " % of its wake-ups missed "
               "(tuning.selftest.max_missed_per_mille: " +
               std::to_string(per_mille) + ")\n";
    }
    std::vector<unsigned> unassigned;
    unsigned unassigned_limit = 0;
    for (const selftest::CoreReport& c : r.cores)
        if (c.role == selftest::CoreRole::unassigned) {
            unassigned.push_back(c.latency.cpu);
            unassigned_limit = c.threshold_us;
        }
    if (!unassigned.empty()) {
        core::CpuList cpus(unassigned);
        std::string which = (cpus.size() == 1 ? "CPU " : "CPUs ") + cpus.to_string();
        std::string limit =
            "the reserved cores' limit of " + std::to_string(unassigned_limit) + " µs";
        std::string are = cpus.size() == 1 ? " is" : " are";
        out += r.profile.empty()
                   ? "unassigned: no profile is applied, so " + which + are + " held to " + limit +
                         " (an audio box's CPU is held to audio latency unless a profile makes "
                         "it housekeeping)\n"
                   : "unassigned: profile " + quoted(r.profile) + " gives " + which +
                         " no role, so " + (cpus.size() == 1 ? "it" : "they") + are + " held to " +
                         limit + "\n";
    }
    for (const selftest::CoreReport& c : r.cores)
        if (c.missed_too_many)
            out += "CPU " + std::to_string(c.latency.cpu) + ", idle " +
                   std::string(selftest::to_string(c.latency.idle)) + ": missed " +
                   std::to_string(c.latency.overruns) + " of " + std::to_string(c.planned) +
                   " planned wake-ups (" + fixed(c.missed_percent(), 2) + " %), more than " +
                   fixed(c.max_missed_per_mille / 10.0) +
                   " %: its thread did not run for whole intervals, and the latencies above "
                   "leave those out\n";
    if (r.pi_probe) {
        const selftest::PiProbeResult& pr = r.pi_probe->result;
        out += "PI-boost probe: " + std::to_string(pr.workers) +
               " SCHED_OTHER workers holding a priority-inheritance mutex for " +
               fixed(pr.critical_section_us, 0) + " µs; the SCHED_RR thread took it " +
               std::to_string(pr.acquisitions) + " times, waited " + fixed(pr.avg_wait_us) +
               " µs on average and " + fixed(pr.worst_wait_us) + " µs at worst (limit " +
               fixed(r.pi_probe->limit_us, 0) + " µs); " + std::to_string(pr.starved.size()) +
               " schedstat window(s) of " + std::to_string(pr.windows) +
               " showed a thread runnable but not running" +
               (pr.schedstat_seen ? "" : " (schedstat gave no numbers: starvation not visible)") +
               ": " + (r.pi_probe->passed ? "pass" : "FAIL") + "\n";
        for (const selftest::StarvedThread& t : pr.starved)
            out += "  starved: thread " + std::to_string(t.tid) + " " + quoted(t.name) + " at " +
                   fixed(double(t.window_start.count()) / 1e9, 2) + " s: waited " +
                   fixed(double(t.wait_ns) / 1e6, 1) + " ms, ran " +
                   fixed(double(t.run_ns) / 1e6, 2) + " ms in a " +
                   fixed(double(t.window.count()) / 1e6, 0) + " ms window\n";
        if (!r.pi_probe->passed && !r.kernel.preempt_rt)
            out += push_ipi_hint(r.kernel.push_ipi);
    }
    if (r.audio)
        out += audio_text(*r.audio);
    for (const selftest::CoreReport& c : r.cores)
        if (!c.late_seconds.empty())
            out += late_text(c) + "\n";
    for (const selftest::CoreReport& c : r.cores)
        if (c.latency.stopped_run)
            out += "stopped at " + fixed(c.latency.max_at_s, 3) + " s: CPU " +
                   std::to_string(c.latency.cpu) + ", idle " +
                   std::string(selftest::to_string(c.latency.idle)) + ", woke " +
                   fixed(c.latency.max_us) + " µs late, more than --stop-above " +
                   std::to_string(p.stop_above_us) + " µs; the rest of the run was not measured\n";
    out += idle_hint(r);
    out += trace_text(r);
    if (r.interrupted)
        out += "interrupted: ended early by a signal; each core measured for the seconds in its "
               "report (measured_s), the rest of the run was not measured\n";
    out += histogram_text(r);
    out += players_text(r.players);
    out += "verdict: " + verdict_text(r) + "\n";
    out += std::string("result: ") + (r.passed ? "passed" : "did not pass") + "\n";
    return out;
}

namespace {

std::string json_us(std::int64_t ns) {
    return fixed(static_cast<double>(ns) / 1000.0, 3);
}

std::string json_text_or_null(const std::string& text) {
    return text.empty() ? "null" : json_string(text);
}

std::string trace_json(const selftest::TraceReport& t) {
    return std::string("{\"asked\": ") + (t.asked ? "true" : "false") +
           ", \"traced\": " + (t.traced ? "true" : "false") +
           ", \"not_traced_because\": " + json_text_or_null(t.not_traced_because) +
           ", \"lost_events\": " + std::to_string(t.lost_events) +
           ", \"unparsed_lines\": " + std::to_string(t.unparsed_lines) +
           ", \"kept_trace\": " + json_text_or_null(t.kept_trace) + "}";
}

std::string cause_json(const std::optional<selftest::WakeupCause>& cause) {
    if (!cause)
        return "null";
    const selftest::WakeupCause& w = *cause;
    const auto [what, ns] = w.main_part();
    std::string out =
        "{\"at_s\": " + fixed(w.at_s, 6) + ", \"activation\": " + std::to_string(w.activation) +
        ", \"thread_latency_us\": " + json_us(w.thread_latency_ns) +
        ", \"split_known\": " + (w.split_known ? "true" : "false") +
        ", \"main\": {\"what\": " + json_string(what) + ", \"us\": " + json_us(ns) + "}" +
        ", \"irq_latency_us\": " + json_us(w.irq_latency_ns) + ", \"irq_handler_delay_us\": " +
        (w.irq_handler_delay_ns < 0 ? std::string("null") : json_us(w.irq_handler_delay_ns)) +
        ", \"from_idle\": " + (w.from_idle ? "true" : "false") +
        ", \"idle_exit_us\": " + json_us(w.idle_exit_ns) +
        ", \"earlier_irq\": " + json_text_or_null(w.earlier_irq) +
        ", \"timer_irq_us\": " + json_us(w.timer_irq_ns) +
        ", \"blocking_thread\": " + json_text_or_null(w.blocking_thread) +
        ", \"blocking_us\": " + json_us(w.blocking_ns) + ", \"irq_us\": " + json_us(w.irq_ns) +
        ", \"softirq_us\": " + json_us(w.softirq_ns) + ", \"thread_us\": " + json_us(w.thread_ns) +
        ", \"nmi_us\": " + json_us(w.nmi_ns) + ", \"rest_us\": " + json_us(w.rest_ns()) +
        ", \"interference\": [";
    for (std::size_t i = 0; i < w.interference.size(); ++i)
        out += std::string(i ? ", " : "") + "{\"kind\": " +
               json_string(std::string(selftest::to_string(w.interference[i].kind))) +
               ", \"name\": " + json_string(w.interference[i].name) +
               ", \"count\": " + std::to_string(w.interference[i].count) +
               ", \"us\": " + json_us(w.interference[i].duration_ns) + "}";
    out += "], \"interference_left_out\": " + std::to_string(w.interference_left_out) +
           ", \"stack\": [";
    for (std::size_t i = 0; i < w.stack.size(); ++i)
        out += std::string(i ? ", " : "") + json_string(w.stack[i]);
    return out + "]}";
}

// A time as the audio test keeps it: ms to whole µs, s to whole ms.
std::string thousandths(double value) {
    return fixed(value, 3);
}

std::string what_ran_json(const std::optional<selftest::WhatRan>& running) {
    if (!running)
        return "null";
    std::string out = "{\"cpus\": " + json_string(running->cpus) + ", \"threads\": [";
    for (std::size_t i = 0; i < running->threads.size(); ++i) {
        const selftest::RunningThread& t = running->threads[i];
        out += std::string(i ? ", " : "") + "{\"pid\": " + std::to_string(t.pid) +
               ", \"tid\": " + std::to_string(t.tid) + ", \"comm\": " + json_string(t.comm) +
               ", \"policy\": " +
               (t.policy ? json_string(core::to_string(*t.policy)) : std::string("null")) +
               ", \"priority\": " + std::to_string(t.priority) +
               ", \"cpu\": " + std::to_string(t.cpu) +
               ", \"state\": " + json_string(std::string(1, t.state)) + "}";
    }
    return out + "], \"more\": " + std::to_string(running->more) + "}";
}

std::string audio_json(const std::optional<selftest::AudioReport>& audio) {
    if (!audio)
        return "null";
    const selftest::AudioResult& a = audio->result;
    auto left = [](double ms) { return ms < 0 ? std::string("null") : thousandths(ms); };
    std::string out =
        "{\"result\": {\"device\": " + json_string(a.device) +
        ", \"card\": " + json_text_or_null(a.card) +
        ", \"through\": " + json_text_or_null(a.through) +
        ", \"loopback\": " + (a.loopback ? "true" : "false") +
        ", \"rate\": " + std::to_string(a.rate) + ", \"format\": " + json_string(a.format) +
        ", \"channels\": " + std::to_string(a.channels) +
        ", \"period_frames\": " + std::to_string(a.period_frames) +
        ", \"buffer_frames\": " + std::to_string(a.buffer_frames) +
        ", \"policy\": " + json_string(core::to_string(a.policy)) +
        ", \"priority\": " + std::to_string(a.priority) + ", \"cpus\": " + json_string(a.cpus) +
        ", \"memory_locked\": " + (a.memory_locked ? "true" : "false") +
        ", \"cpu_ms\": " + thousandths(a.cpu_ms) + ", \"played_s\": " + thousandths(a.played_s) +
        ", \"frames_written\": " + std::to_string(a.frames_written) +
        ", \"underruns\": " + std::to_string(a.underruns) +
        ", \"recovery_ms_total\": " + thousandths(a.recovery_ms_total) +
        ", \"recovery_ms_max\": " + thousandths(a.recovery_ms_max) +
        ", \"longest_gap_ms\": " + thousandths(a.longest_gap_ms) +
        ", \"min_left_ms\": " + left(a.min_left_ms) +
        ", \"min_left_at_s\": " + thousandths(a.min_left_at_s) + ", \"server_xruns\": " +
        (a.server_xruns ? std::to_string(*a.server_xruns) : std::string("null")) +
        ", \"interrupted\": " + (a.interrupted ? "true" : "false") +
        ", \"stopped_because\": " + json_text_or_null(a.stopped_because) +
        ",\n     \"underrun_list\": [";
    for (std::size_t i = 0; i < a.underrun_list.size(); ++i)
        out += std::string(i ? ", " : "") + "{\"at_s\": " + thousandths(a.underrun_list[i].at_s) +
               ", \"recovery_ms\": " + thousandths(a.underrun_list[i].recovery_ms) +
               ", \"running\": " + what_ran_json(a.underrun_list[i].running) + "}";
    out += "],\n     \"seconds\": [";
    for (std::size_t i = 0; i < a.seconds.size(); ++i)
        out += std::string(i ? ", " : "") + "{\"at_s\": " + std::to_string(a.seconds[i].at_s) +
               ", \"min_left_ms\": " + left(a.seconds[i].min_left_ms) +
               ", \"underruns\": " + std::to_string(a.seconds[i].underruns) + "}";
    return out + "]},\n   \"seconds_total\": " + std::to_string(audio->seconds_total) +
           ", \"min_headroom_percent\": " + std::to_string(audio->min_headroom_percent) +
           ", \"min_headroom_ms\": " + thousandths(audio->min_headroom_ms) +
           ", \"passed\": " + (audio->passed ? "true" : "false") + "}";
}

} // namespace

std::string players_json(const std::vector<selftest::PlayerAdvice>& players) {
    std::string out = "[";
    for (std::size_t i = 0; i < players.size(); ++i) {
        const selftest::PlayerAdvice& pa = players[i];
        out += std::string(i ? "," : "") + "\n    {\"app\": " + json_string(pa.app) +
               ", \"name\": " + json_string(pa.name) + ", \"now\": " + json_text_or_null(pa.now) +
               ", \"now_default\": " + (pa.now_default ? "true" : "false") +
               ", \"now_deadline_ms\": " + thousandths(pa.now_deadline_ms) +
               ", \"where\": " + json_string(pa.where) +
               ", \"problem\": " + json_text_or_null(pa.problem) +
               ", \"now_holds\": " + (pa.now_holds ? (*pa.now_holds ? "true" : "false") : "null") +
               ", \"supports\": " + json_text_or_null(pa.supports) +
               ", \"need_ms\": " + thousandths(pa.need_ms) +
               ", \"deadline_ms\": " + thousandths(pa.deadline_ms) +
               ", \"setting\": " + json_text_or_null(pa.setting) + "}";
    }
    out += players.empty() ? "]" : "\n  ]";
    return out;
}

std::string selftest_json(const selftest::SelftestReport& r) {
    const selftest::RunParameters& p = r.parameters;
    std::string out =
        "{\n  " + json_schema("selftest", k_selftest_schema_version) +
        ",\n  \"started_at\": " + json_string(r.started_at) +
        ",\n  \"profile\": " + (r.profile.empty() ? "null" : json_string(r.profile)) +
        ",\n  \"kernel\": {\"release\": " + json_string(r.kernel_release) +
        ", \"version\": " + json_string(r.kernel.version) +
        ", \"preempt_rt\": " + (r.kernel.preempt_rt ? "true" : "false") +
        ", \"rt_push_ipi\": " + json_string(std::string(selftest::to_string(r.kernel.push_ipi))) +
        "},\n  \"complete\": " + (r.complete ? "true" : "false") +
        ", \"interrupted\": " + (r.interrupted ? "true" : "false") +
        ",\n  \"parameters\": {\"duration_s\": " + fixed(p.duration_ms / 1000.0, 3) +
        ", \"interval_us\": " + std::to_string(p.interval_us) +
        ", \"priority\": " + std::to_string(p.priority) +
        ", \"load_cpus\": " + json_string(p.load_cpus) +
        ", \"stop_above_us\": " + std::to_string(p.stop_above_us) +
        ", \"method\": " + json_string(p.method) + "},\n  \"trace\": " + trace_json(r.trace) +
        ",\n  \"cores\": [";
    for (std::size_t i = 0; i < r.cores.size(); ++i) {
        const selftest::CoreReport& c = r.cores[i];
        const selftest::CoreLatency& l = c.latency;
        out += std::string(i ? "," : "") + "\n    {\"cpu\": " + std::to_string(l.cpu) +
               ", \"role\": " + json_string(std::string(selftest::to_string(c.role))) +
               ", \"idle\": " + json_string(std::string(selftest::to_string(l.idle))) +
               ", \"cycles\": " + std::to_string(l.cycles) +
               ", \"overruns\": " + std::to_string(l.overruns) +
               ", \"planned_wakeups\": " + std::to_string(c.planned) +
               ", \"missed_percent\": " + fixed(c.missed_percent(), 3) +
               ", \"max_missed_per_mille\": " + std::to_string(c.max_missed_per_mille) +
               ", \"min_us\": " + fixed(l.min_us, 3) + ", \"avg_us\": " + fixed(l.avg_us, 3) +
               ", \"max_us\": " + fixed(l.max_us, 3) + ", \"p50_us\": " + fixed(l.p50_us, 3) +
               ", \"p99_us\": " + fixed(l.p99_us, 3) + ", \"p99_9_us\": " + fixed(l.p999_us, 3) +
               ", \"p99_99_us\": " + fixed(l.p9999_us, 3) +
               ", \"max_at_s\": " + fixed(l.max_at_s, 3) +
               ", \"measured_s\": " + fixed(l.measured_s, 3) +
               ", \"threshold_us\": " + std::to_string(c.threshold_us) + ", \"threshold_of\": " +
               json_string(std::string(selftest::to_string(c.threshold_role))) +
               ", \"above_threshold\": " + std::to_string(c.above) +
               ", \"passed\": " + (c.passed ? "true" : "false") +
               ", \"stopped_run\": " + (l.stopped_run ? "true" : "false") +
               ",\n     \"cause\": " + cause_json(l.cause) +
               ",\n     \"late_seconds_total\": " + std::to_string(c.late_seconds_total) +
               ", \"late_seconds\": [";
        for (std::size_t k = 0; k < c.late_seconds.size(); ++k)
            out += std::string(k ? ", " : "") +
                   "{\"at_s\": " + std::to_string(c.late_seconds[k].at_s) +
                   ", \"max_us\": " + std::to_string(c.late_seconds[k].max_us) +
                   ", \"missed\": " + std::to_string(c.late_seconds[k].missed) + "}";
        out += std::string("]") + ",\n     \"histogram\": {\"bucket_us\": 1, \"limit_us\": " +
               std::to_string(l.histogram.limit_us()) +
               ", \"overflow\": " + std::to_string(l.histogram.overflow()) + ", \"counts\": {";
        // Sparse: "µs": samples, only for buckets that have any.
        bool first = true;
        const auto& buckets = l.histogram.buckets();
        for (std::size_t us = 0; us < buckets.size(); ++us)
            if (buckets[us]) {
                out += (first ? "\"" : ", \"") + std::to_string(us) +
                       "\": " + std::to_string(buckets[us]);
                first = false;
            }
        out += "}}}";
    }
    out += "\n  ],\n  \"pi_probe\": ";
    if (!r.pi_probe) {
        out += "null";
    } else {
        const selftest::PiProbeResult& pr = r.pi_probe->result;
        out += "{\"workers\": " + std::to_string(pr.workers) +
               ", \"critical_section_us\": " + fixed(pr.critical_section_us, 3) +
               ", \"acquisitions\": " + std::to_string(pr.acquisitions) +
               ", \"worker_acquisitions\": " + std::to_string(pr.worker_acquisitions) +
               ", \"avg_wait_us\": " + fixed(pr.avg_wait_us, 3) +
               ", \"worst_wait_us\": " + fixed(pr.worst_wait_us, 3) +
               ", \"worst_wait_at_s\": " + fixed(pr.worst_wait_at_s, 3) +
               ", \"limit_us\": " + fixed(r.pi_probe->limit_us, 3) +
               ", \"windows\": " + std::to_string(pr.windows) +
               ", \"schedstat_seen\": " + (pr.schedstat_seen ? "true" : "false") +
               ", \"starved\": [";
        for (std::size_t i = 0; i < pr.starved.size(); ++i) {
            const selftest::StarvedThread& t = pr.starved[i];
            out += std::string(i ? ", " : "") + "{\"tid\": " + std::to_string(t.tid) +
                   ", \"name\": " + json_string(t.name) +
                   ", \"window_start_s\": " + fixed(double(t.window_start.count()) / 1e9, 3) +
                   ", \"window_ms\": " + fixed(double(t.window.count()) / 1e6, 3) +
                   ", \"wait_ms\": " + fixed(double(t.wait_ns) / 1e6, 3) +
                   ", \"run_ms\": " + fixed(double(t.run_ns) / 1e6, 3) + "}";
        }
        out += std::string("], \"passed\": ") + (r.pi_probe->passed ? "true" : "false") + "}";
    }
    out += ",\n  \"audio\": " + audio_json(r.audio);
    out += ",\n  \"players\": " + players_json(r.players);
    out += std::string(",\n  \"passed\": ") + (r.passed ? "true" : "false") + "\n}\n";
    return out;
}

// The Prometheus text exposition format as node-exporter's textfile collector reads it
// (https://prometheus.io/docs/instrumenting/exposition_formats/): base units (seconds,
// https://prometheus.io/docs/practices/naming/), the latency as a summary (quantile
// labels, _sum and _count), a # HELP and # TYPE for every metric, and the time of the run;
// checked with 'promtool check metrics'. Written atomically by the caller (rename).
std::string selftest_prometheus(const selftest::SelftestReport& r) {
    auto labels = [](const selftest::CoreReport& c) {
        return "cpu=\"" + std::to_string(c.latency.cpu) + "\",role=\"" +
               std::string(selftest::to_string(c.role)) + "\",idle=\"" +
               std::string(selftest::to_string(c.latency.idle)) + "\"";
    };
    auto seconds = [](double us) { return fixed(us / 1e6, 9); };
    std::string out =
        prometheus_metric("rtprov_selftest_latency_seconds", "summary",
                          "Timer wake-up latency measured by rtprov selftest (quantile 0: "
                          "the least, 1: the most).");
    for (const selftest::CoreReport& c : r.cores) {
        const selftest::CoreLatency& l = c.latency;
        for (auto [quantile, value] : {std::pair{"0", l.min_us},
                                       {"0.5", l.p50_us},
                                       {"0.99", l.p99_us},
                                       {"0.999", l.p999_us},
                                       {"1", l.max_us}})
            out += "rtprov_selftest_latency_seconds{" + labels(c) + ",quantile=\"" + quantile +
                   "\"} " + seconds(value) + "\n";
        out += "rtprov_selftest_latency_seconds_sum{" + labels(c) + "} " +
               seconds(l.avg_us * double(l.cycles)) + "\n";
        out += "rtprov_selftest_latency_seconds_count{" + labels(c) + "} " +
               std::to_string(l.cycles) + "\n";
    }
    out += prometheus_metric(
        "rtprov_selftest_missed_wakeups", "gauge",
        "Planned wake-ups rtprov selftest skipped, not measured, because a sample "
        "came a whole interval late.");
    for (const selftest::CoreReport& c : r.cores)
        out += "rtprov_selftest_missed_wakeups{" + labels(c) + "} " +
               std::to_string(c.latency.overruns) + "\n";
    out += prometheus_metric("rtprov_selftest_planned_wakeups", "gauge",
                             "Wake-ups rtprov selftest planned: measured plus missed.");
    for (const selftest::CoreReport& c : r.cores)
        out += "rtprov_selftest_planned_wakeups{" + labels(c) + "} " + std::to_string(c.planned) +
               "\n";
    out += prometheus_metric("rtprov_selftest_limit_seconds", "gauge",
                             "The largest wake-up latency that passes on the core.");
    for (const selftest::CoreReport& c : r.cores)
        out += "rtprov_selftest_limit_seconds{" + labels(c) + "} " +
               seconds(double(c.threshold_us)) + "\n";
    out +=
        prometheus_metric("rtprov_selftest_core_passed", "gauge",
                          "1 when no sample was above the core's limit and no more wake-ups were "
                          "missed than the profile allows.");
    for (const selftest::CoreReport& c : r.cores)
        out += "rtprov_selftest_core_passed{" + labels(c) + "} " + (c.passed ? "1" : "0") + "\n";
    if (r.pi_probe) {
        out +=
            prometheus_metric(
                "rtprov_selftest_pi_probe_worst_wait_seconds", "gauge",
                "Longest wait of the SCHED_RR thread for the priority-inheritance mutex.") +
            "rtprov_selftest_pi_probe_worst_wait_seconds " +
            seconds(r.pi_probe->result.worst_wait_us) + "\n" +
            prometheus_metric("rtprov_selftest_pi_probe_starved_windows", "gauge",
                              "schedstat windows in which a thread was runnable but did not run.") +
            "rtprov_selftest_pi_probe_starved_windows " +
            std::to_string(r.pi_probe->result.starved.size()) + "\n";
    }
    if (r.audio) {
        const selftest::AudioReport& a = *r.audio;
        const std::string device = "{device=" + prometheus_label(a.result.device) + "}";
        out += prometheus_metric("rtprov_selftest_audio_underruns_total", "counter",
                                 "Underruns in the last self-test's audio test: writes that "
                                 "found the ALSA buffer empty, each a dropout a listener hears.") +
               "rtprov_selftest_audio_underruns_total" + device + " " +
               std::to_string(a.result.underruns) + "\n";
        out += prometheus_metric("rtprov_selftest_audio_min_headroom_seconds", "gauge",
                                 "The least audio left in the buffer at any write of the last "
                                 "self-test's audio test; no sample when none was measured.");
        if (a.result.min_left_ms >= 0)
            out += "rtprov_selftest_audio_min_headroom_seconds" + device + " " +
                   fixed(a.result.min_left_ms / 1e3, 6) + "\n";
        out += prometheus_metric("rtprov_selftest_audio_min_headroom_limit_seconds", "gauge",
                                 "The least audio left at every write that passes: the "
                                 "profile's percent of the buffer.") +
               "rtprov_selftest_audio_min_headroom_limit_seconds" + device + " " +
               fixed(a.min_headroom_ms / 1e3, 6) + "\n";
        out += prometheus_metric("rtprov_selftest_audio_passed", "gauge",
                                 "1 when the last self-test's audio test played without an "
                                 "underrun and with the headroom left at every write.") +
               "rtprov_selftest_audio_passed" + device + " " + (a.passed ? "1" : "0") + "\n";
    }
    bool held_header = false;
    for (const selftest::PlayerAdvice& pa : r.players) {
        if (!pa.now_holds)
            continue;
        if (!held_header)
            out += prometheus_metric(
                "rtprov_selftest_player_buffer_holds", "gauge",
                "1 when the player's buffer, as configured, leaves a deadline of rtprov's margin "
                "times the last self-test's worst wake-up (docs/audio-buffers.md).");
        held_header = true;
        out += "rtprov_selftest_player_buffer_holds{app=" + prometheus_label(pa.app) + "} " +
               (*pa.now_holds ? "1" : "0") + "\n";
    }
    bool deadline_header = false;
    for (const selftest::PlayerAdvice& pa : r.players) {
        if (pa.now.empty())
            continue;
        if (!deadline_header)
            out += prometheus_metric(
                "rtprov_selftest_player_buffer_deadline_seconds", "gauge",
                "The time the player's configured buffer leaves it to write again (the buffer "
                "less a period), with its setting as a label; compare it with the worst "
                "wake-up (docs/audio-buffers.md).");
        deadline_header = true;
        out += "rtprov_selftest_player_buffer_deadline_seconds{app=" + prometheus_label(pa.app) +
               ",setting=" + prometheus_label(pa.now) + "} " + fixed(pa.now_deadline_ms / 1e3, 6) +
               "\n";
    }
    out +=
        prometheus_metric("rtprov_selftest_passed", "gauge", "1 when the last self-test passed.") +
        "rtprov_selftest_passed " + std::string(r.passed ? "1" : "0") + "\n";
    out += prometheus_metric(
               "rtprov_selftest_complete", "gauge",
               "0 while the last self-test is still measuring (a soak run's file, rewritten "
               "as it goes), 1 once it ended.") +
           "rtprov_selftest_complete " + std::string(r.complete ? "1" : "0") + "\n";
    out += prometheus_metric("rtprov_selftest_last_run_timestamp_seconds", "gauge",
                             "When the last self-test started, in seconds since 1970 (UTC).") +
           "rtprov_selftest_last_run_timestamp_seconds " + std::to_string(r.started_unix) + "\n";
    return out;
}

namespace {

// The audio test next to the last one measured alike: underruns, the least left, the longest
// gap between writes.
std::string audio_comparison(const selftest::Comparison& c) {
    if (!c.before || !c.before->audio)
        return "no earlier run with " + c.now.parameters;
    const selftest::AudioHistory& now = *c.now.audio;
    const selftest::AudioHistory& before = *c.before->audio;
    auto left = [](double ms) { return ms < 0 ? std::string("none measured") : fixed(ms) + " ms"; };
    std::string out = std::to_string(before.underruns) + " → " + std::to_string(now.underruns) +
                      " underruns, at worst " + left(before.min_left_ms) + " → " +
                      left(now.min_left_ms) + " left";
    if (now.min_left_ms >= 0 && before.min_left_ms >= 0)
        out += " (" + std::string(now.min_left_ms >= before.min_left_ms ? "+" : "") +
               fixed(now.min_left_ms - before.min_left_ms) + ")";
    return out + ", longest gap " + fixed(before.longest_gap_ms) + " → " +
           fixed(now.longest_gap_ms) + " ms since " + c.before->started_at;
}

} // namespace

std::string comparison_text(const std::vector<selftest::Comparison>& comparisons) {
    std::string out = "compared with the last run measured the same way:\n";
    for (const selftest::Comparison& c : comparisons) {
        if (c.now.audio) {
            out += "  audio: " + audio_comparison(c) + "\n";
            continue;
        }
        out += "  CPU " + std::to_string(c.now.cpu) + " idle " + c.now.idle + ": ";
        if (!c.before) {
            out += "no earlier run with " + c.now.parameters + "\n";
            continue;
        }
        auto delta = [](double now, double before) {
            std::string sign = now >= before ? "+" : "";
            return fixed(before) + " → " + fixed(now) + " µs (" + sign + fixed(now - before) + ")";
        };
        out += "avg " + delta(c.now.avg_us, c.before->avg_us) + ", p99 " +
               delta(c.now.p99_us, c.before->p99_us) + ", max " +
               delta(c.now.max_us, c.before->max_us) + " since " + c.before->started_at + "\n";
    }
    return out;
}

} // namespace rtprov::cli
