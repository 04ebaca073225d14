// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/audit/check.hpp"
#include "provisioner/audit/expectation.hpp"
#include "provisioner/audit/system_view.hpp"

#include <optional>
#include <string>
#include <vector>

// Checks of the kernel as a whole: how it was booted and how it schedules. Pure
// functions of the gathered view and, where given, the profile's expectation (nullptr:
// no profile, only what holds for every audio machine is checked).
namespace rtprov::audit {

// 'kernel-preemption': names the preemption model and, for PREEMPT_DYNAMIC, the mode and
// where it was learned (debugfs sched/preempt, else preempt= on the command line, else
// the build default in the running kernel's config); warns when none of them can be
// read. Fails when the profile chose a PREEMPT_RT kernel (tuning.kernel.realtime) and
// another one runs; the fix boots an installed PREEMPT_RT kernel, else installs one.
Check check_preemption(const SystemView& view, const Expectation* expectation);

// 'rt-push-ipi': fails on a non-PREEMPT_RT kernel running with NO_RT_PUSH_IPI.
Check check_rt_push_ipi(const SystemView& view, const Expectation* expectation);

// 'rt-throttling': warns when real-time threads get less than the kernel's default 95%.
Check check_rt_throttling(const SystemView& view);

// 'cpu-governor': fails when a CPU runs another governor than the profile's
// tuning.cpu_governor; without one, warns when a CPU is not on 'performance'.
Check check_cpu_governor(const SystemView& view, const Expectation* expectation);

// 'cmdline': fails when /proc/cmdline lacks a planned parameter or has another value.
Check check_cmdline(const SystemView& view, const Expectation& expectation);

// A planned parameter the running kernel's command line does not have in effect.
struct ParamGap {
    std::string token; // as planned, 'nohz_full=2-3'
    std::string why;   // boot::not_in_effect's reason
};

// The planned parameters (expectation.kernel_params) 'cmdline' does not have in effect,
// judged as the kernel judges a repeated parameter (boot::not_in_effect): the one rule of
// the 'cmdline' check and of first boot's reboot decision.
std::vector<ParamGap> params_not_in_effect(const std::string& cmdline,
                                           const Expectation& expectation);

// True when the running kernel is a PREEMPT_RT one (uname -v names the model built in,
// scripts/mkcompile_h in the kernel tree); false when its version cannot be read.
bool runs_preempt_rt(const SystemView& view);

// 'isolated-cpus': /sys/devices/system/cpu/isolated against the reserved CPUs; nullopt
// when the profile plans no isolcpus= with domain isolation.
std::optional<Check> check_isolated(const SystemView& view, const Expectation& expectation);

// 'nohz-full': /sys/devices/system/cpu/nohz_full against the reserved CPUs; nullopt when
// the profile plans no nohz_full=.
std::optional<Check> check_nohz_full(const SystemView& view, const Expectation& expectation);

} // namespace rtprov::audit
