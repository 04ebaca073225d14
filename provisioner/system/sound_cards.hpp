// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/system/sysroot.hpp"

#include <set>
#include <string>
#include <vector>

// The sound cards of the running system and the interrupts that feed them, found by
// device rather than by name: each ALSA card (/sys/class/sound/cardN) → its device in sysfs
// (/sys/class/sound/cardN/device) → the IRQ of that device or of the bus device it sits
// behind (a PCI function's 'irq' or 'msi_irqs', a USB card's host controller), or, for a
// card on a device-tree platform such as a Pi's I2S DAC, the interrupts of the DMA
// channels its I2S controller uses. Interrupts are named as /sys/kernel/irq shows them
// (Documentation/ABI/testing/sysfs-kernel-irq).
namespace rtprov::system {

// An interrupt of the running system (/sys/kernel/irq/N).
struct IrqLine {
    unsigned number = 0;
    std::vector<std::string> actions; // the handlers' names, e.g. "xhci_hcd" or "dwc_otg_hcd:usb1"
    std::string chip;                 // chip_name, e.g. "PCI-MSI", "GICv2"
    std::optional<unsigned long> hwirq;
};

struct SoundIrq {
    unsigned irq = 0;
    // how it feeds the card, e.g. "USB host controller of bus 1 (0000:00:05.0)"; one line
    std::string via;
};

struct SoundCard {
    unsigned number = 0;
    // The names below are each one printable line (core::one_line): a line break or
    // control byte a driver or device put in one is written \xNN.
    std::string id;     // the card's id (/sys/class/sound/cardN/id), "[id]" in /proc/asound/cards
    std::string driver; // e.g. "USB-Audio", "HDA-Intel", "RPi-simple"; from /proc/asound/cards
    std::string name;   // the card's long name, from /proc/asound/cards
    std::string device; // its device in sysfs ("/sys/devices/…"); empty for a virtual card
    bool usb = false;   // it sits on a USB bus
    std::vector<SoundIrq> irqs;
    std::string problem; // why no interrupt was found, when 'irqs' is empty; one line
};

// N of an IRQ thread named 'irq/N-name' (kernel/irq/manage.c, setup_irq_thread), or
// nullopt for any other thread name.
std::optional<unsigned> irq_of_thread(const std::string& comm);

// The IRQs that feed the sound path: every card's, and each IRQ one of whose handler names
// (IrqLine::actions) matches one of 'globs' (tuning.irqs.sound_names, fnmatch(3)).
// 'unmatched', when given, gets each glob that matches no IRQ.
std::set<unsigned> sound_path_irqs(const std::vector<SoundCard>& cards,
                                   const std::vector<IrqLine>& lines,
                                   const std::vector<std::string>& globs,
                                   std::vector<std::string>* unmatched = nullptr);

// A USB host controller, through which a USB DAC's samples arrive.
struct UsbHost {
    unsigned long bus = 0;  // N of its root hub usbN
    std::string controller; // its device's name: '0000:00:14.0', '3f980000.usb'
    std::vector<unsigned> irqs;
};

// The USB buses (/sys/bus/usb/devices/usbN, the root hubs) and the IRQs of their host
// controllers: the lines usb_hcd_request_irqs() names '<driver>:usbN'
// (drivers/usb/core/hcd.c), else the controller's MSI or INTx interrupt ('msi_irqs',
// 'irq' of its device). A bus whose interrupt is not found that way has none. Empty when
// there is no USB.
std::vector<UsbHost> read_usb_hosts(const SysRoot& root, const std::vector<IrqLine>& lines);

// Every IRQ in /sys/kernel/irq, ascending.
Fact<std::vector<IrqLine>> read_irq_lines(const SysRoot& root);

// The cards as read_sound_cards reads them (number, id, driver, long name, device, usb),
// without looking for their interrupts: 'irqs' and 'problem' stay empty. Fails as
// read_sound_cards does.
Fact<std::vector<SoundCard>> read_sound_card_names(const SysRoot& root);

// The cards in /sys/class/sound (cardN: card N, its id in cardN/id), ascending, with their
// driver and long name from /proc/asound/cards, whose lines a name with a line break can
// forge (so it names no card), and their interrupts ('irq_lines' as read above). A card
// whose interrupts cannot be found says why in its 'problem'; the fact fails when
// /proc/asound/cards cannot be read ('absent': the kernel has no ALSA) or /sys/class/sound
// cannot be listed.
Fact<std::vector<SoundCard>> read_sound_cards(const SysRoot& root,
                                              const std::vector<IrqLine>& irq_lines);

} // namespace rtprov::system
