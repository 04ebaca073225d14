// SPDX-License-Identifier: Apache-2.0
#include "provisioner/systemd/units.hpp"

#include "tests/unit/catch.hpp"

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
