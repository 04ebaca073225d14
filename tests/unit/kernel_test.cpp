// SPDX-License-Identifier: Apache-2.0
#include "provisioner/system/kernel.hpp"

#include "tests/unit/catch.hpp"

using rtprov::system::is_preempt_rt;

TEST_CASE("a PREEMPT_RT kernel is known by the model uname -v names") {
    CHECK(is_preempt_rt("#1 SMP PREEMPT_RT Debian 6.12.117-1 (2026-11-20)"));
    CHECK(is_preempt_rt("#1 SMP PREEMPT_RT Raspbian 1:6.12.47-1+rpt1 (2025-09-16)"));
    CHECK_FALSE(is_preempt_rt("#1 SMP PREEMPT_DYNAMIC Debian 6.12.117-1 (2026-11-20)"));
    CHECK_FALSE(is_preempt_rt("#1 SMP PREEMPT Debian 6.1.0"));
    CHECK_FALSE(is_preempt_rt("#1 SMP NOT_PREEMPT_RT_REALLY"));
    CHECK_FALSE(is_preempt_rt(""));
}
