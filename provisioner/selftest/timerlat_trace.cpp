// SPDX-License-Identifier: Apache-2.0
#include "provisioner/selftest/timerlat_trace.hpp"

#include "provisioner/core/cpu_list.hpp"
#include "provisioner/core/error.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <memory>

namespace rtprov::selftest {

namespace {

// The longest name a task has: TASK_COMM_LEN (16) less the NUL (include/linux/sched.h).
constexpr std::size_t k_max_comm_bytes = 15;

using Kind = TraceLine::Kind;

// The longest latency or duration taken from a line: an hour. The tracer's own are far
// shorter; a larger number is not a line the kernel wrote.
constexpr std::int64_t k_max_ns = 3'600'000'000'000;

bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
        s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
        s.remove_suffix(1);
    return s;
}

template <typename T> bool to_number(std::string_view s, T& value) {
    if (s.empty())
        return false;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
    return ec == std::errc() && end == s.data() + s.size();
}

// Takes the next word (up to a space) off the front of 's'.
std::string_view next_word(std::string_view& s) {
    s = trim(s);
    const std::size_t end = std::min(s.find(' '), s.size());
    std::string_view word = s.substr(0, end);
    s.remove_prefix(end);
    return word;
}

// "548.771077442" (seconds and nanoseconds, as the osnoise events print them) or
// "548.771078" (seconds and microseconds, as the trace's timestamp column).
bool seconds_to_ns(std::string_view s, std::int64_t& ns) {
    const std::size_t dot = s.find('.');
    if (dot == std::string_view::npos || dot == 0 || s.size() - dot - 1 > 9 ||
        s.size() - dot - 1 == 0)
        return false;
    std::int64_t secs = 0, fraction = 0;
    // at most 10^8 s (three years of uptime): sums of such times cannot overflow
    if (!to_number(s.substr(0, dot), secs) || !to_number(s.substr(dot + 1), fraction) || secs < 0 ||
        secs > 100'000'000 || fraction < 0)
        return false;
    for (std::size_t digits = s.size() - dot - 1; digits < 9; ++digits)
        fraction *= 10;
    ns = secs * 1'000'000'000 + fraction;
    return true;
}

// "<name> start <s.ns> duration <ns> ns": the name (which may hold spaces and colons,
// "snd_hda_intel:card0:33"), its start and duration.
bool parse_noise(std::string_view body, TraceLine& line) {
    const std::size_t start = body.rfind(" start ");
    if (start == std::string_view::npos)
        return false;
    std::string_view rest = body.substr(start + 7);
    std::string_view when = next_word(rest);
    if (next_word(rest) != "duration")
        return false;
    std::string_view duration = next_word(rest);
    if (next_word(rest) != "ns" || !trim(rest).empty())
        return false;
    if (!seconds_to_ns(when, line.start_ns) || !to_number(duration, line.duration_ns) ||
        line.duration_ns < 0 || line.duration_ns > k_max_ns)
        return false;
    line.name = std::string(trim(body.substr(0, start)));
    return true;
}

// "#<seq> context <irq|thread> timer_latency <ns> ns"
bool parse_sample(std::string_view body, TraceLine& line) {
    std::string_view seq = next_word(body);
    if (seq.size() < 2 || seq.front() != '#' || !to_number(seq.substr(1), line.seq))
        return false;
    if (next_word(body) != "context")
        return false;
    std::string_view context = next_word(body);
    if (context == "irq")
        line.kind = Kind::irq_sample;
    else if (context == "thread")
        line.kind = Kind::thread_sample;
    else
        return false; // "user-ret" (a user-space workload) is not measured here
    if (next_word(body) != "timer_latency")
        return false;
    std::string_view latency = next_word(body);
    return to_number(latency, line.latency_ns) && line.latency_ns >= 0 &&
           line.latency_ns <= k_max_ns && next_word(body) == "ns" && trim(body).empty();
}

// "CPU:3 [LOST 1234 EVENTS]"
std::optional<TraceLine> parse_lost(std::string_view s) {
    TraceLine line;
    line.kind = Kind::lost;
    s.remove_prefix(4);
    const std::size_t space = s.find(' ');
    if (space == std::string_view::npos || !to_number(s.substr(0, space), line.cpu))
        return std::nullopt;
    s.remove_prefix(space + 1);
    if (s.substr(0, 6) != "[LOST " || s.size() < 14 || s.substr(s.size() - 8) != " EVENTS]" ||
        !to_number(s.substr(6, s.size() - 14), line.lost))
        return std::nullopt;
    return line;
}

std::int64_t positive(std::int64_t ns) {
    return std::max<std::int64_t>(ns, 0);
}

// a + b, held at the largest int64 rather than wrapping (a trace's sums of durations)
std::int64_t sat_add(std::int64_t a, std::int64_t b) {
    std::int64_t sum = 0;
    return __builtin_add_overflow(a, b, &sum) ? std::numeric_limits<std::int64_t>::max() : sum;
}

// One more run of something in the way: added to its entry, or a new entry while there is
// room; the sums are kept by the caller either way.
void note(WakeupCause& cause, Interference::Kind kind, std::string name, std::int64_t ns) {
    for (Interference& i : cause.interference)
        if (i.kind == kind && i.name == name) {
            i.duration_ns = sat_add(i.duration_ns, ns);
            ++i.count;
            return;
        }
    if (cause.interference.size() < WakeupCause::k_kept)
        cause.interference.push_back({kind, std::move(name), ns, 1});
    else
        ++cause.interference_left_out;
}

} // namespace

std::optional<TraceLine> parse_trace_line(std::string_view s) {
    s = trim(s);
    if (s.empty() || s.front() == '#')
        return std::nullopt;
    if (s.substr(0, 3) == "=> ") {
        TraceLine line;
        line.kind = Kind::stack_frame;
        line.name = std::string(trim(s.substr(3)));
        return line;
    }
    if (s.substr(0, 4) == "CPU:")
        return parse_lost(s);
    // "<task>-<pid> [<cpu>] <flags> <seconds>.<µs>: <body>": the task's name may hold
    // spaces, dashes and brackets ("x [1]" is a name a thread may give itself), and the
    // body names tasks too. A task's name is at most 15 bytes (TASK_COMM_LEN), so the CPU
    // field is the last " [<digits>]" with at most 15 bytes of name before the "-<pid>"
    // in front of it: one inside the name has a shorter name, one in the body a longer.
    std::size_t open = std::string_view::npos;
    std::size_t dash = std::string_view::npos;
    for (std::size_t at = s.find(" ["); at != std::string_view::npos; at = s.find(" [", at + 1)) {
        std::size_t close = at + 2;
        while (close < s.size() && is_digit(s[close]))
            ++close;
        if (close == at + 2 || close >= s.size() || s[close] != ']')
            continue;
        const std::string_view task = trim(s.substr(0, at));
        const std::size_t d = task.rfind('-'); // npos (no dash) is above the longest too
        if (d > k_max_comm_bytes || d + 1 == task.size() ||
            !std::all_of(task.begin() + std::ptrdiff_t(d + 1), task.end(), is_digit))
            continue;
        open = at + 1;
        dash = d;
    }
    if (open == std::string_view::npos)
        return std::nullopt;
    TraceLine line;
    const std::size_t close = s.find(']', open);
    if (!to_number(s.substr(open + 1, close - open - 1), line.cpu) ||
        line.cpu > core::CpuList::k_max_cpu)
        return std::nullopt;
    const std::string_view task = trim(s.substr(0, open));
    if (!to_number(task.substr(dash + 1), line.pid) || line.pid < 0)
        return std::nullopt;
    line.task = std::string(task.substr(0, dash));
    std::string_view rest = s.substr(close + 1);
    // the flags column (irq-info) is there by default; the timestamp ends in ':'
    std::string_view word = next_word(rest);
    if (word.empty() || word.back() != ':') {
        word = next_word(rest);
        if (word.empty() || word.back() != ':')
            return std::nullopt;
    }
    if (!seconds_to_ns(word.substr(0, word.size() - 1), line.ts_ns))
        return std::nullopt;
    std::string_view body = trim(rest);
    if (body.substr(0, 1) == "#")
        return parse_sample(body, line) ? std::optional(line) : std::nullopt;
    if (body == "<stack trace>") {
        line.kind = Kind::stack_start;
        return line;
    }
    const std::size_t colon = body.find(": ");
    if (colon == std::string_view::npos)
        return std::nullopt;
    const std::string_view event = body.substr(0, colon);
    body.remove_prefix(colon + 2);
    if (event == "irq_noise")
        line.kind = Kind::irq_noise;
    else if (event == "softirq_noise")
        line.kind = Kind::softirq_noise;
    else if (event == "thread_noise")
        line.kind = Kind::thread_noise;
    else if (event == "nmi_noise")
        line.kind = Kind::nmi_noise;
    else
        return std::nullopt;
    if (line.kind == Kind::nmi_noise)
        return parse_noise("nmi " + std::string(body), line) ? std::optional(line) : std::nullopt;
    return parse_noise(body, line) ? std::optional(line) : std::nullopt;
}

std::string_view to_string(Interference::Kind kind) {
    switch (kind) {
    case Interference::Kind::softirq:
        return "softirq";
    case Interference::Kind::thread:
        return "thread";
    case Interference::Kind::nmi:
        return "nmi";
    case Interference::Kind::irq:
        break;
    }
    return "irq";
}

std::int64_t WakeupCause::rest_ns() const {
    std::int64_t known = positive(irq_handler_delay_ns);
    for (std::int64_t part : {timer_irq_ns, blocking_ns, irq_ns, softirq_ns, thread_ns, nmi_ns})
        known = sat_add(known, part);
    return positive(thread_latency_ns - known);
}

std::pair<std::string, std::int64_t> WakeupCause::main_part() const {
    if (!split_known)
        return {"unknown: the trace lost this wake-up's IRQ line", thread_latency_ns};
    std::pair<std::string, std::int64_t> best{"", -1};
    auto consider = [&](std::string what, std::int64_t ns) {
        if (ns > best.second)
            best = {std::move(what), ns};
    };
    if (idle_exit_ns > 0)
        consider("exit from idle", idle_exit_ns);
    else if (!earlier_irq.empty())
        consider("IRQ '" + earlier_irq + "' running when the timer expired",
                 positive(irq_handler_delay_ns));
    else
        consider("the timer's IRQ came late (IRQs off, or the hardware)",
                 positive(irq_handler_delay_ns));
    consider("the timer's own IRQ", timer_irq_ns);
    if (!blocking_thread.empty())
        consider(from_idle
                     ? "the idle task " + quoted(blocking_thread) + " leaving idle"
                     : "thread " + quoted(blocking_thread) + " running when the timer expired",
                 blocking_ns);
    for (const Interference& i : interference)
        consider(std::string(i.kind == Interference::Kind::irq   ? "IRQ"
                             : i.kind == Interference::Kind::nmi ? "NMI"
                                                                 : to_string(i.kind)) +
                     " " + quoted(i.name),
                 i.duration_ns);
    consider("nothing the trace saw (the scheduler, or a delay outside the kernel)", rest_ns());
    return best;
}

struct TimerlatAnalysis::Window {
    bool in_activation = false; // the IRQ sample seen, the thread's not yet
    std::uint64_t seq = 0;
    std::int64_t irq_ts = 0;
    std::int64_t irq_latency = 0;
    int run_pid = -1;
    bool timer_irq_seen = false;
    // the last IRQ or NMI that ran before the timer's (between activations)
    std::string prev_irq;
    std::int64_t prev_irq_end = -1;
    std::int64_t last_expected = -1; // the previous activation's timer expiry
    WakeupCause cause;
    bool stack_for_worst = false; // the stack that follows belongs to the CPU's worst
};

TimerlatAnalysis::TimerlatAnalysis(std::int64_t period_ns, std::size_t seconds,
                                   std::uint32_t histogram_limit_us, core::CpuList cpus)
    : m_period_ns(std::max<std::int64_t>(period_ns, 1)), m_seconds(seconds),
      m_limit_us(histogram_limit_us), m_cpus(std::move(cpus)) {}

void TimerlatAnalysis::add_text(std::string_view text) {
    while (!text.empty()) {
        const std::size_t end = std::min(text.find('\n'), text.size());
        if (auto line = parse_trace_line(text.substr(0, end)))
            add(*line);
        else if (!trim(text.substr(0, end)).empty() && trim(text.substr(0, end))[0] != '#')
            ++m_unparsed;
        text.remove_prefix(std::min(end + 1, text.size()));
    }
}

void TimerlatAnalysis::add(const TraceLine& line) {
    if (line.kind == Kind::lost) {
        m_lost += line.lost;
        return;
    }
    if (line.kind != Kind::stack_frame && !m_cpus.empty() && !m_cpus.contains(line.cpu)) {
        ++m_unparsed;
        return;
    }
    if (line.kind == Kind::stack_frame) {
        if (m_stack_cpu)
            if (auto it = m_done.find(*m_stack_cpu);
                it != m_done.end() && it->second.worst && it->second.worst->stack.size() < 64)
                it->second.worst->stack.push_back(line.name);
        return;
    }
    std::shared_ptr<Window>& slot = m_windows[line.cpu];
    if (!slot)
        slot = std::make_shared<Window>();
    Window& w = *slot;
    m_stack_cpu.reset();
    switch (line.kind) {
    case Kind::irq_sample: {
        w.in_activation = true;
        w.seq = line.seq;
        w.irq_ts = line.ts_ns;
        w.irq_latency = line.latency_ns;
        w.run_pid = line.pid;
        w.timer_irq_seen = false;
        w.cause = WakeupCause{};
        w.cause.activation = line.seq;
        w.cause.irq_latency_ns = line.latency_ns;
        w.cause.from_idle = line.pid == 0;
        const std::int64_t expected = line.ts_ns - line.latency_ns;
        if (!w.prev_irq.empty() && w.prev_irq_end > expected)
            w.cause.earlier_irq = w.prev_irq;
        // Activations the tracer skipped (its next timer would have been in the past):
        // gaps between expected timer times. The timestamps are whole µs, so a gap is
        // counted in periods rounded to the nearest.
        if (w.last_expected >= 0 && m_first_ns >= 0) {
            const double periods = double(expected - w.last_expected) / double(m_period_ns);
            if (periods >= 1.5) {
                const auto skipped = static_cast<std::uint64_t>(std::llround(periods)) - 1;
                TracedCore& core = m_done[line.cpu];
                core.missed += skipped;
                if (!core.missed_per_s.empty()) {
                    const auto s = std::min<std::size_t>(
                        std::size_t(positive(expected - m_first_ns) / 1'000'000'000),
                        core.missed_per_s.size() - 1);
                    core.missed_per_s[s] += std::uint32_t(std::min<std::uint64_t>(
                        skipped, std::numeric_limits<std::uint32_t>::max()));
                }
            }
        }
        w.last_expected = expected;
        break;
    }
    case Kind::irq_noise:
    case Kind::nmi_noise: {
        const bool nmi = line.kind == Kind::nmi_noise;
        if (!w.in_activation) {
            w.prev_irq = nmi ? "nmi" : line.name;
            w.prev_irq_end = line.start_ns + line.duration_ns;
        } else if (!nmi && !w.timer_irq_seen) {
            // The first IRQ to end after the timerlat sample is the timer's own: the
            // sample is written from inside it, the irq_noise when it returns.
            w.timer_irq_seen = true;
            w.cause.timer_irq_ns = line.duration_ns;
            w.cause.irq_handler_delay_ns = positive(line.start_ns - (w.irq_ts - w.irq_latency));
            if (w.cause.from_idle && w.cause.earlier_irq.empty())
                w.cause.idle_exit_ns = w.cause.irq_handler_delay_ns;
        } else {
            std::int64_t& sum = nmi ? w.cause.nmi_ns : w.cause.irq_ns;
            sum = sat_add(sum, line.duration_ns);
            note(w.cause, nmi ? Interference::Kind::nmi : Interference::Kind::irq,
                 nmi ? "nmi" : line.name, line.duration_ns);
        }
        break;
    }
    case Kind::softirq_noise:
    case Kind::thread_noise: {
        if (!w.in_activation)
            break;
        const bool thread = line.kind == Kind::thread_noise;
        // The thread that was running when the timer expired, as it leaves the CPU: how
        // long it kept the timerlat thread waiting. Its name:pid is in the event.
        // The idle task (pid 0) counts too: when the timer expired in idle, its noise is the
        // time it took to leave idle (rtla reports it as the blocking thread 'swapper/N').
        if (thread && w.cause.blocking_thread.empty() && w.run_pid >= 0) {
            const std::size_t colon = line.name.rfind(':');
            int pid = -1;
            if (colon != std::string::npos &&
                to_number(std::string_view(line.name).substr(colon + 1), pid) && pid == w.run_pid) {
                w.cause.blocking_thread = std::string(trim(line.name));
                w.cause.blocking_ns = line.duration_ns;
                break;
            }
        }
        std::int64_t& sum = thread ? w.cause.thread_ns : w.cause.softirq_ns;
        sum = sat_add(sum, line.duration_ns);
        note(w.cause, thread ? Interference::Kind::thread : Interference::Kind::softirq,
             std::string(trim(line.name)), line.duration_ns);
        break;
    }
    case Kind::thread_sample:
        finish(line.cpu, w, line);
        break;
    case Kind::stack_start:
        if (w.stack_for_worst) {
            m_stack_cpu = line.cpu;
            if (auto it = m_done.find(line.cpu); it != m_done.end() && it->second.worst)
                it->second.worst->stack.clear();
        }
        break;
    case Kind::stack_frame:
    case Kind::lost:
        break;
    }
}

void TimerlatAnalysis::finish(unsigned cpu, Window& w, const TraceLine& sample) {
    if (m_first_ns < 0)
        m_first_ns = sample.ts_ns;
    TracedCore& core = m_done[cpu];
    if (core.max_per_s_us.empty()) {
        core.histogram = LatencyHistogram(m_limit_us);
        core.max_per_s_us.assign(m_seconds + 1, 0);
        core.missed_per_s.assign(m_seconds + 1, 0);
    }
    const std::int64_t at = positive(sample.ts_ns - m_first_ns);
    const bool worst = core.histogram.empty() || sample.latency_ns > core.histogram.max_ns();
    core.histogram.add(sample.latency_ns);
    core.last_ns = at;
    const std::size_t s = std::min<std::size_t>(std::size_t(at / 1'000'000'000), m_seconds);
    const auto us = std::uint32_t(std::min<std::int64_t>(
        (sample.latency_ns + 999) / 1000, std::numeric_limits<std::uint32_t>::max()));
    core.max_per_s_us[s] = std::max(core.max_per_s_us[s], us);
    w.stack_for_worst = false;
    if (worst) {
        core.max_at_ns = at;
        // the split is known only when this activation's IRQ sample was seen
        if (w.in_activation && w.seq == sample.seq) {
            w.cause.at_s = double(at) / 1e9;
            w.cause.thread_latency_ns = sample.latency_ns;
            w.cause.split_known = true;
            core.worst = std::move(w.cause);
        } else {
            WakeupCause bare;
            bare.at_s = double(at) / 1e9;
            bare.activation = sample.seq;
            bare.thread_latency_ns = sample.latency_ns;
            core.worst = std::move(bare);
        }
        w.stack_for_worst = true;
    }
    w.in_activation = false;
    w.prev_irq.clear();
    w.prev_irq_end = -1;
}

} // namespace rtprov::selftest
