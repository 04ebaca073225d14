// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/core/app.hpp"
#include "provisioner/core/profile.hpp"

#include <optional>
#include <string>
#include <vector>

// The real-time priorities of the IRQ threads, laid out around the audio threads the
// profile's services run (tuning.irqs; docs/profile-format.md says why each default):
//
//   ktimers/N (PREEMPT_RT, timer_threads)    sound + 1
//   the sound path's IRQ threads             sound: just above the highest audio thread
//   the audio apps' own real-time threads    (MPD 40, PipeWire 83-88, JACK 5-10, ...)
//   every other IRQ thread                   others: just below the lowest audio thread
//
// With threaded interrupts (PREEMPT_RT, or threadirqs) every IRQ thread starts at
// SCHED_FIFO 50 (kernel/irq/manage.c, setup_irq_thread), above MPD's output thread at 40.
namespace rtprov::core {

// The sound path's IRQs stay below rtla timerlat's measuring threads (FIFO 95) and the
// kernel's stopper threads (99), with room for the timer threads one above them.
inline constexpr int k_max_irq_priority = 94;
// setup_irq_thread: MAX_RT_PRIO / 2
inline constexpr int k_kernel_irq_priority = 50;

// One group of audio threads a service runs at real-time priorities.
struct AudioThreads {
    std::string who; // "MPD's rtio and output:* threads", "'jackd.service' unit-wide"
    int lowest = 0;
    int highest = 0;
};

struct IrqLayout {
    int sound = 0;
    std::string sound_reason;  // how 'sound' was chosen, for plan and the docs
    std::optional<int> others; // nullopt: left at the kernel's 50
    std::string others_reason;
    std::optional<int> timers; // ktimers/N on PREEMPT_RT; nullopt: left as they are
    std::vector<AudioThreads> audio;
};

// The audio threads of the profile's services: an app's own (app knowledge, when the
// service leaves the policy to the app), or a unit-wide real-time policy.
std::vector<AudioThreads> audio_threads(const Profile& profile,
                                        const std::vector<AppKnowledge>& apps);

// The layout for tuning.irqs (enabled()); 'problems' gets what cannot be laid out: a
// priority that would put the sound path's IRQs at or below the threads they feed, or
// the other IRQs at or above them, with the numbers. Pure.
IrqLayout irq_layout(const Profile& profile, const std::vector<AppKnowledge>& apps,
                     std::vector<ProfileProblem>& problems);

} // namespace rtprov::core
