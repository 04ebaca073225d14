// SPDX-License-Identifier: Apache-2.0
#include "provisioner/system/sound_cards.hpp"

#include "tests/unit/catch.hpp"
#include "tests/unit/temp_dir.hpp"

#include <cstdint>
#include <filesystem>

using namespace rtprov::system;

namespace {

// A /proc and /sys tree holding only what the sound-card reader looks at, with the
// symlinks sysfs has (relative, as the kernel makes them).
class SoundSysroot {
  public:
    TempDir dir;

    void cards(const std::string& text) const { dir.write("proc/asound/cards", text); }

    void irq(unsigned number, const std::string& actions, const std::string& chip,
             unsigned long hwirq) const {
        const std::string d = "sys/kernel/irq/" + std::to_string(number) + "/";
        dir.write(d + "actions", actions + "\n");
        dir.write(d + "chip_name", chip + "\n");
        dir.write(d + "hwirq", std::to_string(hwirq) + "\n");
    }

    // A card whose sysfs folder is DEVICE/sound/cardN (DEVICE below /sys/devices), with
    // its id; a card without a device (virtual/sound) has no 'device' link.
    void card(unsigned number, const std::string& device, const std::string& id) const {
        const std::string card_dir =
            "sys/devices/" + device + "/sound/card" + std::to_string(number);
        dir.write(card_dir + "/id", id + "\n");
        dir.write(card_dir + "/number", std::to_string(number) + "\n");
        std::filesystem::create_directories(dir.path() + "/sys/class/sound");
        link("sys/class/sound/card" + std::to_string(number),
             "../../devices/" + device + "/sound/card" + std::to_string(number));
        if (device != "virtual")
            link(card_dir + "/device", "../..");
    }

    void link(const std::string& at, const std::string& target) const {
        std::filesystem::create_symlink(target, dir.path() + "/" + at);
    }

    // A USB root hub folder (it has 'busnum').
    void usb_bus(const std::string& hub, unsigned bus) const {
        dir.write("sys/devices/" + hub + "/busnum", std::to_string(bus) + "\n");
    }

    void dt_node(const std::string& node) const {
        dir.write("sys/firmware/devicetree/base" + node + "/name",
                  node.substr(node.rfind('/') + 1) + std::string(1, '\0'));
    }
    void dt_cells(const std::string& node, const std::string& property,
                  const std::vector<std::uint32_t>& cells) const {
        std::string bytes;
        for (std::uint32_t v : cells)
            for (int shift = 24; shift >= 0; shift -= 8)
                bytes += static_cast<char>((v >> shift) & 0xff);
        dir.write("sys/firmware/devicetree/base" + node + "/" + property, bytes);
    }
    void dt_strings(const std::string& node, const std::string& property,
                    const std::vector<std::string>& strings) const {
        std::string bytes;
        for (const std::string& s : strings)
            bytes += s + std::string(1, '\0');
        dir.write("sys/firmware/devicetree/base" + node + "/" + property, bytes);
    }

    std::vector<SoundCard> read() const {
        SysRoot root(dir.path());
        Fact<std::vector<IrqLine>> lines = read_irq_lines(root);
        REQUIRE(lines);
        Fact<std::vector<SoundCard>> cards = read_sound_cards(root, *lines);
        REQUIRE(cards);
        return *cards;
    }
};

std::vector<unsigned> irqs_of(const SoundCard& card) {
    std::vector<unsigned> out;
    for (const SoundIrq& irq : card.irqs)
        out.push_back(irq.irq);
    return out;
}

} // namespace

TEST_CASE("an x86 box: HDA by its PCI function's MSI, a USB DAC by its xhci controller's") {
    SoundSysroot s;
    s.cards(" 0 [Intel          ]: HDA-Intel - HDA Intel\n"
            "                      HDA Intel at 0xfebf0000 irq 35\n"
            " 1 [Device         ]: USB-Audio - USB Audio Device\n"
            "                      QEMU USB Audio Device at usb-0000:00:05.0-1, full speed\n");
    s.irq(10, "", "IO-APIC", 10);
    s.irq(11, "", "IO-APIC", 11);
    s.irq(24, "virtio0-config", "PCI-MSI", 32768);
    s.irq(35, "snd_hda_intel:card0", "PCI-MSIX-0000:00:04.0", 0);
    s.irq(36, "xhci_hcd", "PCI-MSIX-0000:00:05.0", 0);
    s.irq(37, "", "PCI-MSIX-0000:00:05.0", 1); // a vector xhci allocated but does not use
    s.card(0, "pci0000:00/0000:00:04.0", "Intel");
    s.dir.write("sys/devices/pci0000:00/0000:00:04.0/irq", "11\n");
    s.dir.write("sys/devices/pci0000:00/0000:00:04.0/msi_irqs/35", "msix\n");
    s.card(1, "pci0000:00/0000:00:05.0/usb1/1-1/1-1:1.0", "Device");
    s.usb_bus("pci0000:00/0000:00:05.0/usb1", 1);
    s.dir.write("sys/devices/pci0000:00/0000:00:05.0/irq", "10\n");
    s.dir.write("sys/devices/pci0000:00/0000:00:05.0/msi_irqs/36", "msix\n");
    s.dir.write("sys/devices/pci0000:00/0000:00:05.0/msi_irqs/37", "msix\n");

    std::vector<SoundCard> cards = s.read();
    REQUIRE(cards.size() == 2);
    CHECK(cards[0].id == "Intel");
    CHECK(cards[0].driver == "HDA-Intel");
    CHECK(cards[0].name == "HDA Intel at 0xfebf0000 irq 35");
    CHECK(cards[0].device == "/sys/devices/pci0000:00/0000:00:04.0");
    CHECK_FALSE(cards[0].usb);
    CHECK(irqs_of(cards[0]) == std::vector<unsigned>{35});
    CHECK(cards[0].irqs[0].via == "the card's device 0000:00:04.0 (MSI)");
    CHECK(cards[1].id == "Device");
    CHECK(cards[1].usb);
    CHECK(cards[1].device == "/sys/devices/pci0000:00/0000:00:05.0/usb1/1-1/1-1:1.0");
    CHECK(irqs_of(cards[1]) == std::vector<unsigned>{36}); // 37 has no handler
    CHECK(cards[1].irqs[0].via == "the USB host controller 0000:00:05.0 (MSI)");
    CHECK(cards[1].problem.empty());

    SECTION("without MSI the PCI function's line") {
        std::filesystem::remove_all(s.dir.path() + "/sys/devices/pci0000:00/0000:00:04.0/msi_irqs");
        s.irq(11, "snd_hda_intel:card0", "IO-APIC", 11);
        cards = s.read();
        CHECK(irqs_of(cards[0]) == std::vector<unsigned>{11});
        CHECK(cards[0].irqs[0].via == "the card's device 0000:00:04.0");
    }
}

TEST_CASE("a Pi 4 with USB DACs: the VL805's MSI on PCIe, and dwc_otg's line by its bus") {
    SoundSysroot s;
    s.cards(" 0 [Headphones     ]: bcm2835_headpho - bcm2835 Headphones\n"
            "                      bcm2835 Headphones\n"
            " 1 [DAC            ]: USB-Audio - USB Audio DAC\n"
            "                      Generic USB Audio DAC at usb-0000:01:00.0-1.4, high speed\n"
            " 2 [Gadget         ]: USB-Audio - USB Gadget\n"
            "                      Generic USB Gadget at usb-fe980000.usb-1, full speed\n");
    const std::string vl805 = "platform/scb/fd500000.pcie/pci0000:00/0000:00:00.0/0000:01:00.0";
    s.irq(37, "dwc_otg, dwc_otg_pcd, dwc_otg_hcd:usb3", "GICv2", 105);
    s.irq(41, "mmc0", "GICv2", 158);
    s.irq(55, "xhci_hcd", "BRCM STB PCIe MSI", 524288);
    s.card(0, "platform/soc/fe00b840.mailbox/bcm2835_audio", "Headphones");
    s.card(1, vl805 + "/usb1/1-1/1-1.4/1-1.4:1.0", "DAC");
    s.usb_bus(vl805 + "/usb1", 1);
    s.dir.write("sys/devices/" + vl805 + "/irq", "54\n");
    s.dir.write("sys/devices/" + vl805 + "/msi_irqs/55", "msi\n");
    s.card(2, "platform/soc/fe980000.usb/usb3/3-1/3-1:1.0", "Gadget");
    s.usb_bus("platform/soc/fe980000.usb/usb3", 3);

    std::vector<SoundCard> cards = s.read();
    REQUIRE(cards.size() == 3);
    CHECK(cards[0].irqs.empty());
    CHECK(cards[0].problem.starts_with("no interrupt was found by device: "));
    CHECK(cards[0].problem.find("/sys/devices/platform/soc/fe00b840.mailbox/bcm2835_audio") !=
          std::string::npos);
    CHECK(irqs_of(cards[1]) == std::vector<unsigned>{55});
    CHECK(cards[1].irqs[0].via == "the USB host controller 0000:01:00.0 (MSI)");
    CHECK(irqs_of(cards[2]) == std::vector<unsigned>{37});
    CHECK(cards[2].irqs[0].via == "the USB host controller of bus 3 (fe980000.usb)");
}

TEST_CASE("a Pi 4 with an I2S DAC: the DMA channels its I2S controller names") {
    SoundSysroot s;
    s.cards(" 0 [sndrpihifiberry]: RPi-simple - snd_rpi_hifiberry_dac\n"
            "                      snd_rpi_hifiberry_dac\n");
    // Shaped like bcm2711.dtsi and bcm283x.dtsi: the GIC-400, the legacy DMA controller
    // with one interrupt per channel named dma<N>, and the I2S controller's dmas.
    s.dt_node("/soc");
    s.dt_cells("/soc", "interrupt-parent", {1});
    s.dt_node("/soc/interrupt-controller@40041000");
    s.dt_cells("/soc/interrupt-controller@40041000", "phandle", {1});
    s.dt_strings("/soc/interrupt-controller@40041000", "compatible", {"arm,gic-400"});
    s.dt_cells("/soc/interrupt-controller@40041000", "#interrupt-cells", {3});
    s.dt_node("/soc/dma@7e007000");
    s.dt_cells("/soc/dma@7e007000", "phandle", {0x0b});
    s.dt_cells("/soc/dma@7e007000", "#dma-cells", {1});
    s.dt_cells("/soc/dma@7e007000", "interrupts", {0, 80, 4, 0, 81, 4, 0, 82, 4, 0, 83, 4});
    s.dt_strings("/soc/dma@7e007000", "interrupt-names", {"dma0", "dma1", "dma2", "dma3"});
    s.dt_node("/soc/i2s@7e203000");
    s.dt_cells("/soc/i2s@7e203000", "phandle", {0x2c});
    s.dt_cells("/soc/i2s@7e203000", "dmas", {0x0b, 2, 0x0b, 3});
    s.dt_strings("/soc/i2s@7e203000", "dma-names", {"tx", "rx"});
    s.dt_node("/soc/sound");
    s.dt_strings("/soc/sound", "compatible", {"hifiberry,hifiberry-dac"});
    s.dt_cells("/soc/sound", "i2s-controller", {0x2c});
    s.card(0, "platform/soc/soc:sound", "sndrpihifiberry");
    s.link("sys/devices/platform/soc/soc:sound/of_node",
           "../../../../firmware/devicetree/base/soc/sound");
    s.irq(28, "DMA IRQ", "GICv2", 112);
    s.irq(30, "DMA IRQ", "GICv2", 114);
    s.irq(31, "DMA IRQ", "GICv2", 115);

    std::vector<SoundCard> cards = s.read();
    REQUIRE(cards.size() == 1);
    CHECK(cards[0].device == "/sys/devices/platform/soc/soc:sound");
    CHECK(irqs_of(cards[0]) == std::vector<unsigned>{30, 31});
    CHECK(cards[0].irqs[0].via == "DMA channel 2 of dma@7e007000 (tx of i2s@7e203000)");
    CHECK(cards[0].irqs[1].via == "DMA channel 3 of dma@7e007000 (rx of i2s@7e203000)");

    SECTION("simple-audio-card names its controller in a cpu node's sound-dai") {
        std::filesystem::remove(s.dir.path() +
                                "/sys/firmware/devicetree/base/soc/sound/i2s-controller");
        s.dt_node("/soc/sound/simple-audio-card,cpu");
        s.dt_cells("/soc/sound/simple-audio-card,cpu", "sound-dai", {0x2c});
        CHECK(irqs_of(s.read()[0]) == std::vector<unsigned>{30, 31});
    }
    SECTION("a channel with no IRQ is named in the problem") {
        s.dt_strings("/soc/dma@7e007000", "interrupt-names", {"dma0", "dma1"});
        SoundCard card = s.read()[0];
        CHECK(card.irqs.empty());
        CHECK(card.problem.find("no interrupt named 'dma2' for the tx channel of i2s@7e203000") !=
              std::string::npos);
    }
    SECTION("an interrupt controller rtprov does not know is said, not guessed") {
        s.dt_strings("/soc/interrupt-controller@40041000", "compatible",
                     {"brcm,bcm2836-armctrl-ic"});
        SoundCard card = s.read()[0];
        CHECK(card.irqs.empty());
        CHECK(card.problem.find("brcm,bcm2836-armctrl-ic), an interrupt controller rtprov cannot "
                                "map") != std::string::npos);
    }
    SECTION("what the device tree names stays on one line") {
        s.dt_strings("/soc/interrupt-controller@40041000", "compatible", {"x,ic\nrtprov: ok"});
        SoundCard card = s.read()[0];
        CHECK(card.problem.find("(x,ic\\x0artprov: ok), an interrupt controller") !=
              std::string::npos);
        CHECK(card.problem.find('\n') == std::string::npos);
    }
    SECTION("a controller the card names but the tree lacks") {
        s.dt_cells("/soc/sound", "i2s-controller", {0x77});
        CHECK(s.read()[0].problem.find("no device-tree node has the phandle 119") !=
              std::string::npos);
    }
}

TEST_CASE("the cards' names are read without their interrupts, as read_sound_cards reads them") {
    SoundSysroot s;
    s.cards(" 0 [Intel          ]: HDA-Intel - HDA Intel\n"
            "                      HDA Intel at 0xfebf0000 irq 35\n"
            " 1 [Device         ]: USB-Audio - USB Audio Device\n"
            "                      QEMU USB Audio Device at usb-0000:00:05.0-1, full speed\n"
            " 2 [Loopback       ]: Loopback - Loopback\n"
            "                      Loopback 1\n");
    s.card(0, "pci0000:00/0000:00:04.0", "Intel");
    s.card(1, "pci0000:00/0000:00:05.0/usb1/1-1/1-1:1.0", "Device");
    s.usb_bus("pci0000:00/0000:00:05.0/usb1", 1);
    s.card(2, "virtual", "Loopback");
    // no /sys/kernel/irq: the interrupts are not looked for
    const SysRoot root(s.dir.path());
    Fact<std::vector<SoundCard>> cards = read_sound_card_names(root);
    REQUIRE(cards);
    REQUIRE(cards->size() == 3);
    CHECK((*cards)[0].id == "Intel");
    CHECK((*cards)[0].driver == "HDA-Intel");
    CHECK((*cards)[0].name == "HDA Intel at 0xfebf0000 irq 35");
    CHECK((*cards)[0].device == "/sys/devices/pci0000:00/0000:00:04.0");
    CHECK_FALSE((*cards)[0].usb);
    CHECK((*cards)[1].usb);
    CHECK((*cards)[1].driver == "USB-Audio");
    CHECK((*cards)[2].driver == "Loopback");
    CHECK((*cards)[2].device.empty());
    for (const SoundCard& card : *cards) {
        CHECK(card.irqs.empty());
        CHECK(card.problem.empty());
    }

    std::filesystem::remove_all(s.dir.path() + "/proc/asound");
    Fact<std::vector<SoundCard>> none = read_sound_card_names(root);
    CHECK_FALSE(none);
    CHECK(none.absent);
}

TEST_CASE("cards without a device, a vanished device, no ALSA") {
    SoundSysroot s;
    s.cards(" 0 [Loopback       ]: Loopback - Loopback\n"
            "                      Loopback 1\n"
            " 1 [Gone           ]: USB-Audio - Gone\n"
            "                      Gone\n");
    std::filesystem::create_directories(s.dir.path() + "/sys/kernel/irq");
    s.card(0, "virtual", "Loopback");
    s.dir.write("sys/class/sound/card1/id", "Gone\n");
    s.link("sys/class/sound/card1/device", "../../../devices/pci0000:00/0000:00:05.0/usb1/1-1");
    std::vector<SoundCard> cards = s.read();
    REQUIRE(cards.size() == 2);
    CHECK(cards[0].device.empty());
    CHECK(cards[0].problem.find("no device in sysfs") != std::string::npos);
    CHECK(cards[1].device.empty());
    CHECK_FALSE(cards[1].problem.empty());

    CHECK(cards[0].name == "Loopback 1");
    CHECK(cards[1].name == "Gone");

    s.cards("--- no soundcards ---\n");
    std::filesystem::remove_all(s.dir.path() + "/sys/class/sound");
    std::filesystem::create_directories(s.dir.path() + "/sys/class/sound/timer");
    CHECK(s.read().empty());

    std::filesystem::remove_all(s.dir.path() + "/proc/asound");
    SysRoot root(s.dir.path());
    Fact<std::vector<SoundCard>> none = read_sound_cards(root, {});
    CHECK_FALSE(none);
    CHECK(none.absent);
}

TEST_CASE("a line break in a USB card's name makes no card and stays on one line") {
    // A USB device names itself (iProduct): the kernel writes that into /proc/asound/cards
    // as it is, so a name can hold what looks like another card's first line.
    SoundSysroot s;
    s.cards(" 0 [Intel          ]: HDA-Intel - HDA Intel\n"
            "                      HDA Intel at 0xfebf0000 irq 35\n"
            " 1 [Device         ]: USB-Audio - Evil\n"
            " 7 [Phantom        ]: USB-Audio - Phantom\n"
            "                      Evil\n"
            " 8 [Phantom2       ]: X - Y\x1b[2J\n"
            "                      Z at usb-0000:00:05.0-1, full speed\n"
            "10 [Third          ]: USB-Audio - Third\n"
            "                      Third at usb-0000:00:05.0-2, full speed\n");
    std::filesystem::create_directories(s.dir.path() + "/sys/kernel/irq");
    s.card(0, "pci0000:00/0000:00:04.0", "Intel");
    s.card(1, "pci0000:00/0000:00:05.0/usb1/1-1/1-1:1.0", "Device");
    s.card(10, "pci0000:00/0000:00:05.0/usb1/1-2/1-2:1.0", "Third");
    s.dir.write("sys/class/sound/controlC0/dev", "116:0\n"); // not a card

    std::vector<SoundCard> cards = s.read();
    REQUIRE(cards.size() == 3); // the cards in sysfs, in the order of their numbers
    CHECK(cards[0].number == 0);
    CHECK(cards[0].id == "Intel");
    CHECK(cards[0].name == "HDA Intel at 0xfebf0000 irq 35");
    CHECK(cards[1].number == 1);
    CHECK(cards[1].id == "Device");
    CHECK(cards[1].driver == "USB-Audio");
    CHECK(cards[1].name == "7 [Phantom        ]: USB-Audio - Phantom\\x0a"
                           "                      Evil\\x0a"
                           " 8 [Phantom2       ]: X - Y\\x1b[2J\\x0a"
                           "                      Z at usb-0000:00:05.0-1, full speed");
    CHECK(cards[2].number == 10);
    CHECK(cards[2].id == "Third");
    CHECK(cards[2].name == "Third at usb-0000:00:05.0-2, full speed");
    for (const SoundCard& card : cards) {
        INFO(card.name);
        CHECK(card.name.find_first_of("\n\r\x1b") == std::string::npos);
    }
}

TEST_CASE("a card's id comes from sysfs, on one line, and finds its names by it") {
    // the kernel keeps an id to letters, digits, '_' and '-' (sound/core/init.c); a copied
    // tree need not
    SoundSysroot s;
    s.cards(" 0 [a\nb            ]: USB-Audio - Odd\n"
            "                      Odd Device\n");
    s.card(0, "virtual", "a\nb");
    s.card(3, "virtual", "NoText");
    std::filesystem::create_directories(s.dir.path() + "/sys/kernel/irq");
    std::vector<SoundCard> cards = s.read();
    REQUIRE(cards.size() == 2);
    CHECK(cards[0].id == "a\\x0ab");
    CHECK(cards[0].driver == "USB-Audio");
    CHECK(cards[0].name == "Odd Device");
    CHECK(cards[1].id == "NoText"); // in sysfs, not (yet) in /proc/asound/cards
    CHECK(cards[1].name.empty());
}

TEST_CASE("USB host controllers: by the '<driver>:usbN' line, else their device's MSI or line") {
    SoundSysroot s;
    const std::string vl805 = "platform/scb/fd500000.pcie/pci0000:00/0000:00:00.0/0000:01:00.0";
    s.irq(37, "dwc_otg, dwc_otg_pcd, dwc_otg_hcd:usb3", "GICv2", 105);
    s.irq(55, "xhci_hcd", "BRCM STB PCIe MSI", 524288);
    s.irq(56, "", "BRCM STB PCIe MSI", 524289); // a vector without a handler
    s.irq(16, "ehci_hcd:usb4, eth0", "IO-APIC", 16);
    s.usb_bus(vl805 + "/usb1", 1);
    s.usb_bus(vl805 + "/usb2", 2);
    s.dir.write("sys/devices/" + vl805 + "/msi_irqs/55", "msi\n");
    s.dir.write("sys/devices/" + vl805 + "/msi_irqs/56", "msi\n");
    s.usb_bus("platform/soc/fe980000.usb/usb3", 3);
    s.usb_bus("pci0000:00/0000:00:1d.0/usb4", 4);
    s.dir.write("sys/devices/pci0000:00/0000:00:1d.0/irq", "16\n");
    s.usb_bus("platform/dummy_hcd.0/usb5", 5);
    std::filesystem::create_directories(s.dir.path() + "/sys/bus/usb/devices");
    for (const auto& [bus, hub] : std::vector<std::pair<std::string, std::string>>{
             {"usb1", vl805 + "/usb1"},
             {"usb2", vl805 + "/usb2"},
             {"usb3", "platform/soc/fe980000.usb/usb3"},
             {"usb4", "pci0000:00/0000:00:1d.0/usb4"},
             {"usb5", "platform/dummy_hcd.0/usb5"},
             {"1-1", vl805 + "/usb1"}})
        s.link("sys/bus/usb/devices/" + bus, "../../../devices/" + hub);
    SysRoot root(s.dir.path());
    std::vector<UsbHost> hosts = read_usb_hosts(root, *read_irq_lines(root));
    REQUIRE(hosts.size() == 5);
    CHECK(hosts[0].bus == 1);
    CHECK(hosts[0].controller == "0000:01:00.0");
    CHECK(hosts[0].irqs == std::vector<unsigned>{55});
    CHECK(hosts[1].irqs == std::vector<unsigned>{55}); // USB 2 and 3 buses of one xhci
    CHECK(hosts[2].controller == "fe980000.usb");
    CHECK(hosts[2].irqs == std::vector<unsigned>{37});
    CHECK(hosts[3].irqs == std::vector<unsigned>{16});
    CHECK(hosts[4].irqs.empty());
    CHECK(read_usb_hosts(SysRoot(s.dir.path() + "/nothing"), {}).empty());
}
