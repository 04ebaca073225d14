#pragma once

#include "provisioner/selftest/report.hpp"

#include <string>
#include <vector>

// How a self-test report reads: a table for people, JSON for programs, and the
// node-exporter textfile format for Prometheus. Pure.
namespace rtprov::cli {

std::string selftest_text(const selftest::SelftestReport& report);
std::string selftest_json(const selftest::SelftestReport& report);
// https://github.com/prometheus/node_exporter#textfile-collector: '# HELP', '# TYPE',
// then one 'name{labels} value' line per sample.
std::string selftest_prometheus(const selftest::SelftestReport& report);
std::string comparison_text(const std::vector<selftest::Comparison>& comparisons);

} // namespace rtprov::cli
