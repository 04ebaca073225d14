// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/selftest/report.hpp"

#include <string>
#include <vector>

// How a self-test report reads: a table for people, JSON for programs, and the
// node-exporter textfile format for Prometheus. Pure.
namespace rtprov::cli {

// 'value' with 'decimals' digits after the point, as the reports show numbers.
std::string fixed(double value, int decimals = 1);

std::string selftest_text(const selftest::SelftestReport& report);

// A traced core's worst wake-up (latency.cause must hold one): "CPU 3 (reserved, idle
// default) woke 2104.0 µs late, 1.003 s into the run (timerlat activation #2)".
std::string cause_heading(const selftest::CoreReport& core);
// 'ns' in percent of the wake-up's whole latency.
double share(const selftest::WakeupCause& cause, std::int64_t ns);
// The parts of a wake-up's latency in the order the CPU went through them, each with a
// note (who was in the way, by name); none when the split is not known.
struct CauseRow {
    std::string label;
    std::int64_t ns = 0;
    std::string note;
};
std::vector<CauseRow> cause_rows(const selftest::WakeupCause& cause);
// When in the run a core went over its limit or missed wake-ups: "CPU 1, idle default:
// over its limit of 500 µs or missing wake-ups in 2 of 10 s: at 3 s (812 µs, 4 missed),
// ..."; "" when it never did.
std::string late_text(const selftest::CoreReport& core);
// The run in plain words for a non-expert: the worst wake-up where the player runs and the
// shortest ALSA period it leaves safe (selftest::verdict), or why none is.
std::string verdict_text(const selftest::SelftestReport& report);
// The audio test as the table shows it: the device (a loopback card or a sound server said
// plainly), what it took (rate, format, period and buffer in frames and ms), the playing
// thread, "at worst 312 ms of audio was left; 0 underruns in 60 s", and for a failure when
// the underruns came, how much was left, the longest gap and the time recovering.
std::string audio_text(const selftest::AudioReport& audio);
// What ran on the player's CPUs at an underrun, against the player's thread in 'audio':
// "at 3.20 s, on CPUs 2-3: burn (pid 812, SCHED_RR 45, CPU 2, sleeping) above the player's
// SCHED_FIFO 40; kworker/2:1 (pid 500, SCHED_OTHER, CPU 2, runnable) below it"; "" when it
// was not looked at.
std::string what_ran_text(const selftest::Underrun& underrun, const selftest::AudioResult& audio);
// What a listener would have heard, in a sentence: "no dropout in 60 s of audio to
// 'hw:CARD=DAC,DEV=0', and at worst 312 ms of audio was left (...)", or the dropouts, or
// how little was left, or why it stopped.
std::string audio_verdict_text(const selftest::AudioReport& audio);
// One self-contained HTML page (inline SVG and CSS, no script, nothing fetched): the
// verdict, per core a latency histogram on a log scale with its limit, both idle policies
// overlaid, the kernel facts, and the trend of 'history' (earlier runs, oldest first).
std::string selftest_html(const selftest::SelftestReport& report,
                          const std::vector<selftest::HistoryEntry>& history);
// The version of rtprov.selftest's keys (docs/json.md): 2 since the audio test, whose
// result a report's 'passed' requires, so a reader of version 1 would judge it otherwise.
inline constexpr int k_selftest_schema_version = 2;
std::string selftest_json(const selftest::SelftestReport& report);
// A report selftest_json wrote, read back ('file' names it in messages). Throws
// rtprov::Error, 'file:line:column: what', for anything else: not JSON, another schema or
// version, a key missing or of the wrong kind, a number out of range, a histogram that
// does not add up.
selftest::SelftestReport read_selftest_json(const std::string& text, const std::string& file);
// The players' buffers against a measured worst wake-up (docs/audio-buffers.md): the
// self-test's and the audit's lines ("" for none), and their JSON array.
std::string players_text(const std::vector<selftest::PlayerAdvice>& players);
std::string players_json(const std::vector<selftest::PlayerAdvice>& players);
// https://github.com/prometheus/node_exporter#textfile-collector: '# HELP', '# TYPE',
// then one 'name{labels} value' line per sample.
std::string selftest_prometheus(const selftest::SelftestReport& report);
std::string comparison_text(const std::vector<selftest::Comparison>& comparisons);

} // namespace rtprov::cli
