// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/core/result.hpp"
#include "provisioner/system/sysroot.hpp"

#include <optional>
#include <string>
#include <vector>

// The ALSA playback devices of the running system, and the choice of the one the audio
// self-test plays to. A playback PCM is the sound-class device pcmC<card>D<device>p
// (/sys/class/sound, sound/core/pcm.c names it), with its names in
// /proc/asound/card<card>/pcm<device>p/info (snd_pcm_proc_info_read, sound/core/pcm.c);
// its card's names come from read_sound_card_names.
namespace rtprov::system {

struct PlaybackDevice {
    unsigned card = 0;   // N of pcmC<N>D<M>p
    unsigned device = 0; // M
    // The names below are each one printable line (core::one_line), as SoundCard's.
    std::string card_id;     // 'DAC', 'Loopback', 'PCH'
    std::string card_driver; // 'USB-Audio', 'HDA-Intel', 'Loopback'
    std::string card_name;   // the card's long name
    bool loopback = false;   // an snd-aloop card (driver 'Loopback'): no DAC behind it
    bool usb = false;        // the card sits on a USB bus
    std::string id;          // the PCM's id ('USB Audio', 'HDMI 0'); "" when info is missing
    std::string name;        // the PCM's name
    std::optional<unsigned> subdevices;      // 'subdevices_count'
    std::optional<unsigned> subdevices_free; // 'subdevices_avail': not open by anyone
    // The name alsa-lib opens it by: 'hw:CARD=<id>,DEV=<M>', stable across boots; 'hw:<N>,<M>'
    // when the card's id holds a byte other than a letter, digit, '_' or '-' (the kernel
    // allows only those, sound/core/init.c; a copied tree need not).
    std::string alsa_name;
    std::string node; // '/dev/snd/pcmC<N>D<M>p'
};

// Every playback PCM, by card and device number. Empty when the kernel has no ALSA
// (/proc/asound/cards absent) or no card plays. A PCM whose info cannot be read is kept
// with its card's names and an empty 'id' and 'name'. Fails as read_sound_card_names
// does otherwise.
Fact<std::vector<PlaybackDevice>> read_playback_devices(const SysRoot& root);

// How choose_playback_device chose.
enum class PlaybackChoiceKind {
    only_card, // none was asked for: the only card that plays (loopback cards aside)
    named,     // the name given names one of the cards' playback devices
    passed,    // the name given names no card's device: alsa-lib may know it ('pipewire')
};

struct PlaybackChoice {
    PlaybackChoiceKind kind = PlaybackChoiceKind::only_card;
    std::string alsa_name;                // what to open: the device's, or the name as given
    std::optional<PlaybackDevice> device; // the card's device it is; nullopt when passed
    std::string note;                     // one line for the report: how it was chosen
};

// The device to play to. 'wanted' "" takes the only card that plays, its first playback
// device; loopback cards count only when no other card plays (one left loaded must not
// make the choice ambiguous). 'wanted' an ALSA name: 'hw:' or 'plughw:' with 'CARD=<id or
// number>[,DEV=<M>]' or '<id or number>[,<M>]' is matched to the cards' playback devices,
// and refused when it names a card or device that does not play (alsa-lib opens no other);
// any other name ('pipewire', 'jack', 'default', 'front:CARD=DAC') is passed through as
// given. The failure is the whole refusal for the user: no card (and --audio=loopback),
// several cards (each listed with its ALSA name, and --audio=DEVICE or
// tuning.selftest.audio_device), or a name that names no playback device.
core::Result<PlaybackChoice> choose_playback_device(const std::vector<PlaybackDevice>& devices,
                                                    const std::string& wanted);

// The first playback device of the first loopback card, or nullopt: what --audio=loopback
// plays to once snd-aloop is loaded.
std::optional<PlaybackDevice> loopback_device(const std::vector<PlaybackDevice>& devices);

} // namespace rtprov::system
