// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/core/result.hpp"
#include "provisioner/player/read_file.hpp"

#include <optional>
#include <string>
#include <vector>

// squeezelite, PipeWire, WirePlumber and JACK: where each keeps its ALSA period and buffer,
// read and written. Pure: files come as text or through ReadFile/ListDir.
namespace rtprov::player {

// ---- squeezelite: Debian's /etc/default/squeezelite, sourced by /etc/init.d/squeezelite
inline constexpr const char* k_squeezelite_default = "/etc/default/squeezelite";

struct SqueezeliteAlsa {
    std::string variable;             // the shell variable that carries the options
    unsigned line = 0;                // its assignment's line; 0 when it has none
    std::optional<std::string> value; // the -a argument as written ('40:4'); nullopt: none
};

// The -a option in the options variable of 'text' (the file 'path'). Refused (file:line)
// where the shell text cannot be read with certainty: a command substitution, an
// unterminated quote, the variable assigned twice.
core::Result<SqueezeliteAlsa> read_squeezelite_alsa(const std::string& text,
                                                    const std::string& path);

// 'text' with -a <buffer_ms>:<periods> in that variable, every other option and byte kept
// (an -a already there has its first two fields replaced and the others kept; none there
// is added; a missing assignment is added at the end).
core::Result<std::string> set_squeezelite_alsa(const std::string& text, const std::string& path,
                                               unsigned buffer_ms, unsigned periods);

// ---- PipeWire (pipewire.conf(5)): the graph's quantum
struct PipewireClock {
    std::optional<unsigned> quantum;     // default.clock.quantum; nullopt: PipeWire's 1024
    std::optional<unsigned> min_quantum; // default.clock.min-quantum; nullopt: 32
    std::string where; // "file:line" of the quantum that wins, "" when none is set
};

// The files PipeWire reads for its context.properties, in the order it merges them (the
// later wins): pipewire.conf from /etc/pipewire, else /usr/share/pipewire, then the
// drop-ins of /usr/share/pipewire/pipewire.conf.d and /etc/pipewire/pipewire.conf.d by name.
std::vector<std::string> pipewire_conf_files(const ReadFile& read, const ListDir& list);

// Reads the quantum from those files. Refused (file:line) for SPA-JSON it cannot read.
core::Result<PipewireClock> read_pipewire_clock(const std::vector<std::string>& files,
                                                const ReadFile& read);

// rtprov's drop-in for /etc/pipewire/pipewire.conf.d/: 'header' (rtprov's '#' line), then
// context.properties with default.clock.quantum and default.clock.min-quantum = 'quantum'
// (a client may not ask for less than the measurement allows).
std::string pipewire_dropin(const std::string& header, unsigned quantum);

// ---- WirePlumber: the ALSA nodes' period size and headroom
enum class WirePlumberFormat {
    none, // not installed
    json, // 0.5 (Debian 13): SPA-JSON wireplumber.conf.d/
    lua,  // 0.4 (Debian 12): Lua, which rtprov does not write
};
// From the files its package ships: 0.5's /usr/share/wireplumber/wireplumber.conf, 0.4's
// /usr/share/wireplumber/main.lua.d/.
WirePlumberFormat wireplumber_format(const ReadFile& read, const ListDir& list);

// rtprov's 0.5 drop-in for /etc/wireplumber/wireplumber.conf.d/: monitor.alsa.rules
// matching every ALSA output node, with api.alsa.period-size and api.alsa.headroom.
std::string wireplumber_dropin(const std::string& header, unsigned period_frames,
                               unsigned headroom_frames);

// ---- JACK: the jackd command line of a systemd service
struct JackCommand {
    std::string unit_path;         // the unit file holding ExecStart
    unsigned line = 0;             // of the ExecStart= line
    std::vector<std::string> argv; // as systemd splits it (its prefixes like '-' or '@' kept
                                   // out: 'prefix' holds them)
    std::string prefix;
    std::optional<unsigned> period;   // the ALSA driver's -p/--period; nullopt: 1024
    std::optional<unsigned> nperiods; // -n/--nperiods; nullopt: 2
    std::optional<unsigned> rate;     // -r/--rate; nullopt: 48000
};

// The jackd command of the unit 'text' (file 'path'): its one ExecStart= whose program is
// jackd with the alsa driver (-d alsa). Refused (file:line) for several ExecStart= lines,
// another driver, or a command line that does not split.
core::Result<JackCommand> read_jack_command(const std::string& text, const std::string& path);

// A drop-in ([Service], an empty ExecStart= then the command with -p and -n set) for
// /etc/systemd/system/<unit>.d/, 'header' first.
std::string jack_dropin(const std::string& header, const JackCommand& command, unsigned period,
                        unsigned nperiods);

} // namespace rtprov::player
