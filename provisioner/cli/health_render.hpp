// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/pipeline/health.hpp"

#include <cstdint>
#include <string>

// What 'rtprov health' prints and writes, besides the JSON verdict (pipeline::health_json).
// Pure: strings in, strings out.
namespace rtprov::cli {

// The verdict for people: its word and exit code first, then what was judged, each
// child, the reasons one a line, the time taken and the bound, the reports, and what
// --boot did. Every value on one line (core::one_line): a reason quotes what the system
// named.
std::string health_text(const pipeline::Health& health);

// For node-exporter's textfile collector: rtprov_health_passed (1/0),
// rtprov_health_verdict (1 for the verdict in its label, 0 for the other two),
// rtprov_health_last_run_timestamp_seconds ('now', seconds since the epoch) and
// rtprov_health_duration_seconds.
std::string health_prometheus(const pipeline::Health& health, std::int64_t now);

} // namespace rtprov::cli
