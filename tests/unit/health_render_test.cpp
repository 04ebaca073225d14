// SPDX-License-Identifier: Apache-2.0
// cli/health_render.cpp: what 'rtprov health' prints and its Prometheus textfile.
#include "provisioner/cli/health_render.hpp"

#include "tests/unit/catch.hpp"

using namespace rtprov;
using pipeline::HealthVerdict;

namespace {

pipeline::Health not_healthy() {
    pipeline::Health h;
    h.verdict = HealthVerdict::not_healthy;
    h.boot_id = "5b3c2a9e";
    h.time = "2026-12-24T18:00:00Z";
    h.profile = "x86-debian13";
    h.judged = "the applied profile 'x86-debian13': the audit against it, the self-test with "
               "its limits (10 s)";
    h.reasons = {"self-test did not pass: CPU 1 woke\n3413 µs late", "audit did not pass: x"};
    h.seconds = 12.34;
    h.timeout_s = 130;
    h.selftest = {3, "did not pass"};
    h.audit = {3, "did not pass"};
    h.reports_dir = "/var/lib/rtprov/health";
    return h;
}

} // namespace

TEST_CASE("health's text leads with the verdict and its exit code, one value a line") {
    CHECK(cli::health_text(not_healthy()) ==
          "rtprov health: not healthy (exit 3: do not keep an update)\n"
          "judged:    the applied profile 'x86-debian13': the audit against it, the self-test "
          "with its limits (10 s)\n"
          "self-test: did not pass\n"
          "audit:     did not pass\n"
          "why:       self-test did not pass: CPU 1 woke\\x0a3413 µs late\n"
          "           audit did not pass: x\n"
          "took:      12.3 s of at most 130 s, at 2026-12-24T18:00:00Z, boot 5b3c2a9e\n"
          "reports:   /var/lib/rtprov/health (verdict.json)\n");
    pipeline::Health judged_not = not_healthy();
    judged_not.verdict = HealthVerdict::could_not_judge;
    judged_not.audit = {1, "error"};
    judged_not.selftest = {std::nullopt, "timed out"};
    judged_not.boot = pipeline::HealthBoot{true, "/loader/entries/a+1-2.conf", true, "rebooting"};
    const std::string text = cli::health_text(judged_not);
    CHECK(text.rfind("rtprov health: could not judge (exit 1: do not keep an update)\n", 0) == 0);
    CHECK(text.find("\nself-test: timed out\naudit:     error (exit 1)\n") != std::string::npos);
    CHECK(text.ends_with("boot:      rebooting\n"));
    pipeline::Health healthy = not_healthy();
    healthy.verdict = HealthVerdict::healthy;
    healthy.reasons.clear();
    CHECK(cli::health_text(healthy).rfind("rtprov health: healthy (exit 0)\n", 0) == 0);
    CHECK(cli::health_text(healthy).find("why:") == std::string::npos);
}

TEST_CASE("health's textfile says passed, the verdict as a set of three, when and how long") {
    const std::string metrics = cli::health_prometheus(not_healthy(), 1796589432);
    CHECK(metrics.find("\nrtprov_health_passed 0\n") != std::string::npos);
    CHECK(metrics.find("\nrtprov_health_verdict{verdict=\"healthy\"} 0\n"
                       "rtprov_health_verdict{verdict=\"not-healthy\"} 1\n"
                       "rtprov_health_verdict{verdict=\"could-not-judge\"} 0\n") !=
          std::string::npos);
    CHECK(metrics.find("\nrtprov_health_last_run_timestamp_seconds 1796589432\n") !=
          std::string::npos);
    CHECK(metrics.ends_with("\nrtprov_health_duration_seconds 12.3\n"));
    pipeline::Health healthy = not_healthy();
    healthy.verdict = HealthVerdict::healthy;
    CHECK(cli::health_prometheus(healthy, 0).find("\nrtprov_health_passed 1\n") !=
          std::string::npos);
}
