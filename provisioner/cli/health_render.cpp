// SPDX-License-Identifier: Apache-2.0
#include "provisioner/cli/health_render.hpp"

#include "provisioner/cli/render.hpp"
#include "provisioner/core/text.hpp"

#include <cstdio>

namespace rtprov::cli {

namespace {

using pipeline::HealthVerdict;

std::string verdict_words(HealthVerdict verdict) {
    switch (verdict) {
    case HealthVerdict::healthy:
        return "healthy";
    case HealthVerdict::not_healthy:
        return "not healthy";
    case HealthVerdict::could_not_judge:
        break;
    }
    return "could not judge";
}

std::string child_text(const pipeline::HealthChild& child) {
    const bool plain = !child.exit_code || *child.exit_code == 0 || *child.exit_code == 3;
    return child.outcome + (plain ? "" : " (exit " + std::to_string(*child.exit_code) + ")");
}

std::string one_decimal(double value) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.1f", value);
    return buffer;
}

} // namespace

std::string health_text(const pipeline::Health& h) {
    using core::one_line;
    const int code = pipeline::health_exit_code(h.verdict);
    std::string out = "rtprov health: " + verdict_words(h.verdict) + " (exit " +
                      std::to_string(code) + (code == 0 ? "" : ": do not keep an update") + ")\n";
    out += "judged:    " + one_line(h.judged) + "\n";
    out += "self-test: " + child_text(h.selftest) + "\n";
    out += "audit:     " + child_text(h.audit) + "\n";
    for (std::size_t i = 0; i < h.reasons.size(); ++i)
        out += std::string(i == 0 ? "why:       " : "           ") + one_line(h.reasons[i]) + "\n";
    out += "took:      " + one_decimal(h.seconds) + " s of at most " + std::to_string(h.timeout_s) +
           " s, at " + one_line(h.time) +
           (h.boot_id ? ", boot " + one_line(*h.boot_id) : std::string()) + "\n";
    out += "reports:   " + one_line(h.reports_dir) + " (verdict.json)\n";
    if (h.boot)
        out += "boot:      " + one_line(h.boot->why) + "\n";
    return out;
}

std::string health_prometheus(const pipeline::Health& h, std::int64_t now) {
    std::string out = prometheus_metric(
        "rtprov_health_passed", "gauge",
        "1 when rtprov health judged this system healthy; 0 when it is not healthy or could "
        "not be judged (do not keep an update).");
    out += std::string("rtprov_health_passed ") +
           (h.verdict == HealthVerdict::healthy ? "1" : "0") + "\n";
    out += prometheus_metric("rtprov_health_verdict", "gauge",
                             "The verdict of rtprov health: 1 for the one it came to, 0 for "
                             "the others ('rtprov health' says why).");
    for (HealthVerdict v :
         {HealthVerdict::healthy, HealthVerdict::not_healthy, HealthVerdict::could_not_judge})
        out += "rtprov_health_verdict{verdict=" + prometheus_label(pipeline::health_word(v)) +
               "} " + (v == h.verdict ? "1" : "0") + "\n";
    out += prometheus_metric("rtprov_health_last_run_timestamp_seconds", "gauge",
                             "When rtprov health last judged, in seconds since the epoch.");
    out += "rtprov_health_last_run_timestamp_seconds " + std::to_string(now) + "\n";
    out += prometheus_metric("rtprov_health_duration_seconds", "gauge",
                             "How long rtprov health took to judge, in seconds.");
    return out + "rtprov_health_duration_seconds " + one_decimal(h.seconds) + "\n";
}

} // namespace rtprov::cli
