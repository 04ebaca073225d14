// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/audit/accounts.hpp"
#include "provisioner/audit/check.hpp"
#include "provisioner/audit/system_view.hpp"

#include <string>
#include <vector>

// Checks of what the users who run the audio may do (accounts.hpp says who they are):
// set real-time priorities, what limits.conf gives them, /dev/cpu_dma_latency. Each
// check runs with or without a profile; when nobody who runs audio is found it says what
// was judged. Pure functions of the gathered view.
namespace rtprov::audit {

// 'rt-priority': whether each of them can make a thread real-time at all (sched(7): with
// CAP_SYS_NICE, or up to RLIMIT_RTPRIO): a service by its running processes, else its
// unit's LimitRTPRIO=; a user who logs in by limits.conf and their running processes
// (a rule added after they logged in is not in effect yet), else RTKit. Fails when a
// service whose app makes its own threads real-time cannot; warns for a user who cannot,
// or can only through RTKit, and when nobody who runs audio was found.
Check check_rt_priority(const SystemView& view, const AudioUsers& users);

// 'audio-group-limits': the real-time priority and locked memory pam_limits gives each
// user who logs in to run audio (effective_limit): warns when one of them cannot run
// real-time or lock its memory without a limit, naming the rules. Services get theirs
// from their units (service-limits).
Check check_audio_group_limits(const SystemView& view, const AudioUsers& users);

// 'cpu-dma-latency': whether each user who logs in to run audio may open
// /dev/cpu_dma_latency to keep the CPUs out of deep idle states (a DAW such as Ardour
// does), by its mode, owner and group.
Check check_cpu_dma_latency_access(const SystemView& view, const AudioUsers& users);

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
