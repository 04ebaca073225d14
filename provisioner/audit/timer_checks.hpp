// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/audit/check.hpp"
#include "provisioner/audit/system_view.hpp"

// The kernel's timers: high resolution and the tick. What the running kernel does is read
// from /proc/timer_list (kernel/time/timer_list.c); where that cannot be read, from the
// running kernel's config and command line. Pure functions of the gathered view.
namespace rtprov::audit {

// 'high-res-timers': ok when every CPU runs its timers in high-resolution mode
// ('.hres_active'); warns when the kernel has none (no CONFIG_HIGH_RES_TIMERS: timers
// fire on the tick) or some CPUs are not in that mode (highres=off, or a clock event
// device that cannot fire one-shot).
Check check_high_res_timers(const SystemView& view);

// 'tickless': ok when the tick stops on idle CPUs ('.nohz' or '.nohz_mode'; CONFIG_NO_HZ_IDLE
// or CONFIG_NO_HZ_FULL); warns when the kernel ticks on every CPU all the time (a kernel
// built with CONFIG_HZ_PERIODIC, or nohz=off).
Check check_tickless(const SystemView& view);

} // namespace rtprov::audit
