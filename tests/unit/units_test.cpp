// SPDX-License-Identifier: Apache-2.0
#include "provisioner/systemd/units.hpp"

#include "tests/unit/catch.hpp"
#include "tests/unit/temp_dir.hpp"

using namespace rtprov;
using namespace rtprov::systemd;

TEST_CASE("a service drop-in renders every setting") {
    ServiceSettings s;
    s.slice = "rtprov.slice";
    s.cpu_affinity = core::CpuList({2, 3});
    s.policy = "rr";
    s.priority = 30;
    s.reset_on_fork = true;
    s.limit_rtprio = 95;
    s.limit_memlock = "infinity";
    s.nice = -10;
    s.io_class = "realtime";
    CHECK(render_service_dropin("x86", "jackd.service", s) ==
          "# Written by rtprov from profile 'x86'. Do not edit; change the profile and run "
          "rtprov.\n"
          "# CPUs, scheduling and limits for jackd.service\n"
          "[Service]\n"
          "Slice=rtprov.slice\n"
          "CPUAffinity=\n"
          "CPUAffinity=2-3\n"
          "CPUSchedulingPolicy=rr\n"
          "CPUSchedulingPriority=30\n"
          "CPUSchedulingResetOnFork=yes\n"
          "LimitRTPRIO=95\n"
          "LimitMEMLOCK=infinity\n"
          "Nice=-10\n"
          "IOSchedulingClass=realtime\n");
}

TEST_CASE("an empty service drop-in has only its header and section") {
    CHECK(render_service_dropin("p", "a.service", {}) ==
          "# Written by rtprov from profile 'p'. Do not edit; change the profile and run "
          "rtprov.\n# CPUs, scheduling and limits for a.service\n[Service]\n");
}

TEST_CASE("cpuset drop-ins and the audio slice") {
    CHECK(dropin_path("system.slice") == "/etc/systemd/system/system.slice.d/60-rtprov.conf");
    CHECK(render_allowed_cpus_dropin("p", "init.scope", "Scope", core::CpuList({0, 1}))
              .ends_with("[Scope]\nAllowedCPUs=0-1\n"));
    CHECK(render_audio_slice("p", core::CpuList({2, 3})).ends_with("[Slice]\nAllowedCPUs=2-3\n"));
}

TEST_CASE("the RT_PUSH_IPI unit runs rtprov sched-features early at every boot") {
    std::string unit = render_sched_features_unit("p", "/usr/bin/rtprov");
    CHECK(unit.find("ExecStart=/usr/bin/rtprov sched-features\n") != std::string::npos);
    CHECK(unit.find("Type=oneshot\n") != std::string::npos);
    CHECK(unit.find("[Install]\nWantedBy=sysinit.target\n") != std::string::npos);
}

TEST_CASE("the health gate is a oneshot after the boot, before boot-complete.target, in time") {
    CHECK(render_health_unit("p", "/usr/bin/rtprov", core::SelftestThresholds{}) ==
          "# Written by rtprov from profile 'p'. Do not edit; change the profile and run "
          "rtprov.\n"
          "# the health gate: boot-complete.target, and all that waits for it, waits for "
          "rtprov's verdict\n"
          "[Unit]\n"
          "Description=rtprov: health gate of the boot (self-test and audit against the "
          "applied profile)\n"
          "Documentation=man:rtprov(1) file:/usr/share/doc/rtprov/update-gate.md\n"
          "After=multi-user.target rtprov-firstboot.service rtprov-trial.service\n"
          "Before=boot-complete.target\n"
          "\n"
          "[Service]\n"
          "Type=oneshot\n"
          "RemainAfterExit=yes\n"
          "ExecStart=/usr/bin/rtprov health --boot --timeout 130\n"
          "TimeoutStartSec=190s\n"
          "\n"
          "[Install]\n"
          "RequiredBy=boot-complete.target\n"
          "WantedBy=multi-user.target\n");
    // The gate's own limit follows the profile's self-test; systemd's is a minute more.
    core::SelftestThresholds limits;
    limits.duration_s = 60;
    limits.audio = true;
    std::string unit = render_health_unit("p", "/usr/local/bin/rtprov", limits);
    CHECK(unit.find("\nExecStart=/usr/local/bin/rtprov health --boot --timeout 240\n"
                    "TimeoutStartSec=300s\n") != std::string::npos);
    // A soak-length self-test is cut to the gate's longest run.
    limits.duration_s = core::k_max_selftest_duration_s;
    limits.audio = false;
    CHECK(render_health_unit("p", "/usr/bin/rtprov", limits)
              .find("--timeout 720\nTimeoutStartSec=780s\n") != std::string::npos);
}

namespace {

// 'text' without its comment lines: what systemd reads of a unit file.
std::string without_comments(const std::string& text) {
    std::string out;
    std::size_t at = 0;
    while (at < text.size()) {
        std::size_t end = text.find('\n', at);
        end = end == std::string::npos ? text.size() : end + 1;
        if (text[at] != '#')
            out += text.substr(at, end - at);
        at = end;
    }
    return out;
}

} // namespace

TEST_CASE("the packaged rtprov-health.service is the unit apply writes for the default limits") {
    // One text, two places: the package's for 'systemctl enable', the apply's for
    // tuning.health_gate. Built-in profiles keep the default self-test (10 s, no audio).
    const std::string packaged = TempDir::read_host_file(std::string(RTPROV_SOURCE_DIR) +
                                                         "/packaging/rtprov-health.service");
    CHECK(without_comments(packaged) ==
          without_comments(render_health_unit("p", "/usr/bin/rtprov", core::SelftestThresholds{})));
    CHECK(packaged.rfind("# SPDX-License-Identifier: Apache-2.0\n", 0) == 0);
    // The comparison sees a difference in any setting.
    CHECK(without_comments(packaged) !=
          without_comments(render_health_unit("p", "/usr/local/bin/rtprov", {})));
}
