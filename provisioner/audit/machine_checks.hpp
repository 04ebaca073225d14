// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/audit/check.hpp"
#include "provisioner/audit/system_view.hpp"

#include <optional>
#include <string>
#include <vector>

// Checks of the machine that hold for every audio box, profile or not: the ones
// realtimeconfigquickscan and rtcqs users know (SMT, CPU vulnerability mitigations,
// swappiness, the audio group's limits and /dev/cpu_dma_latency). Pure functions of the
// gathered view.
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

// The members of group 'audio' in /etc/group (its fourth field), or why not known.
Fact<std::vector<std::string>> audio_group_members(const SystemView& view);

// 'audio-group-limits': with users in group 'audio' (desktop audio: JACK, PipeWire run
// as them), the real-time priority and locked memory pam_limits gives each of them
// (effective_limit): warns when one of them cannot run real-time or lock its memory
// without a limit, naming the rules. nullopt when group audio has no member (services get
// theirs from their units: service-limits).
std::optional<Check> check_audio_group_limits(const SystemView& view);

// 'cpu-dma-latency': with users in group 'audio', whether they may open
// /dev/cpu_dma_latency to keep the CPUs out of deep idle states. nullopt without them.
std::optional<Check> check_cpu_dma_latency_access(const SystemView& view);

// What pam_limits gives 'user' (listed in 'groups') for 'item' (rtprio, memlock), in
// the order it reads the rules: soft and hard (-1: unlimited; 'kernel_default' where no
// rule sets one) and the rules that set them. Fields and values are read without regard to
// case; a value it cannot read is dropped, as pam_limits drops it.
struct EffectiveLimit {
    long long soft = 0, hard = 0;
    const LimitsRule* soft_rule = nullptr;
    const LimitsRule* hard_rule = nullptr;
    long long value() const; // the limit in effect: the soft one, capped by the hard one
};
EffectiveLimit effective_limit(const std::vector<LimitsRule>& rules, const std::string& user,
                               const std::vector<std::string>& groups, const std::string& item,
                               long long kernel_default);

} // namespace rtprov::audit
