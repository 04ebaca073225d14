// SPDX-License-Identifier: Apache-2.0
// A kept self-test report read back (rtprov report): the JSON selftest_json writes,
// checked as strictly as any file rtprov did not just make itself. The round trip (write,
// read, write again gives the same bytes) is the unit test that keeps the two in step.
#include "provisioner/cli/selftest_render.hpp"

#include "provisioner/core/cpu_list.hpp"
#include "provisioner/core/error.hpp"
#include "provisioner/core/json.hpp"
#include "provisioner/core/profile.hpp"
#include "provisioner/core/sched_policy.hpp"
#include "provisioner/core/text.hpp"
#include "provisioner/selftest/underrun_watch.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <ctime>
#include <limits>

namespace rtprov::cli {

namespace {

using core::JsonValue;
using Kind = JsonValue::Kind;

// The largest histogram limit a report may name: its buckets are allocated (8 bytes each)
constexpr std::uint32_t k_max_limit_us = 1'000'000;
// and all cores' buckets together: 128 MiB, enough for 16 cores at the largest limit and
// a small board's memory
constexpr std::size_t k_max_buckets = std::size_t{1} << 24;
// The largest time or length the audio test's figures may hold (ms or s): far beyond any
// run, and small enough that a value kept to 3 decimals reads back as itself.
constexpr double k_max_audio_number = 1e9;
// The most channels and the highest rate a device is taken to report.
constexpr std::uint64_t k_max_audio_channels = 1024;
constexpr std::uint64_t k_max_audio_rate = 100'000'000;
// A thread's ids and CPU as the kernel has them: PID_MAX_LIMIT (include/linux/threads.h)
// and the largest NR_CPUS (arch/x86/Kconfig's MAXSMP).
constexpr std::uint64_t k_max_pid = 4'194'304;
constexpr std::uint64_t k_max_cpu = 8191;
// A thread's name: the kernel keeps 15 bytes (TASK_COMM_LEN); a kernel thread's may be
// longer (64, its workqueue name).
constexpr std::size_t k_max_comm = 64;
// The most values a report may hold (each about 100 bytes parsed): a report keeps at most
// selftest::k_max_late_seconds late seconds per core, so its histograms' non-empty
// buckets are what makes it large.
constexpr std::size_t k_max_values = std::size_t{1} << 20;

class Reader {
  public:
    explicit Reader(std::string file) : m_file(std::move(file)) {}

    [[noreturn]] void fail(const JsonValue& at, const std::string& message) const {
        throw Error(m_file + ":" + std::to_string(at.line) + ":" + std::to_string(at.column) +
                    ": " + message +
                    "; this is not a report rtprov selftest wrote, or it was "
                    "changed: run 'rtprov selftest' for a new one");
    }

    const JsonValue& member(const JsonValue& object, const std::string& key, Kind kind,
                            bool nullable = false) const {
        if (object.kind != Kind::object)
            fail(object, "expected an object, found " + std::string(core::describe(object.kind)));
        const JsonValue* value = object.find(key);
        if (!value)
            fail(object, "'" + key + "' is missing");
        if (value->kind != kind && !(nullable && value->kind == Kind::null))
            fail(*value, "'" + key + "' must be " + std::string(core::describe(kind)) +
                             (nullable ? " or null" : "") + ", not " +
                             std::string(core::describe(value->kind)));
        return *value;
    }

    std::string text(const JsonValue& o, const std::string& key) const {
        return member(o, key, Kind::string).text;
    }
    std::string text_or_empty(const JsonValue& o, const std::string& key) const {
        return member(o, key, Kind::string, true).text;
    }
    bool flag(const JsonValue& o, const std::string& key) const {
        return member(o, key, Kind::boolean).boolean;
    }
    double number(const JsonValue& o, const std::string& key, double low = 0,
                  double high = 1e15) const {
        const JsonValue& v = member(o, key, Kind::number);
        if (v.number < low || v.number > high)
            fail(v, "'" + key + "' is out of range");
        return v.number;
    }
    std::uint64_t whole(const JsonValue& o, const std::string& key,
                        std::uint64_t high = std::uint64_t(1) << 53) const {
        const JsonValue& v = member(o, key, Kind::number);
        const auto n = v.whole();
        if (!n || *n > high)
            fail(v, "'" + key + "' must be a whole number from 0 to " + std::to_string(high));
        return *n;
    }
    // One of 'words', as the report writes them.
    template <typename T>
    T word(const JsonValue& o, const std::string& key,
           std::initializer_list<std::pair<const char*, T>> words) const {
        const JsonValue& v = member(o, key, Kind::string);
        for (const auto& [name, value] : words)
            if (v.text == name)
                return value;
        fail(v, "'" + key + "' holds " + rtprov::quoted(v.text) +
                    ", which rtprov does not write there");
    }

    selftest::SelftestReport report(const JsonValue& root);

  private:
    selftest::CoreReport core_report(const JsonValue& c, std::size_t seconds);
    std::optional<selftest::AudioReport> audio(const JsonValue& root) const;
    std::optional<selftest::WhatRan> what_ran(const JsonValue& underrun, std::size_t index) const;
    std::optional<selftest::WakeupCause> cause(const JsonValue& c) const;

    std::string m_file;
    std::size_t m_buckets = 0; // allocated for the cores read so far
};

// µs to ns, held within what an int64 of ns holds (the numbers were range-checked, but a
// product of two of them need not be)
std::int64_t ns(double us) {
    return std::llround(std::clamp(us, -9e15, 9e15) * 1000.0);
}

// The histogram's sum from its average: held at the largest int64 rather than wrapping.
std::int64_t sum_ns(std::int64_t avg_ns, std::uint64_t count) {
    std::int64_t sum = 0;
    if (__builtin_mul_overflow(avg_ns, static_cast<std::int64_t>(count), &sum))
        return std::numeric_limits<std::int64_t>::max();
    return sum;
}

std::optional<selftest::WakeupCause> Reader::cause(const JsonValue& c) const {
    const JsonValue& v = member(c, "cause", Kind::object, true);
    if (v.kind == Kind::null)
        return std::nullopt;
    selftest::WakeupCause w;
    w.at_s = number(v, "at_s");
    w.activation = whole(v, "activation");
    w.thread_latency_ns = ns(number(v, "thread_latency_us"));
    w.split_known = flag(v, "split_known");
    w.irq_latency_ns = ns(number(v, "irq_latency_us"));
    const JsonValue& delay = member(v, "irq_handler_delay_us", Kind::number, true);
    w.irq_handler_delay_ns = delay.kind == Kind::null ? -1 : ns(number(v, "irq_handler_delay_us"));
    w.from_idle = flag(v, "from_idle");
    w.idle_exit_ns = ns(number(v, "idle_exit_us"));
    w.earlier_irq = text_or_empty(v, "earlier_irq");
    w.timer_irq_ns = ns(number(v, "timer_irq_us"));
    w.blocking_thread = text_or_empty(v, "blocking_thread");
    w.blocking_ns = ns(number(v, "blocking_us"));
    w.irq_ns = ns(number(v, "irq_us"));
    w.softirq_ns = ns(number(v, "softirq_us"));
    w.thread_ns = ns(number(v, "thread_us"));
    w.nmi_ns = ns(number(v, "nmi_us"));
    for (const JsonValue& i : member(v, "interference", Kind::array).items) {
        if (w.interference.size() == selftest::WakeupCause::k_kept)
            fail(i,
                 "more than " + std::to_string(selftest::WakeupCause::k_kept) + " interferences");
        w.interference.push_back(
            {word<selftest::Interference::Kind>(i, "kind",
                                                {{"irq", selftest::Interference::Kind::irq},
                                                 {"softirq", selftest::Interference::Kind::softirq},
                                                 {"thread", selftest::Interference::Kind::thread},
                                                 {"nmi", selftest::Interference::Kind::nmi}}),
             text(i, "name"), ns(number(i, "us")), whole(i, "count")});
    }
    w.interference_left_out = whole(v, "interference_left_out");
    for (const JsonValue& f : member(v, "stack", Kind::array).items) {
        if (f.kind != Kind::string)
            fail(f, "a stack frame must be a string");
        w.stack.push_back(f.text);
    }
    return w;
}

selftest::CoreReport Reader::core_report(const JsonValue& c, std::size_t seconds) {
    selftest::CoreReport core;
    const std::initializer_list<std::pair<const char*, selftest::CoreRole>> roles = {
        {"reserved", selftest::CoreRole::reserved},
        {"housekeeping", selftest::CoreRole::housekeeping},
        {"unassigned", selftest::CoreRole::unassigned}};
    core.role = word(c, "role", roles);
    core.threshold_role = word(c, "threshold_of", roles);
    selftest::CoreLatency& l = core.latency;
    l.cpu = unsigned(whole(c, "cpu", core::CpuList::k_max_cpu));
    l.idle = word<selftest::IdlePolicy>(
        c, "idle",
        {{"default", selftest::IdlePolicy::system_default}, {"held", selftest::IdlePolicy::held}});
    l.overruns = whole(c, "overruns");
    l.min_us = number(c, "min_us");
    l.avg_us = number(c, "avg_us");
    l.max_us = number(c, "max_us");
    l.p50_us = number(c, "p50_us");
    l.p99_us = number(c, "p99_us");
    l.p999_us = number(c, "p99_9_us");
    l.p9999_us = number(c, "p99_99_us");
    l.max_at_s = number(c, "max_at_s");
    l.measured_s = number(c, "measured_s");
    l.stopped_run = flag(c, "stopped_run");
    l.cause = cause(c);
    core.threshold_us = unsigned(whole(c, "threshold_us", 0xFFFFFFFFu));
    core.above = whole(c, "above_threshold");
    core.planned = whole(c, "planned_wakeups");
    core.max_missed_per_mille = unsigned(whole(c, "max_missed_per_mille", 1000));
    core.missed_too_many =
        l.overruns * 1000 > std::uint64_t(core.max_missed_per_mille) * core.planned;
    core.late_seconds_total = whole(c, "late_seconds_total", seconds + 1);
    const JsonValue& late = member(c, "late_seconds", Kind::array);
    if (late.items.size() >
        std::min<std::uint64_t>(core.late_seconds_total, selftest::k_max_late_seconds))
        fail(late, "'late_seconds' holds " + std::to_string(late.items.size()) +
                       " seconds; rtprov keeps at most " +
                       std::to_string(selftest::k_max_late_seconds) +
                       " and no more than 'late_seconds_total'");
    for (const JsonValue& s : late.items) {
        const auto at = whole(s, "at_s", seconds);
        if (!core.late_seconds.empty() && at <= core.late_seconds.back().at_s)
            fail(s, "'at_s' does not come after the second before it");
        const auto max = whole(s, "max_us", 0xFFFFFFFFu);
        const auto missed = whole(s, "missed", 0xFFFFFFFFu);
        core.late_seconds.push_back({unsigned(at), std::uint32_t(max), std::uint32_t(missed)});
    }
    const JsonValue& h = member(c, "histogram", Kind::object);
    if (whole(h, "bucket_us") != 1)
        fail(*h.find("bucket_us"), "'bucket_us' must be 1");
    const auto limit = std::uint32_t(whole(h, "limit_us", k_max_limit_us));
    m_buckets += std::size_t{limit} + 1;
    if (m_buckets > k_max_buckets)
        fail(*h.find("limit_us"), "the histograms' limits add up to more than " +
                                      std::to_string(k_max_buckets) +
                                      " buckets, more than rtprov reads back");
    std::vector<std::uint64_t> buckets(std::size_t{limit} + 1, 0);
    const JsonValue& counts = member(h, "counts", Kind::object);
    for (std::size_t k = 0; k < counts.names.size(); ++k) {
        const std::string& key = counts.names[k];
        const JsonValue& count = counts.items[k];
        std::uint64_t us = 0;
        const auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), us);
        if (ec != std::errc() || end != key.data() + key.size() || us > limit)
            fail(count, "bucket " + rtprov::quoted(key) + " is not a whole number of µs up to " +
                            std::to_string(limit));
        const auto n = count.whole();
        if (!n)
            fail(count, "bucket " + rtprov::quoted(key) + " must hold a whole number of samples");
        buckets[us] = *n;
    }
    l.histogram = selftest::LatencyHistogram::from_counts(
        limit, std::move(buckets), whole(h, "overflow"), ns(l.min_us), ns(l.max_us),
        sum_ns(ns(l.avg_us), whole(c, "cycles")));
    l.cycles = whole(c, "cycles");
    if (l.histogram.count() != l.cycles)
        fail(h, "the histogram holds " + std::to_string(l.histogram.count()) +
                    " samples, the report says " + std::to_string(l.cycles));
    // the verdict is judged again from the figures, as selftest judged it
    if (l.histogram.count_above(core.threshold_us) != core.above)
        fail(*c.find("above_threshold"),
             "'above_threshold' is " + std::to_string(core.above) + ", the histogram holds " +
                 std::to_string(l.histogram.count_above(core.threshold_us)) + " above " +
                 std::to_string(core.threshold_us) + " µs");
    core.passed = flag(c, "passed");
    if (core.passed != selftest::core_passes(core))
        fail(*c.find("passed"), "'passed' does not follow from the core's figures");
    return core;
}

std::optional<selftest::AudioReport> Reader::audio(const JsonValue& root) const {
    const JsonValue& v = member(root, "audio", Kind::object, true);
    if (v.kind == Kind::null)
        return std::nullopt;
    const JsonValue& r = member(v, "result", Kind::object);
    auto time = [&](const JsonValue& o, const std::string& key) {
        return number(o, key, 0, k_max_audio_number);
    };
    // the least audio left: a time, or null for none measured (-1)
    auto left = [&](const JsonValue& o, const std::string& key) {
        return member(o, key, Kind::number, true).kind == Kind::null ? -1.0 : time(o, key);
    };
    selftest::AudioResult a;
    a.device = text(r, "device");
    a.card = text_or_empty(r, "card");
    if (member(r, "through", Kind::string, true).kind == Kind::string)
        a.through = word<std::string>(r, "through", {{"pipewire", "pipewire"}, {"jack", "jack"}});
    a.loopback = flag(r, "loopback");
    a.rate = unsigned(whole(r, "rate", k_max_audio_rate));
    a.format = text(r, "format");
    a.channels = unsigned(whole(r, "channels", k_max_audio_channels));
    a.period_frames = unsigned(whole(r, "period_frames", 0xFFFFFFFFu));
    a.buffer_frames = unsigned(whole(r, "buffer_frames", 0xFFFFFFFFu));
    const JsonValue& policy = member(r, "policy", Kind::string);
    const std::optional<core::SchedPolicy> p = core::sched_policy_from_word(policy.text);
    if (!p)
        fail(policy, "'policy' holds " + rtprov::quoted(policy.text) +
                         ", which rtprov does not write there");
    a.policy = *p;
    a.priority = int(whole(r, "priority", 99));
    a.cpus = text(r, "cpus");
    if (!a.cpus.empty() && !core::parse_cpu_list(a.cpus))
        fail(*r.find("cpus"), "'cpus' holds " + rtprov::quoted(a.cpus) + ", not a CPU list");
    a.memory_locked = flag(r, "memory_locked");
    a.cpu_ms = time(r, "cpu_ms");
    a.played_s = time(r, "played_s");
    a.frames_written = whole(r, "frames_written");
    a.underruns = whole(r, "underruns");
    a.recovery_ms_total = time(r, "recovery_ms_total");
    a.recovery_ms_max = time(r, "recovery_ms_max");
    a.longest_gap_ms = time(r, "longest_gap_ms");
    a.min_left_ms = left(r, "min_left_ms");
    a.min_left_at_s = time(r, "min_left_at_s");
    const JsonValue& xruns = member(r, "server_xruns", Kind::number, true);
    if (xruns.kind == Kind::number)
        a.server_xruns = whole(r, "server_xruns");
    a.interrupted = flag(r, "interrupted");
    a.stopped_because = text_or_empty(r, "stopped_because");
    const JsonValue& underruns = member(r, "underrun_list", Kind::array);
    if (underruns.items.size() > std::min<std::uint64_t>(a.underruns, selftest::k_max_audio_events))
        fail(underruns, "'underrun_list' holds " + std::to_string(underruns.items.size()) +
                            " underruns; rtprov keeps at most " +
                            std::to_string(selftest::k_max_audio_events) +
                            " and no more than 'underruns'");
    for (const JsonValue& u : underruns.items) {
        const double at = time(u, "at_s");
        if (!a.underrun_list.empty() && at < a.underrun_list.back().at_s)
            fail(u, "'at_s' comes before the underrun before it");
        a.underrun_list.push_back(
            {at, time(u, "recovery_ms"), what_ran(u, a.underrun_list.size())});
    }
    const JsonValue& seconds = member(r, "seconds", Kind::array);
    if (seconds.items.size() > selftest::k_max_report_audio_seconds)
        fail(seconds, "'seconds' holds " + std::to_string(seconds.items.size()) +
                          " seconds; rtprov keeps at most " +
                          std::to_string(selftest::k_max_report_audio_seconds));
    for (const JsonValue& s : seconds.items) {
        const auto at = whole(s, "at_s", selftest::k_max_audio_seconds);
        if (!a.seconds.empty() && at <= a.seconds.back().at_s)
            fail(s, "'at_s' does not come after the second before it");
        a.seconds.push_back({unsigned(at), left(s, "min_left_ms"),
                             std::uint32_t(whole(s, "underruns", 0xFFFFFFFFu))});
    }
    const std::uint64_t total = whole(v, "seconds_total", selftest::k_max_audio_seconds);
    if (total < a.seconds.size())
        fail(*v.find("seconds_total"), "'seconds_total' is " + std::to_string(total) +
                                           ", fewer than the " + std::to_string(a.seconds.size()) +
                                           " seconds the report holds");
    // judged again, as selftest judged it: the headroom from the percent and the buffer
    selftest::AudioReport audio =
        selftest::judge_audio(std::move(a), unsigned(whole(v, "min_headroom_percent", 100)));
    audio.seconds_total = total;
    const double headroom = time(v, "min_headroom_ms");
    if (std::llround(headroom * 1000) != std::llround(audio.min_headroom_ms * 1000))
        fail(*v.find("min_headroom_ms"), "'min_headroom_ms' is " + fixed(headroom, 3) + ", but " +
                                             std::to_string(audio.min_headroom_percent) +
                                             " % of the buffer is " +
                                             fixed(audio.min_headroom_ms, 3) + " ms");
    audio.passed = flag(v, "passed");
    if (audio.passed != selftest::audio_passes(audio))
        fail(*v.find("passed"), "'passed' does not follow from the audio test's figures");
    return audio;
}

// What ran at the underrun 'index' (from 0): looked at for the first ones only.
std::optional<selftest::WhatRan> Reader::what_ran(const JsonValue& u, std::size_t index) const {
    const JsonValue& v = member(u, "running", Kind::object, true);
    if (v.kind == Kind::null)
        return std::nullopt;
    if (index >= selftest::k_max_underruns_looked_at)
        fail(v, "'running' is set for underrun " + std::to_string(index + 1) +
                    "; rtprov looks at what ran for the first " +
                    std::to_string(selftest::k_max_underruns_looked_at) + " only");
    selftest::WhatRan ran;
    ran.cpus = text(v, "cpus");
    const core::Result<core::CpuList> cpus = core::parse_cpu_list(ran.cpus);
    if (!cpus || cpus->empty())
        fail(*v.find("cpus"), "'cpus' holds " + rtprov::quoted(ran.cpus) + ", not a CPU list");
    const JsonValue& threads = member(v, "threads", Kind::array);
    if (threads.items.size() > selftest::k_max_running_threads)
        fail(threads, "'threads' holds " + std::to_string(threads.items.size()) +
                          " threads; rtprov keeps at most " +
                          std::to_string(selftest::k_max_running_threads));
    for (const JsonValue& t : threads.items) {
        selftest::RunningThread thread;
        thread.pid = int(whole(t, "pid", k_max_pid));
        thread.tid = int(whole(t, "tid", k_max_pid));
        thread.comm = text(t, "comm");
        if (thread.comm.size() > k_max_comm || core::one_line(thread.comm) != thread.comm)
            fail(*t.find("comm"), "'comm' is not a thread's name on one line of at most " +
                                      std::to_string(k_max_comm) + " bytes");
        const JsonValue& policy = member(t, "policy", Kind::string, true);
        if (policy.kind == Kind::null)
            thread.policy = std::nullopt;
        else if (!(thread.policy = core::sched_policy_from_word(policy.text)))
            fail(policy, "'policy' holds " + rtprov::quoted(policy.text) +
                             ", which rtprov does not write there");
        thread.priority = int(whole(t, "priority", 99));
        thread.cpu = unsigned(whole(t, "cpu", k_max_cpu));
        if (!cpus->contains(thread.cpu))
            fail(*t.find("cpu"), "'cpu' is " + std::to_string(thread.cpu) + ", not one of 'cpus' " +
                                     rtprov::quoted(ran.cpus));
        const std::string state = text(t, "state");
        if (state.size() != 1 || state[0] <= ' ' || state[0] > '~')
            fail(*t.find("state"), "'state' holds " + rtprov::quoted(state) +
                                       ", not one character as /proc shows a thread's state");
        thread.state = state[0];
        if (!ran.threads.empty() && selftest::listed_before(thread, ran.threads.back()))
            fail(t, "the thread ranks above the one before it; rtprov lists the highest "
                    "priority first");
        ran.threads.push_back(std::move(thread));
    }
    ran.more = whole(v, "more");
    if (ran.more > 0 && ran.threads.size() < selftest::k_max_running_threads)
        fail(*v.find("more"), "'more' is " + std::to_string(ran.more) + ", but only " +
                                  std::to_string(ran.threads.size()) +
                                  " threads are listed: rtprov counts only those past " +
                                  std::to_string(selftest::k_max_running_threads));
    return ran;
}

selftest::SelftestReport Reader::report(const JsonValue& root) {
    if (text(root, "schema") != "rtprov.selftest")
        fail(*root.find("schema"), "'schema' is " + rtprov::quoted(root.find("schema")->text) +
                                       ", not 'rtprov.selftest'");
    // 2 added the audio test, which 'passed' requires; 1 has none
    const std::uint64_t version = whole(root, "schema_version");
    if (version != 1 && version != 2)
        fail(*root.find("schema_version"), "'schema_version' is " + std::to_string(version) +
                                               ", not 1 or 2, the versions this rtprov reads");
    selftest::SelftestReport r;
    r.started_at = text(root, "started_at");
    std::tm tm{};
    const char* end = strptime(r.started_at.c_str(), "%Y-%m-%dT%H:%M:%SZ", &tm);
    if (!end || *end != '\0')
        fail(*root.find("started_at"), "'started_at' is not a UTC time as rtprov writes it");
    r.started_unix = timegm(&tm);
    r.profile = text_or_empty(root, "profile");
    const JsonValue& k = member(root, "kernel", Kind::object);
    r.kernel_release = text(k, "release");
    r.kernel.version = text(k, "version");
    r.kernel.preempt_rt = flag(k, "preempt_rt");
    r.kernel.push_ipi =
        word<selftest::PushIpiState>(k, "rt_push_ipi",
                                     {{"on", selftest::PushIpiState::on},
                                      {"off", selftest::PushIpiState::off},
                                      {"unknown", selftest::PushIpiState::unknown},
                                      {"unreadable", selftest::PushIpiState::unreadable}});
    r.complete = flag(root, "complete");
    r.interrupted = flag(root, "interrupted");
    const JsonValue& p = member(root, "parameters", Kind::object);
    r.parameters.duration_ms = unsigned(
        std::llround(number(p, "duration_s", 0, core::k_max_selftest_duration_s) * 1000.0));
    r.parameters.interval_us = unsigned(whole(p, "interval_us", 1'000'000));
    r.parameters.priority = int(whole(p, "priority", 99));
    r.parameters.load_cpus = text(p, "load_cpus");
    r.parameters.stop_above_us = unsigned(whole(p, "stop_above_us", 10'000'000));
    r.parameters.method =
        word<std::string>(p, "method", {{"rtprov", "rtprov"}, {"timerlat", "timerlat"}});
    const JsonValue& t = member(root, "trace", Kind::object);
    r.trace.asked = flag(t, "asked");
    r.trace.traced = flag(t, "traced");
    r.trace.not_traced_because = text_or_empty(t, "not_traced_because");
    r.trace.lost_events = whole(t, "lost_events");
    r.trace.unparsed_lines = whole(t, "unparsed_lines");
    r.trace.kept_trace = text_or_empty(t, "kept_trace");
    const std::size_t seconds = (r.parameters.duration_ms + 999) / 1000;
    for (const JsonValue& c : member(root, "cores", Kind::array).items) {
        selftest::CoreReport core = core_report(c, seconds);
        for (const selftest::CoreReport& before : r.cores)
            if (before.latency.cpu == core.latency.cpu && before.latency.idle == core.latency.idle)
                fail(c, "CPU " + std::to_string(core.latency.cpu) +
                            " is given twice for one idle policy");
        r.cores.push_back(std::move(core));
    }
    const JsonValue& probe = member(root, "pi_probe", Kind::object, true);
    if (probe.kind == Kind::object) {
        selftest::PiProbeReport pr;
        selftest::PiProbeResult& res = pr.result;
        res.workers = unsigned(whole(probe, "workers", 1024));
        res.critical_section_us = number(probe, "critical_section_us");
        res.acquisitions = whole(probe, "acquisitions");
        res.worker_acquisitions = whole(probe, "worker_acquisitions");
        res.avg_wait_us = number(probe, "avg_wait_us");
        res.worst_wait_us = number(probe, "worst_wait_us");
        res.worst_wait_at_s = number(probe, "worst_wait_at_s");
        pr.limit_us = number(probe, "limit_us");
        res.windows = whole(probe, "windows");
        res.schedstat_seen = flag(probe, "schedstat_seen");
        for (const JsonValue& s : member(probe, "starved", Kind::array).items) {
            selftest::StarvedThread st;
            st.tid = pid_t(whole(s, "tid", 1u << 22));
            st.name = text(s, "name");
            st.window_start = std::chrono::nanoseconds(ns(number(s, "window_start_s") * 1e6));
            st.window = std::chrono::nanoseconds(ns(number(s, "window_ms") * 1000.0));
            st.wait_ns = std::uint64_t(ns(number(s, "wait_ms") * 1000.0));
            st.run_ns = std::uint64_t(ns(number(s, "run_ms") * 1000.0));
            res.starved.push_back(std::move(st));
        }
        pr.passed = flag(probe, "passed");
        if (pr.passed != selftest::probe_passes(pr))
            fail(*probe.find("passed"), "'passed' does not follow from the probe's figures");
        r.pi_probe = std::move(pr);
    }
    if (version >= 2)
        r.audio = audio(root);
    // advice, written since issue 38: absent from the earlier reports of this version
    if (root.find("players"))
        for (const JsonValue& player : member(root, "players", Kind::array).items) {
            selftest::PlayerAdvice a;
            a.app = text_or_empty(player, "app");
            a.name = text(player, "name");
            a.now = text_or_empty(player, "now");
            a.now_default = flag(player, "now_default");
            a.now_deadline_ms = number(player, "now_deadline_ms", 0, k_max_audio_number);
            a.where = text(player, "where");
            a.problem = text_or_empty(player, "problem");
            if (member(player, "now_holds", Kind::boolean, true).kind != Kind::null)
                a.now_holds = flag(player, "now_holds");
            a.supports = text_or_empty(player, "supports");
            a.need_ms = number(player, "need_ms", 0, k_max_audio_number);
            a.deadline_ms = number(player, "deadline_ms", 0, k_max_audio_number);
            a.setting = text_or_empty(player, "setting");
            r.players.push_back(std::move(a));
        }
    selftest::conclude(r);
    if (flag(root, "passed") != r.passed)
        fail(*root.find("passed"),
             "'passed' does not follow from the cores, the probe and the audio test");
    return r;
}

} // namespace

selftest::SelftestReport read_selftest_json(const std::string& text, const std::string& file) {
    core::JsonParse parsed = core::parse_json(text, k_max_values);
    if (!parsed.value)
        throw Error(file + ":" + std::to_string(parsed.problem.line) + ":" +
                    std::to_string(parsed.problem.column) + ": " + parsed.problem.message +
                    "; this is not a report rtprov selftest wrote: run 'rtprov selftest' for a "
                    "new one");
    return Reader(file).report(*parsed.value);
}

} // namespace rtprov::cli
