// SPDX-License-Identifier: Apache-2.0
#include "provisioner/selftest/load.hpp"

#include "provisioner/core/error.hpp"

#include "tests/unit/catch.hpp"
#include "tests/unit/sanitizer.hpp"

#include <chrono>
#include <thread>

using rtprov::core::CpuList;
using rtprov::selftest::LoadGenerator;

TEST_CASE("the load generator keeps its CPUs busy until stopped") {
    LoadGenerator load(CpuList({0}), 64 * 1024);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    load.stop();
    const std::uint64_t passes = load.passes();
    CHECK(passes > 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    CHECK(load.passes() == passes); // stopped means stopped
    load.stop();                    // and stopping again is harmless
}

TEST_CASE("no load generator starts when one of its CPUs cannot be used") {
    try {
        LoadGenerator load(CpuList({0, 4095}));
        FAIL("a load thread on CPU 4095 started");
    } catch (const rtprov::Error& e) {
        CHECK(std::string(e.what()) ==
              "cannot start thread 'rtprov-load4095' (SCHED_OTHER on CPU 4095): invalid "
              "argument");
    }
}

TEST_CASE("a load buffer that cannot be allocated stops the load and says so") {
    if (RTPROV_SANITIZED) {
        WARN("a sanitizer's operator new aborts instead of throwing; not checked");
        return;
    }
    try {
        LoadGenerator load(CpuList({0}), std::size_t{1} << 62);
        FAIL("a load buffer of 4 EiB was allocated");
    } catch (const rtprov::Error& e) {
        CHECK(std::string(e.what()) == "cannot allocate 4611686018427387904 bytes of load buffer "
                                       "per CPU for '0'; free memory or measure without load");
    }
}
