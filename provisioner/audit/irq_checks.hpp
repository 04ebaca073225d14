// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/audit/check.hpp"
#include "provisioner/audit/expectation.hpp"
#include "provisioner/audit/system_view.hpp"

#include <optional>
#include <string>
#include <vector>

// The sound path's interrupts: judged against the layout rtprov-irq-tune@.service sets
// (tuning.irqs), and whether another device shares them. Pure functions of the gathered
// view.
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

// True when an IRQ's handlers (/sys/kernel/irq/N/actions) belong to more than one device:
// more than one handler, unless they are one driver's several handlers, each named after
// the shortest of them ('dwc_otg', 'dwc_otg_pcd' and 'dwc_otg_hcd:usb1' on a Pi 3's USB).
bool shared_by_devices(const std::vector<std::string>& actions);

// 'sound-irq-shared', profile or not: the interrupts audio arrives by — each sound card's
// (system::read_sound_cards), those tuning.irqs.sound_names names, and each USB host
// controller's, through which a USB DAC plugged in later arrives — warn when another
// device's handler shares one (each of its interrupts then runs both handlers, and a
// level-triggered line waits for both).
Check check_sound_irq_sharing(const SystemView& view, const Expectation* expectation);

} // namespace rtprov::audit
