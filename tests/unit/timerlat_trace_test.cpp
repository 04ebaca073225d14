// SPDX-License-Identifier: Apache-2.0
#include "provisioner/selftest/timerlat_trace.hpp"

#include "tests/unit/catch.hpp"

#include <fstream>
#include <sstream>
#include <string>

using namespace rtprov::selftest;
using Kind = TraceLine::Kind;

namespace {

std::string fixture(const std::string& name) {
    std::ifstream in(std::string(RTPROV_SOURCE_DIR) + "/tests/fixtures/timerlat/" + name);
    REQUIRE(in);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

// The analysis of a whole fixture file: a 1000 µs period and a 10 s run.
TimerlatAnalysis analyse(const std::string& text, std::int64_t period_us = 1000) {
    TimerlatAnalysis analysis(period_us * 1000, 10);
    analysis.add_text(text);
    return analysis;
}

} // namespace

TEST_CASE("timerlat's sample lines are read with their CPU, task, time and latency") {
    auto irq =
        parse_trace_line("          <idle>-0       [002] d.h1.   812.004021: #5012  context    irq "
                         "timer_latency      2211 ns");
    REQUIRE(irq);
    CHECK(irq->kind == Kind::irq_sample);
    CHECK(irq->cpu == 2);
    CHECK(irq->task == "<idle>");
    CHECK(irq->pid == 0);
    CHECK(irq->ts_ns == 812'004'021'000);
    CHECK(irq->seq == 5012);
    CHECK(irq->latency_ns == 2211);

    // a task name with spaces and dashes, an older kernel's four flag columns
    auto thread = parse_trace_line(
        " my-app worker-1201    [003] ....    99.000100: #7 context thread timer_latency 41800 ns");
    REQUIRE(thread);
    CHECK(thread->kind == Kind::thread_sample);
    CHECK(thread->task == "my-app worker");
    CHECK(thread->pid == 1201);
    CHECK(thread->cpu == 3);
    CHECK(thread->latency_ns == 41800);
}

TEST_CASE("osnoise lines are read with names that hold colons, dashes and spaces") {
    auto irq = parse_trace_line("     aplay-733     [001] d.h2.   50.000010: irq_noise: "
                                "snd_hda_intel:card0:33 start 50.000001234 duration 5120 ns");
    REQUIRE(irq);
    CHECK(irq->kind == Kind::irq_noise);
    CHECK(irq->name == "snd_hda_intel:card0:33");
    CHECK(irq->start_ns == 50'000'001'234);
    CHECK(irq->duration_ns == 5120);

    auto thread = parse_trace_line("  kworker/1:2-88 [001] d..3.  50.000400: thread_noise: "
                                   "kworker/1:2:88 start 50.000011000 duration 300123 ns");
    REQUIRE(thread);
    CHECK(thread->kind == Kind::thread_noise);
    CHECK(thread->name == "kworker/1:2:88");
    CHECK(thread->task == "kworker/1:2");

    auto softirq = parse_trace_line("  <idle>-0 [001] ..s2.  50.000500: softirq_noise:   "
                                    "NET_RX:3 start 50.000490000 duration 7000 ns");
    REQUIRE(softirq);
    CHECK(softirq->kind == Kind::softirq_noise);
    CHECK(softirq->name == "NET_RX:3");

    auto nmi = parse_trace_line(
        "  <idle>-0 [001] d.Z1.  50.000600: nmi_noise: start 50.000590000 duration 900 ns");
    REQUIRE(nmi);
    CHECK(nmi->kind == Kind::nmi_noise);
    CHECK(nmi->duration_ns == 900);
}

TEST_CASE("stack lines and lost events are read; anything else is not a trace line") {
    auto start = parse_trace_line("  timerlat/3-412 [003] ....1.  7.000000: <stack trace>");
    REQUIRE(start);
    CHECK(start->kind == Kind::stack_start);
    auto frame = parse_trace_line(" => native_safe_halt");
    REQUIRE(frame);
    CHECK(frame->kind == Kind::stack_frame);
    CHECK(frame->name == "native_safe_halt");
    auto lost = parse_trace_line("CPU:2 [LOST 1290 EVENTS]");
    REQUIRE(lost);
    CHECK(lost->kind == Kind::lost);
    CHECK(lost->cpu == 2);
    CHECK(lost->lost == 1290);

    for (const char* line :
         {"", "# tracer: timerlat", "CPU:2 [LOST many EVENTS]", "garbage",
          "  x-1 [001] d.h1. 7: #1 context irq timer_latency 12 ns",             // no fraction
          "  412 [001] d.h1. 7.000001: #1 context irq timer_latency 12 ns",      // no '-pid'
          "  x-1 [001] d.h1. 7.000001: #1 context user-ret timer_latency 12 ns", // user-ret
          "  x-1 [001] d.h1. 7.000001: #1 context irq timer_latency -12 ns",
          "  x-1 [001] d.h1. 7.000001: irq_noise: local_timer:236 start 7.0 duration 1 ns x",
          "  x-1 [001] d.h1. 7.000001: sched_switch: prev_comm=x",
          "  x-1 [abc] d.h1. 7.000001: #1 context irq timer_latency 12 ns",
          "  x-1 [001] d.h1. 99999999999999999999.000001: #1 context irq timer_latency 1 ns"})
        CHECK_FALSE(parse_trace_line(line));
}

TEST_CASE("a wake-up held up by a higher-priority thread: the thread by name (recorded)") {
    // tests/fixtures/timerlat/README.md: the PREEMPT_RT guest, a SCHED_FIFO 60 thread
    // spinning 100 ms on CPU 3 while timerlat measures there at FIFO 30
    const TimerlatAnalysis a = analyse(fixture("thread-blocked.txt"));
    REQUIRE(a.cores().count(3) == 1);
    const TracedCore& core = a.cores().at(3);
    CHECK(core.histogram.count() == 3);
    REQUIRE(core.worst);
    const WakeupCause& w = *core.worst;
    CHECK(w.split_known);
    CHECK(w.activation == 195);
    CHECK(w.thread_latency_ns == 100'832'771);
    CHECK(w.from_idle); // the timer expired in idle; the burner woke and ran first
    CHECK(w.blocking_thread == "swapper/3:0");
    CHECK(w.thread_ns == 99'786'275);
    REQUIRE(w.interference.size() == 4);
    CHECK(w.interference[2].name == "local_timer:236");
    CHECK(w.interference[2].count == 25);
    CHECK(w.interference[3].kind == Interference::Kind::thread);
    CHECK(w.interference[3].name == "rtprov-burner:1233");
    CHECK(w.main_part() ==
          std::pair<std::string, std::int64_t>{"thread 'rtprov-burner:1233'", 99'786'275});
    CHECK(w.stack.size() == 13);
    CHECK(w.stack.front() == "timerlat_irq");
}

TEST_CASE("a thread cannot hide behind a name that looks like the CPU field") {
    // A thread names itself (PR_SET_NAME, up to 15 bytes): brackets, digits, a whole fake
    // header. The recorded burner, renamed so, is still the cause, and every line reads.
    for (const std::string name : {"burn [1]", "a-1 [2] x 1.0:", "b-2 [003]", "[7]"}) {
        std::string text = fixture("thread-blocked.txt");
        for (std::size_t at = 0; (at = text.find("rtprov-burner", at)) != std::string::npos;
             at += name.size())
            text.replace(at, 13, name);
        const TimerlatAnalysis a = analyse(text);
        CHECK(a.unparsed_lines() == 0);
        REQUIRE(a.cores().count(3) == 1);
        REQUIRE(a.cores().at(3).worst);
        CHECK(a.cores().at(3).worst->main_part() ==
              std::pair<std::string, std::int64_t>{"thread '" + name + ":1233'", 99'786'275});
        CHECK(a.cores().size() == 1);
    }
    CHECK(analyse(fixture("thread-blocked.txt")).unparsed_lines() == 0);
    CHECK(analyse(fixture("irq-storm.txt")).unparsed_lines() == 0);
    CHECK(analyse(fixture("idle-exit.txt")).unparsed_lines() == 0);
    // lines of a CPU that was not traced are not read as a core's
    TimerlatAnalysis only_2(1'000'000, 10, 10'000, rtprov::core::CpuList::range(2, 2));
    only_2.add_text(fixture("thread-blocked.txt"));
    CHECK(only_2.cores().empty());
    CHECK(only_2.unparsed_lines() > 0);
    // a CPU no kernel has is not a line rtprov reads (nor a core it keeps)
    CHECK_FALSE(
        parse_trace_line("  x-1 [4096] d.h1. 7.000001: #1 context irq timer_latency 12 ns"));
    CHECK(parse_trace_line("  x-1 [4095] d.h1. 7.000001: #1 context irq timer_latency 12 ns"));
}

TEST_CASE("a wake-up held up by an interrupt storm: the IRQ and its thread by name (recorded)") {
    // the guest's second serial port storming CPU 2, its IRQ thread at FIFO 50 above
    // timerlat's 30; the middle 18025 lines of the worst activation are cut (the file's
    // header says which), so its IRQ sums are short of the whole
    const TimerlatAnalysis a = analyse(fixture("irq-storm.txt"));
    CHECK(a.unparsed_lines() == 0);
    const WakeupCause& w = *a.cores().at(2).worst;
    CHECK(w.activation == 372);
    CHECK(w.thread_latency_ns == 168'246'678);
    REQUIRE(w.interference.size() == 4);
    CHECK(w.interference[1].kind == Interference::Kind::irq);
    CHECK(w.interference[1].name == "ttyS1:3");
    CHECK(w.interference[1].count == 153);
    CHECK(w.interference[2].kind == Interference::Kind::thread);
    CHECK(w.interference[2].name == "irq/3-ttyS1:1238");
    CHECK(w.interference[2].duration_ns == 147'117'617);
    CHECK(w.main_part() ==
          std::pair<std::string, std::int64_t>{"thread 'irq/3-ttyS1:1238'", 147'117'617});
}

TEST_CASE("a wake-up whose timer IRQ came late to an idle CPU: exit from idle (recorded)") {
    // the guest's idle CPU 1 (qemu TCG: the virtual CPU itself ran late)
    const TimerlatAnalysis a = analyse(fixture("idle-exit.txt"));
    const WakeupCause& w = *a.cores().at(1).worst;
    CHECK(w.thread_latency_ns == 3'883'105);
    CHECK(w.irq_latency_ns == 3'748'309);
    CHECK(w.from_idle);
    CHECK(w.earlier_irq.empty());
    CHECK(w.irq_handler_delay_ns == 3'742'951);
    CHECK(w.idle_exit_ns == 3'742'951);
    CHECK(w.timer_irq_ns == 94'770);
    CHECK(w.blocking_thread == "swapper/1:0");
    CHECK(w.blocking_ns == 27'262);
    CHECK(w.main_part().first == "exit from idle");
    CHECK(w.stack.size() == 13);
    CHECK(w.stack[6] == "pv_native_safe_halt");
}

TEST_CASE("a stack after a wake-up that is not the worst does not replace the worst one's") {
    const std::string text =
        "  <idle>-0 [000] d.h1. 1.000002: #1 context irq timer_latency 2000 ns\n"
        "  timerlat/0-9 [000] ..... 1.000900: #1 context thread timer_latency 900000 ns\n"
        "  timerlat/0-9 [000] ....1 1.000901: <stack trace>\n"
        " => worst_frame\n"
        "  <idle>-0 [000] d.h1. 1.001002: #2 context irq timer_latency 2000 ns\n"
        "  timerlat/0-9 [000] ..... 1.001004: #2 context thread timer_latency 4000 ns\n"
        "  timerlat/0-9 [000] ....1 1.001005: <stack trace>\n"
        " => other_frame\n";
    const TimerlatAnalysis a = analyse(text);
    CHECK(a.cores().at(0).worst->stack == std::vector<std::string>{"worst_frame"});
}

TEST_CASE("skipped activations count as missed wake-ups, in the second they fell in") {
    // expected times 1.000000, 1.001000, then 1.005000: three periods skipped
    const std::string text =
        "  <idle>-0 [000] d.h1. 1.000002: #1 context irq timer_latency 2000 ns\n"
        "  timerlat/0-9 [000] ..... 1.000004: #1 context thread timer_latency 4000 ns\n"
        "  <idle>-0 [000] d.h1. 1.001002: #2 context irq timer_latency 2000 ns\n"
        "  timerlat/0-9 [000] ..... 1.001004: #2 context thread timer_latency 4000 ns\n"
        "  <idle>-0 [000] d.h1. 1.005002: #3 context irq timer_latency 2000 ns\n"
        "  timerlat/0-9 [000] ..... 1.005004: #3 context thread timer_latency 4000 ns\n"
        "CPU:0 [LOST 12 EVENTS]\n"
        "not a trace line\n";
    const TimerlatAnalysis a = analyse(text);
    const TracedCore& core = a.cores().at(0);
    CHECK(core.missed == 3);
    CHECK(core.missed_per_s[0] == 3);
    CHECK(core.histogram.count() == 3);
    CHECK(a.lost_events() == 12);
    CHECK(a.unparsed_lines() == 1);
}

TEST_CASE("a thread sample whose IRQ line was not seen keeps its latency, not a split") {
    const std::string text =
        "  timerlat/0-9 [000] ..... 1.000004: #1 context thread timer_latency 900000 ns\n";
    const TimerlatAnalysis a = analyse(text);
    const WakeupCause& w = *a.cores().at(0).worst;
    CHECK_FALSE(w.split_known);
    CHECK(w.thread_latency_ns == 900'000);
    CHECK(w.main_part().first == "unknown: the trace lost this wake-up's IRQ line");
}
