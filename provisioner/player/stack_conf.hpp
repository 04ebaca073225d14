// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/core/result.hpp"
#include "provisioner/player/read_file.hpp"

#include <map>
#include <optional>
#include <string>
#include <vector>

// squeezelite, PipeWire, WirePlumber and JACK: where each keeps its ALSA period and buffer,
// read and written. Pure: files come as text or through ReadFile/ListDir.
namespace rtprov::player {

// ---- squeezelite: Debian's /etc/default/squeezelite, sourced by /etc/init.d/squeezelite
// (Debian 12 and 13 ship the same two files and no systemd unit), whose extra options go
// in SB_EXTRA_ARGS: the init script appends its value, unquoted, to squeezelite's command
// line.
inline constexpr const char* k_squeezelite_default = "/etc/default/squeezelite";

struct SqueezeliteAlsa {
    std::string variable;             // the shell variable that carries the options
    unsigned line = 0;                // its assignment's line; 0 when it has none
    std::optional<std::string> value; // the -a argument as written ('40:4'); nullopt: none
};

// The -a option in the options variable of 'text' (the file 'path'): the value of the last
// -a squeezelite reads, found the way its own option loop finds it. Refused (path:line)
// where it cannot be read with certainty: the file holds anything but 'NAME=value' lines
// and comments, a quote is never closed, the variable is assigned twice or holds a command
// substitution, another variable or a file name pattern; or squeezelite would not start
// with the options (an option it does not know, '-a40:4' joined, '-a' without a value, a
// word that is neither an option nor a value).
core::Result<SqueezeliteAlsa> read_squeezelite_alsa(const std::string& text,
                                                    const std::string& path);

// 'text' with -a <buffer_ms>:<periods> in that variable, every other byte kept: an -a
// already there has its first two fields replaced (':format:mmap' kept); without one,
// ' -a B:P' goes at the end of the value, inside its closing quote; without an
// assignment, 'SB_EXTRA_ARGS="-a B:P"' is a new line after the last commented-out
// assignment (Debian's '#SB_EXTRA_ARGS=""', which stays as it is), else at the end.
// Refused as read_squeezelite_alsa refuses, for an -a value written with quotes or
// backslashes inside it, and for values squeezelite would read as sizes (buffer_ms 0 or
// 500 and more, periods 0 or 50 and more).
core::Result<std::string> set_squeezelite_alsa(const std::string& text, const std::string& path,
                                               unsigned buffer_ms, unsigned periods);

// ---- PipeWire (pipewire.conf(5)): the graph's quantum
struct PipewireClock {
    std::optional<unsigned> quantum;     // default.clock.quantum; nullopt: PipeWire's 1024
    std::optional<unsigned> min_quantum; // default.clock.min-quantum; nullopt: 32
    std::optional<unsigned> max_quantum; // default.clock.max-quantum; nullopt: 2048
    std::string where; // "file:line" of the quantum that wins, "" when none is set
    // Each of these three keys ("default.clock.quantum", ...) a file sets: "file:line" of
    // the last setting, a 'null' included.
    std::map<std::string, std::string> set_at;
};

// The files PipeWire reads for its context.properties, in the order it merges them (the
// later wins): pipewire.conf from /etc/pipewire, else /usr/share/pipewire, then the
// *.conf drop-ins of /usr/share/pipewire/pipewire.conf.d and /etc/pipewire/pipewire.conf.d,
// each folder by name, in the order and with the files of the same name left out as the
// installed version does (it changed in 1.0.4 and 1.5.81: Debian 12's 0.3.65 applies
// /usr/share's drop-ins after /etc's; the .cpp has the details). The version is read from
// the first line of the package's pipewire.conf. A user's ~/.config/pipewire, read before
// and after these, is not looked at. Absent when PipeWire is not installed (neither
// pipewire.conf); refused when its version cannot be told.
core::Result<std::vector<std::string>> pipewire_conf_files(const ReadFile& read,
                                                           const ListDir& list);

// The quantum, min-quantum and max-quantum of the context.properties of those files, each file read
// whole as SPA-JSON (spa_json.hpp), a later file's key winning, 'null' removing one, a
// key nested deeper (vm.overrides) not counting. A file that is absent is skipped, as
// PipeWire does. Refused (path:line) for SPA-JSON it cannot read, a context.properties
// that is not an object, or a value that is not a whole number or null. In a virtual
// machine PipeWire raises min-quantum itself (vm.overrides, context.properties.rules),
// which this does not model.
core::Result<PipewireClock> read_pipewire_clock(const std::vector<std::string>& files,
                                                const ReadFile& read);

// rtprov's drop-in for /etc/pipewire/pipewire.conf.d/: 'header' (rtprov's '#' line; a
// newline is added when it has none), then context.properties with default.clock.quantum
// and default.clock.min-quantum = 'quantum' (a client may not ask for less than the
// measurement allows), and the same min-quantum in a virtual machine, where PipeWire
// would otherwise raise it to 1024 (vm.overrides = null for 0.3, a context.properties.rules
// rule for 1.x).
std::string pipewire_dropin(const std::string& header, unsigned quantum);

// ---- WirePlumber: the ALSA nodes' period size and headroom
enum class WirePlumberFormat {
    none, // not installed
    json, // 0.5 (Debian 13): SPA-JSON wireplumber.conf.d/
    lua,  // 0.4 (Debian 12): Lua, which rtprov does not write
};
// From the files its package ships: 0.4's /usr/share/wireplumber/main.lua.d/ (0.4 ships a
// wireplumber.conf too, which loads the Lua), else 0.5's
// /usr/share/wireplumber/wireplumber.conf.
WirePlumberFormat wireplumber_format(const ReadFile& read, const ListDir& list);

// rtprov's 0.5 drop-in for /etc/wireplumber/wireplumber.conf.d/: 'header', then a
// monitor.alsa.rules rule matching every ALSA output node (node.name "~alsa_output.*")
// that updates api.alsa.period-size and api.alsa.headroom. Fragments load /usr/share's
// first, then /etc's, each folder by name, and a later rule's update wins: this one wins
// over Debian 13's alsa-vm.conf (1024 and 2048 in a virtual machine). A file of the same
// name as one in /usr/share hides it: give it a name of its own.
std::string wireplumber_dropin(const std::string& header, unsigned period_frames,
                               unsigned headroom_frames);

// ---- JACK: the jackd command line of a systemd service
struct JackCommand {
    std::string unit_path; // the unit file holding ExecStart
    unsigned line = 0;     // of the ExecStart= line
    // As systemd splits it (unit_syntax.hpp), the program first, without its prefixes
    // ('-', '@', ':', '+', '!'), which 'prefix' holds; with '@' the second word is the
    // name jackd runs as.
    std::vector<std::string> argv;
    std::string prefix;
    // The ALSA driver's values, the last given of each; one given without a value is the
    // driver's default. nullopt: not given (the defaults 1024, 2 and 48000).
    std::optional<unsigned> period;   // -p/--period
    std::optional<unsigned> nperiods; // -n/--nperiods
    std::optional<unsigned> rate;     // -r/--rate
};

// The jackd command of the unit 'text' (file 'path'): its one ExecStart= in [Service] (an
// empty 'ExecStart=' resets the ones before) whose program is jackd with the ALSA driver:
// jackd's options (common/Jackdmp.cpp), '-d alsa' in any of its forms ('-dalsa',
// '--audio-driver=alsa'), then the driver's (-p 256, -p256, --period=256, --period 256).
// Refused (path:line) for no or several ExecStart= lines, a command line that does not
// split with certainty (a specifier, a variable, several commands), another program or
// driver, an option jackd does not know or an abbreviated long one, a word jackd would
// ignore, or a -p, -n or -r value that is not a whole number.
core::Result<JackCommand> read_jack_command(const std::string& text, const std::string& path);

// A drop-in for /etc/systemd/system/<unit>.d/: 'header', then "[Service]", an empty
// "ExecStart=" and the command with every -p and -n of the driver set in place (their
// form kept), or "-p P" and "-n N" added right after '-d alsa'; each word written so that
// systemd splits it back the same. 'command' must come from read_jack_command.
std::string jack_dropin(const std::string& header, const JackCommand& command, unsigned period,
                        unsigned nperiods);

} // namespace rtprov::player
