// SPDX-License-Identifier: Apache-2.0
#include "provisioner/audit/irq_checks.hpp"

#include "provisioner/audit/kernel_checks.hpp"
#include "provisioner/core/error.hpp"
#include "provisioner/core/text.hpp"

#include <algorithm>
#include <map>
#include <set>

namespace rtprov::audit {

namespace {

constexpr const char* k_journal = "journalctl -b -u 'rtprov-irq-tune@*'";

// 'fifo 41', 'other': as expectation.hpp's to_string(ThreadSched), the other checks' form.
std::string sched_text(const Thread& t) {
    return to_string(ThreadSched{t.policy, t.rt_priority});
}

bool at(const Thread& t, int priority) {
    return t.policy == core::SchedPolicy::fifo && t.rt_priority == priority;
}

const system::IrqLine* line_of(const SystemView& view, unsigned irq) {
    if (!view.irq_lines)
        return nullptr;
    for (const system::IrqLine& line : *view.irq_lines)
        if (line.number == irq)
            return &line;
    return nullptr;
}

const Irq* proc_irq_of(const SystemView& view, unsigned irq) {
    if (!view.irqs)
        return nullptr;
    for (const Irq& i : *view.irqs)
        if (i.number == irq)
            return &i;
    return nullptr;
}

// What feeds which card: "card 0 'Intel'" for the IRQs a card was found to use, "named
// by tuning.irqs.sound_names" for the rest.
std::map<unsigned, std::string> feeders(const SystemView& view, const std::set<unsigned>& irqs) {
    std::map<unsigned, std::string> out;
    if (view.sound_cards)
        for (const system::SoundCard& card : *view.sound_cards)
            for (const system::SoundIrq& irq : card.irqs) {
                std::string& text = out[irq.irq];
                text += (text.empty() ? "" : ", ") + std::string("card ") +
                        std::to_string(card.number) + " " + quoted(card.id);
            }
    for (unsigned irq : irqs)
        if (!out.count(irq))
            out[irq] = "named by tuning.irqs.sound_names";
    return out;
}

} // namespace

std::optional<Check> check_sound_irqs(const SystemView& view, const Expectation& e) {
    if (!e.irqs)
        return std::nullopt;
    Check c;
    c.id = "sound-irqs";
    c.title = "the sound path's interrupts";
    if (!view.sound_cards && !view.sound_cards.absent)
        return cannot_read(std::move(c), view.sound_cards.problem);
    if (!view.irq_lines)
        return cannot_read(std::move(c), view.irq_lines.problem);
    if (!view.processes)
        return cannot_read(std::move(c), view.processes.problem);
    const int sound = e.irqs->sound;
    std::vector<std::string> unmatched;
    const std::set<unsigned> irqs = view.sound_irqs(e.sound_names, &unmatched);

    std::vector<std::string> fails, warns, fixes, ok;
    for (const std::string& glob : unmatched)
        warns.push_back("tuning.irqs.sound_names '" + glob +
                        "' matches no IRQ's handler (/sys/kernel/irq/*/actions)");
    if (view.sound_cards.absent)
        warns.push_back("the kernel has no ALSA (/proc/asound/cards is missing)");
    else
        for (const system::SoundCard& card : *view.sound_cards)
            if (card.irqs.empty())
                warns.push_back("card " + std::to_string(card.number) + " " + quoted(card.id) +
                                ": " + card.problem);
    if (irqs.empty()) {
        c.status = Status::warn;
        c.reason = "profile '" + e.profile_name + "' sets the sound path's IRQ threads to fifo " +
                   std::to_string(sound) + ", but no IRQ feeds a sound card" +
                   (warns.empty() ? std::string(" (no card in /proc/asound/cards)")
                                  : ": " + listing(warns));
        c.fix = "connect the sound device and check 'cat /proc/asound/cards'; for an interrupt "
                "not found by device, name its handler (/proc/interrupts) in "
                "tuning.irqs.sound_names";
        return c;
    }

    // The IRQ threads: the sound path's by IRQ, and the others.
    std::map<unsigned, std::vector<const Thread*>> threads_of;
    std::vector<std::string> outrank, others_off;
    for (const Process& p : *view.processes) {
        if (!p.kernel_thread)
            continue;
        for (const Thread& t : p.threads) {
            const std::optional<unsigned> irq = system::irq_of_thread(t.comm);
            if (!irq)
                continue;
            if (irqs.count(*irq)) {
                threads_of[*irq].push_back(&t);
                continue;
            }
            const std::string item = quoted(t.comm) + " (" + sched_text(t) + ")";
            if (t.policy == core::SchedPolicy::deadline ||
                (t.policy && core::has_static_priority(*t.policy) && t.rt_priority >= sound))
                outrank.push_back(item);
            else if (e.irqs->others && !at(t, *e.irqs->others))
                others_off.push_back(item);
        }
    }

    const std::map<unsigned, std::string> feeds = feeders(view, irqs);
    bool unthreaded = false, untuned = false, misplaced = false;
    for (unsigned irq : irqs) {
        const system::IrqLine* line = line_of(view, irq);
        std::string label = "IRQ " + std::to_string(irq);
        if (line && !line->actions.empty())
            label += " " + quoted(line->actions.front());
        label += " (" + feeds.at(irq) + ")";
        const auto found = threads_of.find(irq);
        if (found == threads_of.end()) {
            fails.push_back(label + " has no thread: its handler runs in hard interrupt context, "
                                    "above every thread, with no priority to order");
            unthreaded = true;
            continue;
        }
        std::string state;
        for (const Thread* t : found->second) {
            state += (state.empty() ? "" : ", ") + (quoted(t->comm) + " " + sched_text(*t));
            if (!at(*t, sound)) {
                fails.push_back(label + ": thread " + quoted(t->comm) + " runs " + sched_text(*t) +
                                ", not the planned fifo " + std::to_string(sound) + " (" +
                                e.irqs->sound_reason + ")");
                untuned = true;
            }
        }
        if (line && line->actions.size() > 1) {
            std::vector<std::string> handlers;
            for (const std::string& action : line->actions)
                handlers.push_back(core::one_line(action));
            warns.push_back(label + " is shared by " + std::to_string(line->actions.size()) +
                            " handlers (" + listing(handlers) +
                            "): each of them runs in the sound path's thread, at its priority");
        }
        const Irq* proc = proc_irq_of(view, irq);
        if (!proc || !proc->affinity) {
            warns.push_back(label + ": its CPUs (/proc/irq/" + std::to_string(irq) +
                            "/smp_affinity_list) could not be read");
        } else if (!proc->affinity->minus(e.sound_irq_cpus).empty()) {
            const std::string where = label + " may run on " + cpus_text(*proc->affinity) +
                                      ", not only the planned " + cpus_text(e.sound_irq_cpus);
            if (proc->affinity_writable) {
                fails.push_back(where);
                misplaced = true;
            } else {
                warns.push_back(where + "; its controller does not let it move "
                                        "(smp_affinity_list is read-only)");
            }
        } else {
            state += " on " + cpus_text(*proc->affinity);
        }
        ok.push_back(label + ": " + state);
    }
    if (!outrank.empty()) {
        fails.push_back("other IRQ threads at or above the sound path's fifo " +
                        std::to_string(sound) + ": " + listing(outrank));
        untuned = true;
    }
    if (!others_off.empty())
        warns.push_back("IRQ threads not at the planned fifo " + std::to_string(*e.irqs->others) +
                        " of the others (a device added after boot, or changed by hand): " +
                        listing(others_off));

    if (unthreaded) {
        const bool planned = e.param("threadirqs") != nullptr;
        fixes.push_back(
            planned ? "reboot: the planned 'threadirqs' is not on the running kernel's command line"
            : runs_preempt_rt(view)
                ? "check the IRQ's driver: it asked for a handler that is never threaded"
                : "set tuning.irqs.threaded: on (threadirqs), or boot the PREEMPT_RT kernel, and "
                  "reboot");
    }
    if (untuned || misplaced)
        fixes.push_back("run 'systemctl start rtprov-irq-tune@boot.service'; '" +
                        std::string(k_journal) + "' says why it did not take");
    if (!fails.empty()) {
        c.status = Status::fail;
        c.reason = listing(fails, 4) + (warns.empty() ? "" : "; also " + listing(warns, 4));
    } else if (!warns.empty()) {
        c.status = Status::warn;
        c.reason = listing(ok, 4) + "; but " + listing(warns, 4);
    } else {
        c.reason =
            listing(ok, 4) + "; no other IRQ thread at or above fifo " + std::to_string(sound);
    }
    if (c.status == Status::warn && fixes.empty())
        fixes.push_back("see " + std::string(k_journal) +
                        "; an unmovable IRQ is a limit of its controller, not of the profile");
    for (const std::string& f : fixes)
        c.fix += (c.fix.empty() ? "" : "; ") + f;
    return c;
}

bool shared_by_devices(const std::vector<std::string>& actions) {
    if (actions.size() < 2)
        return false;
    const std::string base = *std::min_element(
        actions.begin(), actions.end(),
        [](const std::string& a, const std::string& b) { return a.size() < b.size(); });
    for (const std::string& a : actions)
        if (a != base && !(a.starts_with(base) && (a[base.size()] == '_' || a[base.size()] == ':')))
            return true;
    return false;
}

Check check_sound_irq_sharing(const SystemView& view, const Expectation* e) {
    Check c =
        make_check("sound-irq-shared", "the sound path's interrupts shared with other devices");
    if (!view.irq_lines)
        return cannot_read(std::move(c), view.irq_lines.problem);
    if (!view.sound_cards && !view.sound_cards.absent)
        return cannot_read(std::move(c), view.sound_cards.problem);
    // What each interrupt feeds, by IRQ.
    std::map<unsigned, std::vector<std::string>> feeds;
    std::set<unsigned> usb_irqs; // a USB card's or a host controller's
    std::vector<std::string> unseen;
    if (view.sound_cards)
        for (const system::SoundCard& card : *view.sound_cards) {
            const std::string name = "card " + std::to_string(card.number) + " " + quoted(card.id);
            if (card.irqs.empty() && !card.device.empty())
                unseen.push_back(name + ": " + card.problem);
            for (const system::SoundIrq& irq : card.irqs) {
                feeds[irq.irq].push_back(name);
                if (card.usb)
                    usb_irqs.insert(irq.irq);
            }
        }
    if (e)
        for (unsigned irq : view.sound_irqs(e->sound_names))
            if (!feeds.count(irq))
                feeds[irq].push_back("named by tuning.irqs.sound_names");
    for (const system::UsbHost& host : view.usb_hosts)
        for (unsigned irq : host.irqs) {
            usb_irqs.insert(irq);
            feeds[irq].push_back("the host controller of USB bus " + std::to_string(host.bus) +
                                 (host.controller.empty() ? "" : " (" + host.controller + ")"));
        }

    std::vector<std::string> shared, alone;
    bool usb = false, card = false, card_seen = false;
    for (const auto& [irq, what] : feeds) {
        const system::IrqLine* line = line_of(view, irq);
        if (!line)
            continue;
        const std::string label =
            "IRQ " + std::to_string(irq) + " (" + core::join(what, ", ") + ")";
        // a card's interrupt, or one the profile names for it, was judged
        for (const std::string& w : what)
            card_seen = card_seen || !w.starts_with("the host controller");
        if (!shared_by_devices(line->actions)) {
            alone.push_back(label + ": " + core::quoted_list(line->actions));
            continue;
        }
        shared.push_back(label + " is shared by " + core::quoted_list(line->actions));
        (usb_irqs.count(irq) ? usb : card) = true;
    }
    const std::string none = view.sound_cards.absent
                                 ? "the kernel has no ALSA (/proc/asound/cards is missing)"
                                 : "no sound card has an interrupt";
    const std::string not_judged = unseen.empty() ? "" : "; not judged: " + listing(unseen);
    if (shared.empty() && (unseen.empty() || card_seen)) {
        c.reason = (alone.empty() ? none + ", and no USB host controller was found"
                                  : "no interrupt of the sound path is shared: " + listing(alone)) +
                   not_judged;
        return c;
    }
    c.status = Status::warn;
    if (shared.empty()) {
        // no card's interrupt could be found: whether one is shared cannot be seen
        c.reason = "no sound card's interrupt was found, so whether one is shared cannot be "
                   "seen: " +
                   listing(unseen) + (alone.empty() ? "" : "; not shared: " + listing(alone));
        c.fix = "name the interrupt that feeds the card (its handler in /proc/interrupts) in a "
                "profile's tuning.irqs.sound_names and rerun 'rtprov audit'; a card that does "
                "not play (a Raspberry Pi's onboard audio next to a DAC: dtparam=audio=off in "
                "config.txt) can be left out";
        return c;
    }
    c.reason = listing(shared) +
               ": each interrupt runs the other device's handler too, and a level-triggered "
               "line stays raised until both are served" +
               (e && e->irqs ? "; with tuning.irqs, the other handler's thread gets the sound "
                               "path's priority too"
                             : "") +
               not_judged;
    std::vector<std::string> fixes;
    if (card)
        fixes.push_back("give the card an interrupt of its own: its driver's MSI (for "
                        "snd-hda-intel 'options snd-hda-intel enable_msi=1' in "
                        "/etc/modprobe.d/), another PCI slot, or unload the other device's "
                        "driver when it is not needed");
    if (usb)
        fixes.push_back("plug the USB DAC into a port of a USB controller whose interrupt is not "
                        "shared ('lsusb -t' shows which bus a port is on)");
    c.fix = core::join(fixes, "; ");
    return c;
}

} // namespace rtprov::audit
