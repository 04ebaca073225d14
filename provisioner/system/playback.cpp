// SPDX-License-Identifier: Apache-2.0
#include "provisioner/system/playback.hpp"

#include "provisioner/core/text.hpp"
#include "provisioner/system/sound_cards.hpp"

#include <algorithm>
#include <charconv>
#include <limits>
#include <map>
#include <tuple>

namespace rtprov::system {

namespace {

std::optional<unsigned> number(std::string_view text) {
    unsigned value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size())
        return std::nullopt;
    return value;
}

// "pcmC1D0p" → {1, 0}; a capture device or any other name → nullopt.
std::optional<std::pair<unsigned, unsigned>> playback_pcm(const std::string& name) {
    if (!name.starts_with("pcmC") || !name.ends_with('p'))
        return std::nullopt;
    const std::string middle = name.substr(4, name.size() - 5);
    const std::size_t d = middle.find('D');
    if (d == std::string::npos)
        return std::nullopt;
    std::optional<unsigned> card = number(std::string_view(middle).substr(0, d));
    std::optional<unsigned> device = number(std::string_view(middle).substr(d + 1));
    if (!card || !device)
        return std::nullopt;
    return std::make_pair(*card, *device);
}

// A card id alsa-lib can be given in 'CARD=' as it is.
bool plain_id(const std::string& id) {
    return !id.empty() && std::all_of(id.begin(), id.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '_' || c == '-';
    });
}

// The names and counts of /proc/asound/cardN/pcmMp/info, which the kernel writes as
// "card: %d\ndevice: %d\nsubdevice: %d\nstream: %s\nid: %s\nname: %s\nsubname: %s\n
// class: %d\nsubclass: %d\nsubdevices_count: %d\nsubdevices_avail: %d\n"
// (snd_pcm_proc_info_read, sound/core/pcm.c). The id, name and subname are the driver's
// (a USB device's own strings among them) and may hold a line break, so the counts are read
// from the last four lines and the names between the fixed lines around them: a hostile
// name garbles at worst its own device's names.
void read_info(const std::string& text, PlaybackDevice& device) {
    std::vector<std::string> lines = core::split(text, '\n');
    if (!lines.empty() && lines.back().empty())
        lines.pop_back();
    if (lines.size() < 11)
        return;
    auto field = [&](std::size_t from_end, const std::string& key) -> std::optional<unsigned> {
        const std::string& line = lines[lines.size() - from_end];
        if (!line.starts_with(key + ": "))
            return std::nullopt;
        return number(std::string_view(line).substr(key.size() + 2));
    };
    device.subdevices = field(2, "subdevices_count");
    device.subdevices_free = field(1, "subdevices_avail");
    // the text between "stream: …" and "class: N", "subclass: N" and the counts
    std::string middle;
    for (std::size_t i = 4; i + 4 < lines.size(); ++i)
        middle += (i > 4 ? "\n" : "") + lines[i];
    if (!middle.starts_with("id: "))
        return;
    const std::size_t name = middle.find("\nname: ");
    const std::size_t subname = middle.rfind("\nsubname: ");
    if (name == std::string::npos || subname == std::string::npos || subname < name)
        return;
    device.id = core::one_line(middle.substr(4, name - 4));
    device.name = core::one_line(middle.substr(name + 7, subname - name - 7));
}

std::string describe_card(const PlaybackDevice& d) {
    std::string text = "card " + std::to_string(d.card) + " '" + d.card_id + "'";
    if (!d.card_name.empty())
        text += " (" + d.card_name + ")";
    return text;
}

std::string describe_device(const PlaybackDevice& d) {
    std::string text = "device " + std::to_string(d.device);
    if (!d.id.empty())
        text += " '" + d.id + "'";
    return text;
}

// One line per device: "card 1 'DAC' (USB Audio DAC), device 0 'USB Audio': hw:CARD=DAC,DEV=0".
std::string device_list(const std::vector<PlaybackDevice>& devices) {
    std::string text;
    for (const PlaybackDevice& d : devices)
        text += "\n  " + describe_card(d) + ", " + describe_device(d) + ": " + d.alsa_name +
                (d.loopback ? " (a loopback card)" : "");
    return text;
}

const std::string k_no_card =
    "pass --audio=loopback to test through a loopback card (snd-aloop), which measures the "
    "scheduling, not a DAC's own path";

// What an ALSA 'hw:' or 'plughw:' name says of the card and device (alsa-lib's
// pcm.hw and pcm.plughw in alsa.conf: arguments CARD, DEV, SUBDEV, given as KEY=VALUE or by
// position; DEV defaults to 0).
struct HwName {
    std::string card;
    unsigned device = 0;
};

std::optional<HwName> parse_hw_name(const std::string& name) {
    std::string args;
    if (name.starts_with("hw:"))
        args = name.substr(3);
    else if (name.starts_with("plughw:"))
        args = name.substr(7);
    else
        return std::nullopt;
    static const char* const k_keys[] = {"CARD", "DEV", "SUBDEV"};
    std::map<std::string, std::string> values;
    std::size_t position = 0;
    for (std::string arg : core::split(args, ',')) {
        std::string key;
        if (const std::size_t eq = arg.find('='); eq != std::string::npos) {
            key = arg.substr(0, eq);
            arg = arg.substr(eq + 1);
        } else if (position < 3) {
            key = k_keys[position];
        } else {
            return std::nullopt;
        }
        ++position;
        if (arg.size() >= 2 && arg.front() == '"' && arg.back() == '"')
            arg = arg.substr(1, arg.size() - 2);
        if ((key != "CARD" && key != "DEV" && key != "SUBDEV") || values.count(key) != 0)
            return std::nullopt;
        values[key] = arg;
    }
    if (values["CARD"].empty())
        return std::nullopt;
    HwName out;
    out.card = values["CARD"];
    if (values.count("DEV") != 0) {
        std::optional<unsigned> device = number(values["DEV"]);
        if (!device)
            return std::nullopt;
        out.device = *device;
    }
    return out;
}

} // namespace

Fact<std::vector<PlaybackDevice>> read_playback_devices(const SysRoot& root) {
    Fact<std::vector<SoundCard>> cards = read_sound_card_names(root);
    if (!cards && cards.absent)
        return {std::vector<PlaybackDevice>{}, {}, false}; // no ALSA: no card plays
    if (!cards)
        return Fact<std::vector<PlaybackDevice>>::failed(cards.problem);
    Fact<std::vector<std::string>> entries = root.names("/sys/class/sound");
    if (!entries)
        return Fact<std::vector<PlaybackDevice>>::failed(entries.problem);
    std::map<unsigned, const SoundCard*> by_number;
    for (const SoundCard& card : *cards)
        by_number[card.number] = &card;
    std::vector<PlaybackDevice> out;
    for (const std::string& entry : *entries) {
        const auto pcm = playback_pcm(entry);
        if (!pcm)
            continue;
        PlaybackDevice d;
        d.card = pcm->first;
        d.device = pcm->second;
        std::string raw_id; // as alsa-lib is given it
        if (auto it = by_number.find(d.card); it != by_number.end()) {
            d.card_id = it->second->id;
            d.card_driver = it->second->driver;
            d.card_name = it->second->name;
            d.usb = it->second->usb;
            if (Fact<std::string> id =
                    root.value("/sys/class/sound/card" + std::to_string(d.card) + "/id"))
                raw_id = *id;
        }
        // snd-aloop names its cards' driver "Loopback" (sound/drivers/aloop.c)
        d.loopback = d.card_driver == "Loopback";
        if (Fact<std::string> info = root.text("/proc/asound/card" + std::to_string(d.card) +
                                               "/pcm" + std::to_string(d.device) + "p/info"))
            read_info(*info, d);
        d.alsa_name = plain_id(raw_id)
                          ? "hw:CARD=" + raw_id + ",DEV=" + std::to_string(d.device)
                          : "hw:" + std::to_string(d.card) + "," + std::to_string(d.device);
        d.node = "/dev/snd/" + entry;
        out.push_back(std::move(d));
    }
    std::sort(out.begin(), out.end(), [](const PlaybackDevice& a, const PlaybackDevice& b) {
        return std::tie(a.card, a.device) < std::tie(b.card, b.device);
    });
    return {std::move(out), {}, false};
}

core::Result<PlaybackChoice> choose_playback_device(const std::vector<PlaybackDevice>& devices,
                                                    const std::string& wanted) {
    using Choice = core::Result<PlaybackChoice>;
    if (wanted.empty()) {
        std::vector<unsigned> cards, loopbacks;
        for (const PlaybackDevice& d : devices) {
            std::vector<unsigned>& list = d.loopback ? loopbacks : cards;
            if (std::find(list.begin(), list.end(), d.card) == list.end())
                list.push_back(d.card);
        }
        if (cards.empty() && loopbacks.empty())
            return Choice::failed("no sound card plays here: " + k_no_card);
        const bool only_loopback = cards.empty();
        if (only_loopback)
            cards = loopbacks;
        if (cards.size() > 1)
            return Choice::failed(
                std::to_string(cards.size()) +
                " sound cards play here: pass --audio=DEVICE or set tuning.selftest.audio_device "
                "to the one to test:" +
                device_list(devices));
        for (const PlaybackDevice& d : devices)
            if (d.card == cards.front()) {
                PlaybackChoice c{PlaybackChoiceKind::only_card, d.alsa_name, d, ""};
                c.note = "the only sound card that plays: " + describe_card(d) + ", " +
                         describe_device(d);
                if (only_loopback)
                    c.note += ", a loopback card";
                else if (!loopbacks.empty())
                    c.note += "; the loopback card left aside";
                return {c, {}, false};
            }
        return Choice::failed("no sound card plays here: " + k_no_card); // not reached
    }
    const std::optional<HwName> hw = parse_hw_name(wanted);
    if (!hw) {
        PlaybackChoice c{PlaybackChoiceKind::passed, wanted, std::nullopt, ""};
        c.note = "'" + core::one_line(wanted) +
                 "' names no sound card's device: opened through alsa-lib as given";
        return {c, {}, false};
    }
    const std::optional<unsigned> card_number = number(hw->card);
    std::vector<PlaybackDevice> of_card;
    for (const PlaybackDevice& d : devices)
        if (card_number ? d.card == *card_number : d.card_id == hw->card)
            of_card.push_back(d);
    const std::string shown = "'" + core::one_line(wanted) + "'";
    if (of_card.empty())
        return Choice::failed(
            shown + " names no sound card that plays here ('" + core::one_line(hw->card) + "'): " +
            (devices.empty() ? "there is none; " + k_no_card
                             : "pass --audio=DEVICE with one of these:" + device_list(devices)));
    for (const PlaybackDevice& d : of_card)
        if (d.device == hw->device) {
            PlaybackChoice c{PlaybackChoiceKind::named, wanted, d, ""};
            c.note = describe_card(d) + ", " + describe_device(d) + ", as " + shown;
            return {c, {}, false};
        }
    return Choice::failed(shown + ": " + describe_card(of_card.front()) +
                          " has no playback device " + std::to_string(hw->device) +
                          "; its playback devices:" + device_list(of_card));
}

std::optional<PlaybackDevice> loopback_device(const std::vector<PlaybackDevice>& devices) {
    for (const PlaybackDevice& d : devices)
        if (d.loopback)
            return d;
    return std::nullopt;
}

} // namespace rtprov::system
