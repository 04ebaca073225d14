// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/audit/check.hpp"
#include "provisioner/audit/system_view.hpp"

#include <optional>
#include <string>
#include <vector>

// Checks of the machine that hold for every audio box, profile or not: the ones
// realtimeconfigquickscan and rtcqs users know (SMT, CPU vulnerability mitigations,
// swappiness; the users' limits are in user_checks). Pure functions of the gathered view.
namespace rtprov::audit {

// 'smt': warns when simultaneous multithreading is on: two CPUs of one core share its
// execution units, so work on a sibling delays a reserved CPU.
Check check_smt(const SystemView& view);

// 'cpu-mitigations': warns when the kernel mitigates a CPU vulnerability (each adds
// work at kernel entry and exit or at a context switch), naming them; the fix says it is
// a security trade-off.
Check check_mitigations(const SystemView& view);

// 'swappiness': warns when swap is in use and vm.swappiness is above 10.
Check check_swappiness(const SystemView& view);

} // namespace rtprov::audit
