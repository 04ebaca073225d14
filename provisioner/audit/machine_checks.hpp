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
// as them), the real-time priority and locked memory limits.conf gives the group: warns
// when no rule lets it run real-time or lock its memory without a limit. nullopt when
// group audio has no member (services get theirs from their units: service-limits).
std::optional<Check> check_audio_group_limits(const SystemView& view);

// 'cpu-dma-latency': with users in group 'audio', whether they may open
// /dev/cpu_dma_latency to keep the CPUs out of deep idle states. nullopt without them.
std::optional<Check> check_cpu_dma_latency_access(const SystemView& view);

// The rule limits.conf(5) applies to group 'audio' for 'item' (rtprio, memlock): the
// last '@audio' rule of type soft or '-' in pam_limits' order, else the last '*' one;
// nullptr when there is none.
const LimitsRule* audio_limit(const std::vector<LimitsRule>& rules, const std::string& item);

} // namespace rtprov::audit
