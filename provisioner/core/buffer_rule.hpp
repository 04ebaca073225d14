// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/core/app.hpp"
#include "provisioner/core/audio_size.hpp"

#include <optional>
#include <string>
#include <vector>

// The buffer rule (docs/audio-buffers.md): how short a player's ALSA period and buffer may
// be, from the worst wake-up measured where the player runs. No audio stack publishes such
// a rule; this one is rtprov's, and the underrun test (rtprov selftest --audio) is what
// proves a setting, not the rule. Pure.
namespace rtprov::core {

// The audio stacks whose buffers rtprov sets, each with its own way to say them.
enum class BufferStack {
    mpd,         // the ALSA output's buffer_time and period_time (mpd.conf(5))
    squeezelite, // -a <buffer ms>:<period count> (squeezelite -h)
    jack,        // jackd's ALSA driver -p <frames> -n <periods> (jackd(1))
    pipewire,    // default.clock.quantum, min-quantum; WirePlumber api.alsa.headroom
};

// The stack of an app key of board-profiles/apps ('mpd', 'squeezelite', 'jackd',
// 'pipewire'); nullopt for an app whose buffers rtprov does not set.
std::optional<BufferStack> buffer_stack(const std::string& app_key);
std::string to_string(BufferStack stack);

// A player's period and buffer, each as the stack says it: MPD and squeezelite in ms,
// JACK and PipeWire in frames. For PipeWire, 'period' is the quantum and 'buffer' is two
// quanta plus the ALSA headroom (buffer - 2 x period).
struct BufferSetting {
    AudioSize period;
    AudioSize buffer;
    friend bool operator==(const BufferSetting&, const BufferSetting&) = default;
};

// An app's own default setting, as the app table has it (alsa_period, alsa_buffer);
// nullopt where the table gives none.
std::optional<BufferSetting> default_buffers(const AppKnowledge& app);

// The rate frames are counted at where the stack does not say it: PipeWire's
// default.clock.rate and jackd's -r default, 48000 Hz.
inline constexpr unsigned k_buffer_rate = 48000;

// The time a player has from the moment it may write a period until the card has played
// everything it holds: buffer - period, in microseconds at 'rate' (every stack here wakes
// when a period is free; PipeWire when quantum + headroom frames are left).
double buffer_deadline_us(const BufferSetting& setting, unsigned rate = k_buffer_rate);

// rtprov's margin: the deadline must hold this many worst wake-ups. Half of it covers the
// wake-up, the other half the player's own work and the tail a run of minutes did not see.
inline constexpr unsigned k_buffer_margin = 2;

// The settings rtprov chooses among for a stack, shortest first: the stack's own shape
// (MPD and squeezelite four periods a buffer, as their defaults; JACK two periods, three
// on USB as jackd(1) recommends; PipeWire powers of two up to its max-quantum 2048).
std::vector<BufferSetting> buffer_ladder(BufferStack stack, bool usb = false);

// The rule's answer for one stack and one measured worst wake-up.
struct BufferChoice {
    // The shortest setting of the ladder whose deadline holds k_buffer_margin x worst_us;
    // nullopt when none does.
    std::optional<BufferSetting> setting;
    double need_us = 0;     // k_buffer_margin x worst_us
    double deadline_us = 0; // of 'setting' (0 without one)
};
BufferChoice choose_buffers(BufferStack stack, double worst_us, bool usb = false);

// What first boot tries, in order: 'from', then each longer setting of the ladder up to
// the app's default ('upto', usually AppKnowledge's alsa_period/alsa_buffer); 'from' alone
// when it is already as long as the default.
std::vector<BufferSetting> buffer_steps(BufferStack stack, const BufferSetting& from,
                                        const BufferSetting& upto, bool usb = false);

} // namespace rtprov::core
