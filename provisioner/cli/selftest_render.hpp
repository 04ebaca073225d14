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
// When in the run a core went over its limit or missed wake-ups: "CPU 1, idle default:
// over its limit of 500 µs or missing wake-ups in 2 of 10 s: at 3 s (812 µs, 4 missed),
// ..."; "" when it never did.
std::string late_text(const selftest::CoreReport& core);
// The run in plain words for a non-expert: the worst wake-up where the player runs and the
// shortest ALSA period it leaves safe (selftest::verdict), or why none is.
std::string verdict_text(const selftest::SelftestReport& report);
// One self-contained HTML page (inline SVG and CSS, no script, nothing fetched): the
// verdict, per core a latency histogram on a log scale with its limit, both idle policies
// overlaid, the kernel facts, and the trend of 'history' (earlier runs, oldest first).
std::string selftest_html(const selftest::SelftestReport& report,
                          const std::vector<selftest::HistoryEntry>& history);
std::string selftest_json(const selftest::SelftestReport& report);
// https://github.com/prometheus/node_exporter#textfile-collector: '# HELP', '# TYPE',
// then one 'name{labels} value' line per sample.
std::string selftest_prometheus(const selftest::SelftestReport& report);
std::string comparison_text(const std::vector<selftest::Comparison>& comparisons);

} // namespace rtprov::cli
