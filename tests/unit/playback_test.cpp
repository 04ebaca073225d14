// SPDX-License-Identifier: Apache-2.0
#include "provisioner/system/playback.hpp"

#include "tests/unit/catch.hpp"
#include "tests/unit/temp_dir.hpp"

#include <filesystem>

using namespace rtprov::system;
using rtprov::core::Result;

namespace {

// The /proc/asound and /sys/class/sound of a machine, as far as the playback reader looks.
class SoundTree {
  public:
    TempDir dir;
    std::string cards_text;

    // A card: its line pair in /proc/asound/cards, its sysfs folder with 'id'; a USB card's
    // device sits below a root hub with 'busnum'.
    void card(unsigned n, const std::string& id, const std::string& driver, const std::string& name,
              bool usb = false) {
        std::string padded = id + std::string(id.size() < 15 ? 15 - id.size() : 0, ' ');
        cards_text += (n < 10 ? " " : "") + std::to_string(n) + " [" + padded + "]: " + driver +
                      " - " + name + "\n                      " + name + "\n";
        dir.write("proc/asound/cards", cards_text);
        const std::string card_dir = "sys/class/sound/card" + std::to_string(n);
        dir.write(card_dir + "/id", id + "\n");
        if (usb) {
            const std::string device =
                "sys/devices/pci0000:00/0000:00:05.0/usb1/1-" + std::to_string(n);
            dir.write("sys/devices/pci0000:00/0000:00:05.0/usb1/busnum", "1\n");
            dir.write(device + "/idVendor", "1234\n");
            std::filesystem::create_symlink("../../../devices/pci0000:00/0000:00:05.0/usb1/1-" +
                                                std::to_string(n),
                                            dir.path() + "/" + card_dir + "/device");
        }
    }

    // A PCM of card 'n': its sound-class device, and its info file unless 'info' is empty.
    void pcm(unsigned n, unsigned device, char stream, const std::string& info) {
        const std::string name = "pcmC" + std::to_string(n) + "D" + std::to_string(device) + stream;
        dir.write("sys/class/sound/" + name + "/dev", "116:" + std::to_string(device) + "\n");
        if (!info.empty())
            dir.write("proc/asound/card" + std::to_string(n) + "/pcm" + std::to_string(device) +
                          stream + "/info",
                      info);
    }

    static std::string info(unsigned n, unsigned device, const std::string& id,
                            const std::string& name, unsigned count = 1, unsigned avail = 1) {
        return "card: " + std::to_string(n) + "\ndevice: " + std::to_string(device) +
               "\nsubdevice: 0\nstream: PLAYBACK\nid: " + id + "\nname: " + name +
               "\nsubname: subdevice #0\nclass: 0\nsubclass: 0\nsubdevices_count: " +
               std::to_string(count) + "\nsubdevices_avail: " + std::to_string(avail) + "\n";
    }

    std::vector<PlaybackDevice> read() const {
        Fact<std::vector<PlaybackDevice>> devices = read_playback_devices(SysRoot(dir.path()));
        REQUIRE(devices);
        return *devices;
    }
};

// A card with its device, as read_playback_devices gives them.
PlaybackDevice device(unsigned card, unsigned n, const std::string& id, const std::string& name,
                      bool loopback = false) {
    PlaybackDevice d;
    d.card = card;
    d.device = n;
    d.card_id = id;
    d.card_driver = loopback ? "Loopback" : "USB-Audio";
    d.card_name = name;
    d.loopback = loopback;
    d.id = "USB Audio";
    d.alsa_name = "hw:CARD=" + id + ",DEV=" + std::to_string(n);
    d.node = "/dev/snd/pcmC" + std::to_string(card) + "D" + std::to_string(n) + "p";
    return d;
}

} // namespace

TEST_CASE("playback devices: each card's playback PCMs with the card's names, not captures") {
    SoundTree t;
    t.card(0, "PCH", "HDA-Intel", "HDA Intel PCH at 0xf7f10000 irq 33");
    t.pcm(0, 0, 'p', SoundTree::info(0, 0, "ALC887-VD Analog", "ALC887-VD Analog"));
    t.pcm(0, 0, 'c', SoundTree::info(0, 0, "ALC887-VD Analog", "ALC887-VD Analog"));
    t.pcm(0, 3, 'p', SoundTree::info(0, 3, "HDMI 0", "HDMI 0", 1, 0));
    t.card(1, "DAC", "USB-Audio", "Generic USB Audio DAC at usb-0000:00:05.0-1, high speed", true);
    t.pcm(1, 0, 'p', SoundTree::info(1, 0, "USB Audio", "USB Audio"));
    t.dir.write("sys/class/sound/controlC0/dev", "116:0\n");
    t.dir.write("sys/class/sound/timer/dev", "116:33\n");

    std::vector<PlaybackDevice> devices = t.read();
    REQUIRE(devices.size() == 3);
    CHECK(devices[0].card == 0);
    CHECK(devices[0].device == 0);
    CHECK(devices[0].card_id == "PCH");
    CHECK(devices[0].card_driver == "HDA-Intel");
    CHECK(devices[0].card_name == "HDA Intel PCH at 0xf7f10000 irq 33");
    CHECK(devices[0].id == "ALC887-VD Analog");
    CHECK(devices[0].name == "ALC887-VD Analog");
    CHECK(devices[0].alsa_name == "hw:CARD=PCH,DEV=0");
    CHECK(devices[0].node == "/dev/snd/pcmC0D0p");
    CHECK_FALSE(devices[0].usb);
    CHECK_FALSE(devices[0].loopback);
    CHECK(devices[0].subdevices == 1u);
    CHECK(devices[0].subdevices_free == 1u);
    CHECK(devices[1].device == 3);
    CHECK(devices[1].id == "HDMI 0");
    CHECK(devices[1].subdevices_free == 0u); // open by someone
    CHECK(devices[1].alsa_name == "hw:CARD=PCH,DEV=3");
    CHECK(devices[2].card == 1);
    CHECK(devices[2].usb);
    CHECK(devices[2].alsa_name == "hw:CARD=DAC,DEV=0");
}

TEST_CASE("playback devices: a loopback card, a PCM without info, no ALSA at all") {
    SoundTree t;
    t.card(2, "Loopback", "Loopback", "Loopback 1");
    t.pcm(2, 0, 'p', SoundTree::info(2, 0, "Loopback PCM", "Loopback PCM", 8, 8));
    t.pcm(2, 1, 'p', "");
    std::vector<PlaybackDevice> devices = t.read();
    REQUIRE(devices.size() == 2);
    CHECK(devices[0].loopback);
    CHECK(devices[0].subdevices == 8u);
    CHECK(devices[0].alsa_name == "hw:CARD=Loopback,DEV=0");
    CHECK(devices[1].loopback);
    CHECK(devices[1].id.empty());
    CHECK_FALSE(devices[1].subdevices);
    CHECK(devices[1].alsa_name == "hw:CARD=Loopback,DEV=1");

    // cards but none that plays
    std::filesystem::remove_all(t.dir.path() + "/sys/class/sound/pcmC2D0p");
    std::filesystem::remove_all(t.dir.path() + "/sys/class/sound/pcmC2D1p");
    CHECK(t.read().empty());
    // the kernel has no ALSA: nothing plays, which is no failure
    std::filesystem::remove_all(t.dir.path() + "/proc/asound");
    std::filesystem::remove_all(t.dir.path() + "/sys/class/sound");
    CHECK(t.read().empty());
    // a /proc that cannot be read is a failure
    t.dir.write("proc/asound/cards", "");
    Fact<std::vector<PlaybackDevice>> unlisted = read_playback_devices(SysRoot(t.dir.path()));
    CHECK_FALSE(unlisted);
    CHECK(unlisted.problem.find("/sys/class/sound") != std::string::npos);
}

TEST_CASE("playback devices: hostile card ids and PCM names stay on one line and forge nothing") {
    SoundTree t;
    t.card(0, "a\x1b[2Jb", "USB-Audio", "Evil");
    // a PCM name with a line break that looks like the counts
    t.pcm(0, 0, 'p',
          SoundTree::info(0, 0, "x\nname: forged", "y\nsubdevices_avail: 9\nsubname: z", 1, 0));
    std::vector<PlaybackDevice> devices = t.read();
    REQUIRE(devices.size() == 1);
    CHECK(devices[0].card_id == "a\\x1b[2Jb");
    // not a name alsa-lib can be given: the card by number
    CHECK(devices[0].alsa_name == "hw:0,0");
    CHECK(devices[0].subdevices_free == 0u);
    CHECK(devices[0].id == "x");
    CHECK(devices[0].name == "forged\\x0aname: y\\x0asubdevices_avail: 9\\x0asubname: z");
    for (const std::string& text : {devices[0].id, devices[0].name, devices[0].card_id})
        CHECK(text.find_first_of("\n\x1b") == std::string::npos);

    // an info file that is not one: no names, no counts
    t.pcm(0, 0, 'p', "error -19\n");
    devices = t.read();
    REQUIRE(devices.size() == 1);
    CHECK(devices[0].id.empty());
    CHECK_FALSE(devices[0].subdevices_free);
}

TEST_CASE("no device asked for: the only card that plays, its first playback device") {
    const std::vector<PlaybackDevice> one = {device(1, 0, "DAC", "USB Audio DAC"),
                                             device(1, 1, "DAC", "USB Audio DAC")};
    Result<PlaybackChoice> choice = choose_playback_device(one, "");
    REQUIRE(choice);
    CHECK(choice->kind == PlaybackChoiceKind::only_card);
    CHECK(choice->alsa_name == "hw:CARD=DAC,DEV=0");
    REQUIRE(choice->device);
    CHECK(choice->device->device == 0);
    CHECK(choice->note ==
          "the only sound card that plays: card 1 'DAC' (USB Audio DAC), device 0 'USB Audio'");

    // a loopback card left loaded does not make it ambiguous
    std::vector<PlaybackDevice> with_loopback = one;
    with_loopback.push_back(device(2, 0, "Loopback", "Loopback 1", true));
    choice = choose_playback_device(with_loopback, "");
    REQUIRE(choice);
    CHECK(choice->alsa_name == "hw:CARD=DAC,DEV=0");
    CHECK(choice->note == "the only sound card that plays: card 1 'DAC' (USB Audio DAC), "
                          "device 0 'USB Audio'; the loopback card left aside");

    // only a loopback card: that one, said
    choice = choose_playback_device({device(2, 0, "Loopback", "Loopback 1", true)}, "");
    REQUIRE(choice);
    CHECK(choice->alsa_name == "hw:CARD=Loopback,DEV=0");
    CHECK(choice->note.ends_with(", a loopback card"));
}

TEST_CASE("no device asked for: no card, or several cards, is refused with what to do") {
    Result<PlaybackChoice> none = choose_playback_device({}, "");
    REQUIRE_FALSE(none);
    CHECK(none.problem ==
          "no sound card plays here: pass --audio=loopback to test through a loopback card "
          "(snd-aloop), which measures the scheduling, not a DAC's own path");

    PlaybackDevice hdmi = device(0, 3, "PCH", "HDA Intel PCH");
    hdmi.id = "HDMI 0";
    const std::vector<PlaybackDevice> two = {device(0, 0, "PCH", "HDA Intel PCH"), hdmi,
                                             device(1, 0, "DAC", "USB Audio DAC")};
    Result<PlaybackChoice> several = choose_playback_device(two, "");
    REQUIRE_FALSE(several);
    CHECK(several.problem ==
          "2 sound cards play here: pass --audio=DEVICE or set tuning.selftest.audio_device to "
          "the one to test:\n"
          "  card 0 'PCH' (HDA Intel PCH), device 0 'USB Audio': hw:CARD=PCH,DEV=0\n"
          "  card 0 'PCH' (HDA Intel PCH), device 3 'HDMI 0': hw:CARD=PCH,DEV=3\n"
          "  card 1 'DAC' (USB Audio DAC), device 0 'USB Audio': hw:CARD=DAC,DEV=0");
}

TEST_CASE("a device asked for by its ALSA name is matched to a card's, or passed through") {
    const std::vector<PlaybackDevice> two = {device(0, 0, "PCH", "HDA Intel PCH"),
                                             device(1, 0, "DAC", "USB Audio DAC"),
                                             device(1, 1, "DAC", "USB Audio DAC")};
    for (const std::string name :
         {"hw:CARD=DAC,DEV=1", "hw:DAC,1", "hw:1,1", "plughw:CARD=DAC,DEV=1", "plughw:1,1",
          "hw:CARD=\"DAC\",DEV=1", "hw:DEV=1,CARD=1", "hw:1,1,0"}) {
        INFO(name);
        Result<PlaybackChoice> choice = choose_playback_device(two, name);
        REQUIRE(choice);
        CHECK(choice->kind == PlaybackChoiceKind::named);
        CHECK(choice->alsa_name == name); // as given: plughw stays plughw
        REQUIRE(choice->device);
        CHECK(choice->device->card == 1);
        CHECK(choice->device->device == 1);
    }
    // DEV defaults to 0
    Result<PlaybackChoice> card_only = choose_playback_device(two, "hw:CARD=DAC");
    REQUIRE(card_only);
    CHECK(card_only->device->device == 0);
    CHECK(card_only->note == "card 1 'DAC' (USB Audio DAC), device 0 'USB Audio', as "
                             "'hw:CARD=DAC'");

    for (const std::string name : {"pipewire", "jack", "default", "front:CARD=DAC,DEV=0",
                                   "hw:CARD=DAC,DEV=0,FORMAT=S16_LE", "dmix"}) {
        INFO(name);
        Result<PlaybackChoice> choice = choose_playback_device(two, name);
        REQUIRE(choice);
        CHECK(choice->kind == PlaybackChoiceKind::passed);
        CHECK(choice->alsa_name == name);
        CHECK_FALSE(choice->device);
    }
    CHECK(choose_playback_device(two, "pipewire")->note ==
          "'pipewire' names no sound card's device: opened through alsa-lib as given");
    // passed through even with no card at all: a sound server may still play
    CHECK(choose_playback_device({}, "pipewire"));
}

TEST_CASE("an ALSA name of a card or device that does not play is refused with the list") {
    const std::vector<PlaybackDevice> two = {device(0, 0, "PCH", "HDA Intel PCH"),
                                             device(1, 0, "DAC", "USB Audio DAC")};
    Result<PlaybackChoice> no_card = choose_playback_device(two, "hw:CARD=Nope,DEV=0");
    REQUIRE_FALSE(no_card);
    CHECK(no_card.problem ==
          "'hw:CARD=Nope,DEV=0' names no sound card that plays here ('Nope'): pass "
          "--audio=DEVICE with one of these:\n"
          "  card 0 'PCH' (HDA Intel PCH), device 0 'USB Audio': hw:CARD=PCH,DEV=0\n"
          "  card 1 'DAC' (USB Audio DAC), device 0 'USB Audio': hw:CARD=DAC,DEV=0");
    Result<PlaybackChoice> no_device = choose_playback_device(two, "hw:1,3");
    REQUIRE_FALSE(no_device);
    CHECK(no_device.problem ==
          "'hw:1,3': card 1 'DAC' (USB Audio DAC) has no playback device 3; its playback "
          "devices:\n"
          "  card 1 'DAC' (USB Audio DAC), device 0 'USB Audio': hw:CARD=DAC,DEV=0");
    Result<PlaybackChoice> none = choose_playback_device({}, "hw:0,0");
    REQUIRE_FALSE(none);
    CHECK(none.problem == "'hw:0,0' names no sound card that plays here ('0'): there is none; "
                          "pass --audio=loopback to test through a loopback card (snd-aloop), "
                          "which measures the scheduling, not a DAC's own path");
    // a hostile name given by the user is shown on one line
    Result<PlaybackChoice> hostile = choose_playback_device(two, "hw:CARD=a\nb");
    REQUIRE_FALSE(hostile);
    CHECK(hostile.problem.starts_with("'hw:CARD=a\\x0ab' names no sound card"));
}

TEST_CASE("the loopback device is the first loopback card's first playback device") {
    CHECK_FALSE(loopback_device({device(0, 0, "DAC", "USB Audio DAC")}));
    std::optional<PlaybackDevice> loop = loopback_device(
        {device(0, 0, "DAC", "USB Audio DAC"), device(2, 0, "Loopback", "Loopback 1", true),
         device(2, 1, "Loopback", "Loopback 1", true)});
    REQUIRE(loop);
    CHECK(loop->alsa_name == "hw:CARD=Loopback,DEV=0");
}
