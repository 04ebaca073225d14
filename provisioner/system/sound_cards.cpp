// SPDX-License-Identifier: Apache-2.0
#include "provisioner/system/sound_cards.hpp"

#include "provisioner/core/text.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <fnmatch.h>
#include <limits>
#include <map>
#include <optional>

namespace rtprov::system {

namespace {

const std::string k_devices = "/sys/devices";
const std::string k_dt = "/sys/firmware/devicetree/base";
constexpr std::size_t k_max_dt_nodes = 8192; // a Pi's tree has a few hundred
constexpr std::size_t k_max_dt_depth = 16;

std::string basename(const std::string& path) {
    const std::size_t slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string parent(const std::string& path) {
    const std::size_t slash = path.rfind('/');
    return slash == std::string::npos || slash == 0 ? "/" : path.substr(0, slash);
}

std::optional<unsigned long> number(const std::string& text) {
    unsigned long value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size())
        return std::nullopt;
    return value;
}

// "usb3" → 3: the root hub of USB bus 3.
std::optional<unsigned long> usb_bus(const std::string& name) {
    if (!name.starts_with("usb"))
        return std::nullopt;
    return number(name.substr(3));
}

// A device-tree property of NUL-terminated strings.
std::vector<std::string> dt_strings(const std::string& bytes) {
    std::vector<std::string> out;
    std::string current;
    for (char c : bytes) {
        if (c == '\0') {
            out.push_back(current);
            current.clear();
        } else {
            current += c;
        }
    }
    if (!current.empty())
        out.push_back(current);
    return out;
}

// The chip name the kernel gives interrupts of a device-tree interrupt controller, for
// the controllers whose specifier rtprov maps (the ARM GIC: Pi 4 and most arm64 boards).
std::optional<std::string> gic_chip(const std::vector<std::string>& compatible) {
    for (const std::string& c : compatible) {
        if (c == "arm,gic-400" || c == "arm,cortex-a15-gic" || c == "arm,cortex-a9-gic" ||
            c == "arm,cortex-a7-gic")
            return "GICv2";
        if (c == "arm,gic-v3")
            return "GICv3";
    }
    return std::nullopt;
}

// The driver and long name /proc/asound/cards shows for each card. The kernel writes each
// card as "%2i [%-15s]: %s - %s\n" (number, id, driver, short name) and then its long name
// on a line of its own, indented by 22 spaces (snd_card_info_read, sound/core/init.c). The
// names are the driver's and the device's (a USB device names itself), and nothing keeps
// a line break out of them, so the file cannot say which cards there are: the cards come
// from sysfs. Each finds here the first line that starts as its own first line would
// ("%2i [%-15s]: " with its number and id), searching below the card before it, and takes
// the text up to the next card's first line. A hostile name can at worst garble its own
// card's names and the next card's, never make a card; a line break in one shows as \x0a.
struct CardText {
    std::string driver, name;
};

std::map<unsigned, CardText>
card_texts(const std::string& text, const std::vector<std::pair<unsigned, std::string>>& cards) {
    std::vector<std::size_t> starts; // where each line starts
    for (std::size_t at = 0; at < text.size();) {
        starts.push_back(at);
        const std::size_t end = text.find('\n', at);
        at = end == std::string::npos ? text.size() : end + 1;
    }
    struct Found {
        unsigned number;
        std::size_t line, prefix;
    };
    std::vector<Found> found;
    std::size_t from = 0;
    for (const auto& [number, id] : cards) {
        std::string prefix = (number < 10 ? " " : "") + std::to_string(number) + " [" + id;
        prefix += std::string(id.size() < 15 ? 15 - id.size() : 0, ' ') + "]: ";
        for (std::size_t l = from; l < starts.size(); ++l)
            if (text.compare(starts[l], prefix.size(), prefix) == 0) {
                found.push_back({number, l, prefix.size()});
                // the next card's first line starts below this one's (an id with a line
                // break in it, in a copied tree, spans lines)
                for (from = l + 1;
                     from < starts.size() && starts[from] < starts[l] + prefix.size();)
                    ++from;
                break;
            }
    }
    std::map<unsigned, CardText> out;
    for (std::size_t k = 0; k < found.size(); ++k) {
        const std::size_t start = starts[found[k].line];
        const std::size_t head_end =
            std::min(text.find('\n', start + found[k].prefix), text.size());
        const std::size_t end = k + 1 < found.size() ? starts[found[k + 1].line] : text.size();
        // "DRIVER - SHORT NAME" on the first line; below it the long name, indented
        const std::string rest =
            text.substr(start + found[k].prefix, head_end - start - found[k].prefix);
        std::string body = head_end < end ? text.substr(head_end + 1, end - head_end - 1) : "";
        if (body.ends_with('\n'))
            body.pop_back();
        out[found[k].number] = {core::one_line(core::trim(rest.substr(0, rest.find(" - ")))),
                                core::one_line(core::trim(body))};
    }
    return out;
}

// The card's device in sysfs (/sys/class/sound/cardN/device resolved) into card.device,
// and whether it sits on a USB bus (a root hub usbN with 'busnum' above it); the fact
// says why there is none.
Fact<std::string> place(const SysRoot& root, SoundCard& card) {
    Fact<std::string> device =
        root.resolve("/sys/class/sound/card" + std::to_string(card.number) + "/device");
    if (!device)
        return device;
    card.device = *device;
    for (std::string d = card.device; d.starts_with(k_devices + "/"); d = parent(d))
        if (std::optional<unsigned long> bus = usb_bus(basename(d));
            bus && root.exists(d + "/busnum"))
            card.usb = true;
    return device;
}

class Finder {
  public:
    Finder(const SysRoot& root, const std::vector<IrqLine>& lines) : m_root(root), m_lines(lines) {}

    // 'device': the card's device link resolved (see place()).
    void find(SoundCard& card, const Fact<std::string>& device) {
        if (!device) {
            const std::string link =
                "/sys/class/sound/card" + std::to_string(card.number) + "/device";
            card.problem = device.absent ? "it has no device in sysfs ('" + link +
                                               "'): a virtual card, which no interrupt feeds"
                                         : device.problem;
            return;
        }
        if (from_device_chain(card) || from_dt_links(card))
            return;
        card.problem = "no interrupt was found by device: " +
                       (m_reasons.empty() ? "'" + card.device + "' and the devices above it " +
                                                "show none in sysfs"
                                          : core::join(m_reasons, "; "));
    }

  private:
    const SysRoot& m_root;
    const std::vector<IrqLine>& m_lines;
    std::optional<std::map<std::uint32_t, std::string>> m_phandles;
    std::vector<std::string> m_reasons;

    const IrqLine* line(unsigned long irq) const {
        for (const IrqLine& l : m_lines)
            if (l.number == irq)
                return &l;
        return nullptr;
    }

    // Walks from the card's device up through its bus devices; the first that shows an
    // interrupt is the one feeding the card.
    bool from_device_chain(SoundCard& card) {
        bool above_bus = false;
        for (std::string d = card.device; d.starts_with(k_devices + "/"); d = parent(d)) {
            const std::string name = basename(d);
            if (std::optional<unsigned long> bus = usb_bus(name);
                bus && m_root.exists(d + "/busnum")) {
                // usb_hcd_request_irqs names the line "<driver>:usb<bus>" (drivers/usb/core/hcd.c)
                const std::string suffix = ":usb" + std::to_string(*bus);
                for (const IrqLine& l : m_lines)
                    for (const std::string& action : l.actions)
                        if (action.ends_with(suffix))
                            card.irqs.push_back({l.number, "the USB host controller of bus " +
                                                               std::to_string(*bus) + " (" +
                                                               basename(parent(d)) + ")"});
                if (!card.irqs.empty())
                    return true;
                above_bus = true;
                continue;
            }
            const std::string role =
                (above_bus ? "the USB host controller " : "the card's device ") + name;
            if (Fact<std::vector<int>> msi = m_root.numbered(d + "/msi_irqs")) {
                for (int irq : *msi)
                    if (const IrqLine* l = line(static_cast<unsigned long>(irq));
                        l && !l->actions.empty())
                        card.irqs.push_back({l->number, role + " (MSI)"});
                if (!card.irqs.empty())
                    return true;
            }
            if (Fact<long long> irq = m_root.integer(d + "/irq"); irq && *irq > 0)
                if (const IrqLine* l = line(static_cast<unsigned long>(*irq));
                    l && !l->actions.empty()) {
                    card.irqs.push_back({l->number, role});
                    return true;
                }
            if (std::optional<std::string> node = of_node(d)) {
                for (unsigned irq : node_interrupts(*node))
                    card.irqs.push_back({irq, role});
                if (!card.irqs.empty())
                    return true;
            }
        }
        return false;
    }

    // A device-tree card (an I2S DAC): its CPU-side controller named by 'i2s-controller'
    // (rpi-simple-soundcard and the Pi's other card drivers) or by a 'sound-dai' in its
    // cpu node (simple-audio-card), then the controller's own interrupts and those of the
    // DMA channels in its 'dmas' (the samples move by DMA, so that is what is late).
    bool from_dt_links(SoundCard& card) {
        std::optional<std::string> node = of_node(card.device);
        if (!node)
            return false;
        std::vector<std::uint32_t> links = cells(*node, "i2s-controller");
        if (Fact<std::vector<std::string>> children = m_root.names(*node))
            for (const std::string& child : *children)
                if (child.find("cpu") != std::string::npos &&
                    m_root.exists(*node + "/" + child + "/name")) {
                    std::vector<std::uint32_t> dai = cells(*node + "/" + child, "sound-dai");
                    if (!dai.empty())
                        links.push_back(dai.front());
                }
        if (links.empty()) {
            m_reasons.push_back("its device-tree node '" + *node +
                                "' names no I2S controller ('i2s-controller' or a cpu node's "
                                "'sound-dai')");
            return false;
        }
        for (std::uint32_t phandle : links) {
            std::optional<std::string> controller = node_of(phandle);
            if (!controller) {
                m_reasons.push_back("no device-tree node has the phandle " +
                                    std::to_string(phandle) + " its node '" + *node + "' names");
                continue;
            }
            const std::string controller_name = basename(*controller);
            for (unsigned irq : node_interrupts(*controller))
                card.irqs.push_back({irq, "its I2S controller " + controller_name});
            from_dmas(card, *controller, controller_name);
        }
        return !card.irqs.empty();
    }

    void from_dmas(SoundCard& card, const std::string& controller, const std::string& name) {
        const std::vector<std::uint32_t> dmas = cells(controller, "dmas");
        const std::vector<std::string> dma_names = dt_strings(text(controller, "dma-names"));
        std::size_t index = 0;
        for (std::size_t at = 0; at < dmas.size(); ++index) {
            std::optional<std::string> provider = node_of(dmas[at]);
            if (!provider) {
                m_reasons.push_back("the DMA controller of '" + controller + "' (phandle " +
                                    std::to_string(dmas[at]) + ") is not in the device tree");
                return;
            }
            const std::vector<std::uint32_t> dma_cells = cells(*provider, "#dma-cells");
            const std::size_t n = dma_cells.empty() ? 1 : dma_cells.front();
            if (n == 0 || at + 1 + n > dmas.size()) {
                m_reasons.push_back("'" + controller + "/dmas' does not match '" + *provider +
                                    "/#dma-cells'");
                return;
            }
            const std::uint32_t channel = dmas[at + 1];
            at += 1 + n;
            const std::string use = index < dma_names.size() ? dma_names[index] : "dma";
            // bcm2835-dma names each channel's interrupt "dma<channel>"
            // (Documentation/devicetree/bindings/dma/brcm,bcm2835-dma.yaml)
            const std::vector<std::string> irq_names =
                dt_strings(text(*provider, "interrupt-names"));
            auto it =
                std::find(irq_names.begin(), irq_names.end(), "dma" + std::to_string(channel));
            if (it == irq_names.end()) {
                m_reasons.push_back("'" + *provider + "' has no interrupt named 'dma" +
                                    std::to_string(channel) + "' for the " + use + " channel of " +
                                    name);
                continue;
            }
            const auto position = static_cast<std::size_t>(it - irq_names.begin());
            std::vector<unsigned> irqs = node_interrupts(*provider, position);
            for (unsigned irq : irqs)
                card.irqs.push_back({irq, "DMA channel " + std::to_string(channel) + " of " +
                                              basename(*provider) + " (" + use + " of " + name +
                                              ")"});
        }
    }

    std::optional<std::string> of_node(const std::string& device) {
        Fact<std::string> node = m_root.resolve(device + "/of_node");
        if (!node)
            return std::nullopt;
        // of_node points into /sys/firmware/devicetree/base (/proc/device-tree links there)
        return *node;
    }

    std::string text(const std::string& node, const std::string& property) const {
        Fact<std::string> bytes = m_root.text(node + "/" + property);
        return bytes ? *bytes : std::string();
    }

    std::vector<std::uint32_t> cells(const std::string& node, const std::string& property) const {
        const std::string bytes = text(node, property);
        std::vector<std::uint32_t> out;
        for (std::size_t at = 0; at + 4 <= bytes.size(); at += 4) {
            std::uint32_t v = 0;
            for (std::size_t i = 0; i < 4; ++i)
                v = (v << 8) | static_cast<unsigned char>(bytes[at + i]);
            out.push_back(v);
        }
        return out;
    }

    std::optional<std::string> node_of(std::uint32_t phandle) {
        if (!m_phandles) {
            m_phandles.emplace();
            std::size_t seen = 0;
            index_phandles(k_dt, 0, seen);
        }
        auto it = m_phandles->find(phandle);
        if (it == m_phandles->end())
            return std::nullopt;
        return it->second;
    }

    void index_phandles(const std::string& node, std::size_t depth, std::size_t& seen) {
        if (depth > k_max_dt_depth || ++seen > k_max_dt_nodes)
            return;
        for (const char* property : {"phandle", "linux,phandle"}) {
            std::vector<std::uint32_t> value = cells(node, property);
            if (value.size() == 1)
                m_phandles->emplace(value.front(), node);
        }
        if (Fact<std::vector<std::string>> children = m_root.names(node))
            for (const std::string& child : *children)
                if (m_root.exists(node + "/" + child + "/name"))
                    index_phandles(node + "/" + child, depth + 1, seen);
    }

    // The Linux IRQs of a node's 'interrupts' (all, or only the one at 'only'), for an
    // interrupt parent rtprov can map; otherwise a reason and none.
    std::vector<unsigned> node_interrupts(const std::string& node,
                                          std::optional<std::size_t> only = std::nullopt) {
        const std::vector<std::uint32_t> spec = cells(node, "interrupts");
        if (spec.empty())
            return {};
        std::optional<std::string> controller;
        for (std::string n = node; n.starts_with(k_dt) && !controller; n = parent(n))
            if (std::vector<std::uint32_t> p = cells(n, "interrupt-parent"); p.size() == 1)
                controller = node_of(p.front());
        if (!controller) {
            m_reasons.push_back("the interrupt controller of '" + node + "' is not found");
            return {};
        }
        const std::vector<std::string> compatible = dt_strings(text(*controller, "compatible"));
        const std::vector<std::uint32_t> n_cells = cells(*controller, "#interrupt-cells");
        std::optional<std::string> chip = gic_chip(compatible);
        if (!chip || n_cells.size() != 1 || n_cells.front() != 3) {
            m_reasons.push_back("the interrupts of '" + node + "' belong to '" + *controller +
                                "' (" + core::join(compatible, ", ") +
                                "), an interrupt controller rtprov cannot map");
            return {};
        }
        std::vector<unsigned> out;
        for (std::size_t at = 0, i = 0; at + 3 <= spec.size(); at += 3, ++i) {
            if (only && i != *only)
                continue;
            // GIC specifier <type number flags>: type 0 is an SPI (INTID number + 32), 1 a
            // PPI (number + 16) (Documentation/devicetree/bindings/interrupt-controller/
            // arm,gic.yaml)
            if (spec[at] > 1)
                continue;
            const unsigned long hwirq = spec[at + 1] + (spec[at] == 0 ? 32UL : 16UL);
            bool found = false;
            for (const IrqLine& l : m_lines)
                if (l.chip == *chip && l.hwirq == hwirq && !l.actions.empty()) {
                    out.push_back(l.number);
                    found = true;
                }
            if (!found)
                m_reasons.push_back("no IRQ with a handler has " + *chip + " interrupt " +
                                    std::to_string(hwirq) + " ('" + node + "')");
        }
        return out;
    }
};

} // namespace

std::optional<unsigned> irq_of_thread(const std::string& comm) {
    const std::size_t dash = comm.find('-');
    if (!comm.starts_with("irq/") || dash == std::string::npos)
        return std::nullopt;
    const std::optional<unsigned long> n = number(comm.substr(4, dash - 4));
    if (!n || *n > std::numeric_limits<unsigned>::max())
        return std::nullopt;
    return static_cast<unsigned>(*n);
}

Fact<std::vector<IrqLine>> read_irq_lines(const SysRoot& root) {
    Fact<std::vector<int>> numbers = root.numbered("/sys/kernel/irq");
    if (!numbers)
        return Fact<std::vector<IrqLine>>::failed(numbers.problem, numbers.absent);
    std::vector<IrqLine> out;
    for (int n : *numbers) {
        const std::string dir = "/sys/kernel/irq/" + std::to_string(n);
        IrqLine l;
        l.number = static_cast<unsigned>(n);
        if (Fact<std::string> actions = root.value(dir + "/actions"))
            for (const std::string& action : core::split(*actions, ','))
                if (std::string a(core::trim(action)); !a.empty())
                    l.actions.push_back(a);
        if (Fact<std::string> chip = root.value(dir + "/chip_name"))
            l.chip = *chip;
        if (Fact<std::string> hwirq = root.value(dir + "/hwirq"))
            l.hwirq = number(*hwirq);
        out.push_back(std::move(l));
    }
    return {std::move(out), {}, false};
}

std::vector<UsbHost> read_usb_hosts(const SysRoot& root, const std::vector<IrqLine>& lines) {
    std::vector<UsbHost> out;
    Fact<std::vector<std::string>> names = root.names("/sys/bus/usb/devices");
    if (!names)
        return out;
    for (const std::string& name : *names) {
        const std::optional<unsigned long> bus = usb_bus(name);
        if (!bus)
            continue;
        UsbHost host;
        host.bus = *bus;
        Fact<std::string> hub = root.resolve("/sys/bus/usb/devices/" + name);
        const std::string controller = hub ? parent(*hub) : std::string();
        host.controller = controller.empty() ? std::string() : basename(controller);
        const std::string suffix = ":usb" + std::to_string(*bus);
        for (const IrqLine& l : lines)
            for (const std::string& action : l.actions)
                if (action.ends_with(suffix) &&
                    std::find(host.irqs.begin(), host.irqs.end(), l.number) == host.irqs.end())
                    host.irqs.push_back(l.number);
        auto with_handler = [&](unsigned long irq) {
            for (const IrqLine& l : lines)
                if (l.number == irq && !l.actions.empty())
                    return true;
            return false;
        };
        if (host.irqs.empty() && controller.starts_with(k_devices + "/")) {
            if (Fact<std::vector<int>> msi = root.numbered(controller + "/msi_irqs"))
                for (int irq : *msi)
                    if (irq >= 0 && with_handler(static_cast<unsigned long>(irq)))
                        host.irqs.push_back(static_cast<unsigned>(irq));
            if (Fact<long long> irq = root.integer(controller + "/irq");
                host.irqs.empty() && irq && *irq > 0 &&
                with_handler(static_cast<unsigned long>(*irq)))
                host.irqs.push_back(static_cast<unsigned>(*irq));
        }
        std::sort(host.irqs.begin(), host.irqs.end());
        out.push_back(std::move(host));
    }
    std::sort(out.begin(), out.end(),
              [](const UsbHost& a, const UsbHost& b) { return a.bus < b.bus; });
    return out;
}

namespace {

// A card as read_sound_card_names gives it, and its device link resolved.
struct PlacedCard {
    SoundCard card;
    Fact<std::string> device;
};

Fact<std::vector<PlacedCard>> read_placed_cards(const SysRoot& root) {
    Fact<std::string> text = root.text("/proc/asound/cards");
    if (!text)
        return Fact<std::vector<PlacedCard>>::failed(text.problem, text.absent);
    // Each card is a device 'cardN' of the sound class, N its number, with its id in the
    // attribute 'id' (sound/core/init.c: snd_card_init names it, card_id_show_attr).
    Fact<std::vector<std::string>> entries = root.names("/sys/class/sound");
    if (!entries)
        return Fact<std::vector<PlacedCard>>::failed(entries.problem);
    std::vector<std::pair<unsigned, std::string>> cards; // number, id as the kernel has it
    for (const std::string& entry : *entries) {
        std::optional<unsigned long> n =
            entry.starts_with("card") ? number(entry.substr(4)) : std::nullopt;
        if (!n || *n > std::numeric_limits<unsigned>::max())
            continue;
        Fact<std::string> id = root.value("/sys/class/sound/" + entry + "/id");
        cards.emplace_back(static_cast<unsigned>(*n), id ? *id : std::string());
    }
    std::sort(cards.begin(), cards.end());
    std::map<unsigned, CardText> texts = card_texts(*text, cards);
    std::vector<PlacedCard> out;
    for (const auto& [n, id] : cards) {
        PlacedCard placed;
        placed.card.number = n;
        placed.card.id = core::one_line(id);
        placed.card.driver = std::move(texts[n].driver);
        placed.card.name = std::move(texts[n].name);
        placed.device = place(root, placed.card);
        out.push_back(std::move(placed));
    }
    return {std::move(out), {}, false};
}

} // namespace

Fact<std::vector<SoundCard>> read_sound_card_names(const SysRoot& root) {
    Fact<std::vector<PlacedCard>> placed = read_placed_cards(root);
    if (!placed)
        return Fact<std::vector<SoundCard>>::failed(placed.problem, placed.absent);
    std::vector<SoundCard> out;
    for (const PlacedCard& p : *placed)
        out.push_back(p.card);
    return {std::move(out), {}, false};
}

Fact<std::vector<SoundCard>> read_sound_cards(const SysRoot& root,
                                              const std::vector<IrqLine>& irq_lines) {
    Fact<std::vector<PlacedCard>> placed = read_placed_cards(root);
    if (!placed)
        return Fact<std::vector<SoundCard>>::failed(placed.problem, placed.absent);
    std::vector<SoundCard> out;
    for (const PlacedCard& p : *placed) {
        SoundCard card = p.card;
        Finder(root, irq_lines).find(card, p.device);
        // they name devices and device-tree nodes and strings, as the firmware gave them
        card.problem = core::one_line(card.problem);
        for (SoundIrq& irq : card.irqs)
            irq.via = core::one_line(irq.via);
        std::sort(card.irqs.begin(), card.irqs.end(),
                  [](const SoundIrq& a, const SoundIrq& b) { return a.irq < b.irq; });
        out.push_back(std::move(card));
    }
    return {std::move(out), {}, false};
}

std::set<unsigned> sound_path_irqs(const std::vector<SoundCard>& cards,
                                   const std::vector<IrqLine>& lines,
                                   const std::vector<std::string>& globs,
                                   std::vector<std::string>* unmatched) {
    std::set<unsigned> irqs;
    for (const SoundCard& card : cards)
        for (const SoundIrq& irq : card.irqs)
            irqs.insert(irq.irq);
    for (const std::string& glob : globs) {
        bool matched = false;
        for (const IrqLine& line : lines)
            for (const std::string& action : line.actions)
                if (::fnmatch(glob.c_str(), action.c_str(), 0) == 0) {
                    irqs.insert(line.number);
                    matched = true;
                }
        if (!matched && unmatched)
            unmatched->push_back(glob);
    }
    return irqs;
}

} // namespace rtprov::system
