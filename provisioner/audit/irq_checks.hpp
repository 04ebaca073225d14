// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/audit/check.hpp"
#include "provisioner/audit/expectation.hpp"
#include "provisioner/audit/system_view.hpp"

#include <optional>

// The sound path's interrupts (tuning.irqs), judged against the layout
// rtprov-irq-tune@.service sets. A pure function of the gathered view.
namespace rtprov::audit {

// 'sound-irqs': for each sound card, its IRQs (system::read_sound_cards) and those
// tuning.irqs.sound_names names: threaded (an irq/N-name thread: threadirqs or
// PREEMPT_RT), their threads at SCHED_FIFO layout.sound, the IRQ on the planned CPUs
// (warn, not fail, when its controller does not let it move), not shared with another
// device's handler (warn, as rtcqs does); and no other IRQ thread at or above the sound
// path (fail), nor away from the planned priority of the others (warn: a device that
// appeared after boot, or a change by hand). nullopt when the profile leaves the IRQs
// alone (no e.irqs).
std::optional<Check> check_sound_irqs(const SystemView& view, const Expectation& e);

} // namespace rtprov::audit
