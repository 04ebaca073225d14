// SPDX-License-Identifier: Apache-2.0
// Fuzz target: the players' configuration readers and writers of player/stack_conf.hpp on
// one input, taken as each of: /etc/default/squeezelite (player::read_squeezelite_alsa,
// set_squeezelite_alsa, through player::read_shell_assignments), a PipeWire drop-in
// (player::read_pipewire_clock, through player::read_spa_json), and a systemd unit and
// its first line as an ExecStart= value (player::read_jack_command, jack_dropin, through
// player::split_exec_line and exec_line_word). Invariants:
//  - squeezelite: what was written reads back with the -a asked for, and writing it again
//    changes nothing; without an -a, the write is one insertion and every byte of the
//    input is kept around it; with one whose buffer and periods were plain numbers
//    squeezelite reads as ms and a count (below 500 and 50), setting them back gives
//    every byte back;
//  - PipeWire: a file read or refused, never more; rtprov's drop-in after it wins;
//  - JACK: the drop-in reads back as the same command (prefix, rate, the words) with the
//    period and count asked for, and making it again from that changes nothing; each word
//    of a split command line is split back the same from exec_line_word.
#include "provisioner/player/spa_json.hpp"
#include "provisioner/player/stack_conf.hpp"
#include "provisioner/player/unit_syntax.hpp"

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace {

using namespace rtprov;
using namespace rtprov::player;

const std::string k_default = "/etc/default/squeezelite";

void squeezelite(const std::string& text) {
    const auto read = read_squeezelite_alsa(text, k_default);
    const auto set = set_squeezelite_alsa(text, k_default, 123, 7);
    if (!read) {
        if (set)
            __builtin_trap(); // a file that does not read is not written
        return;
    }
    if (!set)
        return; // an -a value with quotes inside it
    const auto again = read_squeezelite_alsa(*set, k_default);
    if (!again || !again->value || again->value->rfind("123:7", 0) != 0)
        __builtin_trap();
    const auto twice = set_squeezelite_alsa(*set, k_default, 123, 7);
    if (!twice || *twice != *set)
        __builtin_trap();
    if (!read->value) {
        // One insertion: the input is a prefix and a suffix of the output around it.
        if (set->size() <= text.size())
            __builtin_trap();
        std::size_t prefix = 0;
        while (prefix < text.size() && text[prefix] == (*set)[prefix])
            ++prefix;
        const std::size_t inserted = set->size() - text.size();
        if (set->compare(prefix + inserted, std::string::npos, text, prefix) != 0)
            __builtin_trap();
        return;
    }
    // The old buffer and periods as plain numbers: setting them back restores the input.
    const std::string& old = *read->value;
    const std::size_t first = old.find(':');
    const std::size_t second = first == std::string::npos ? first : old.find(':', first + 1);
    const std::string buffer = old.substr(0, first);
    const std::string periods =
        first == std::string::npos ? "" : old.substr(first + 1, second - first - 1);
    const auto number = [](const std::string& s) {
        unsigned v = 0;
        if (s.empty() || s.size() > 3 || (s.size() > 1 && s[0] == '0'))
            return 0u;
        for (char c : s) {
            if (c < '0' || c > '9')
                return 0u;
            v = v * 10 + static_cast<unsigned>(c - '0');
        }
        return v;
    };
    const unsigned b = number(buffer);
    const unsigned p = number(periods);
    if (b > 0 && b < 500 && p > 0 && p < 50 && first != std::string::npos) {
        const auto back = set_squeezelite_alsa(*set, k_default, b, p);
        if (!back || *back != text)
            __builtin_trap();
    }
}

void pipewire(const std::string& text) {
    const std::map<std::string, std::string> files = {
        {"/etc/pipewire/pipewire.conf.d/10-user.conf", text},
        {"/etc/pipewire/pipewire.conf.d/90-rtprov.conf", pipewire_dropin("# rtprov", 256)}};
    const ReadFile read = [&](const std::string& path) {
        const auto it = files.find(path);
        if (it == files.end())
            return core::Result<std::string>::failed("no " + path, true);
        return core::Result<std::string>{it->second, "", false};
    };
    const auto alone = read_pipewire_clock({"/etc/pipewire/pipewire.conf.d/10-user.conf"}, read);
    // The tree of a file that reads is well formed: one value a key.
    if (const auto json = read_spa_json(text, "x");
        json && json->keys.size() != json->values.size())
        __builtin_trap();
    const auto both = read_pipewire_clock({"/etc/pipewire/pipewire.conf.d/10-user.conf",
                                           "/etc/pipewire/pipewire.conf.d/90-rtprov.conf"},
                                          read);
    if (static_cast<bool>(both) != static_cast<bool>(alone))
        __builtin_trap();
    if (both && (both->quantum != 256u || both->min_quantum != 256u ||
                 both->where != "/etc/pipewire/pipewire.conf.d/90-rtprov.conf:3"))
        __builtin_trap();
    if (alone && alone->quantum && alone->where.rfind("/etc/pipewire/", 0) != 0)
        __builtin_trap();
}

void jack_unit(const std::string& unit) {
    const auto command = read_jack_command(unit, "/etc/systemd/system/jackd.service");
    if (!command)
        return;
    if (command->argv.empty())
        __builtin_trap();
    const std::string dropin = jack_dropin("# rtprov", *command, 128, 3);
    const auto again = read_jack_command(dropin, "/etc/systemd/system/jackd.service.d/r.conf");
    if (!again || again->prefix != command->prefix || again->rate != command->rate ||
        again->period != 128u || again->nperiods != 3u || again->argv.size() < command->argv.size())
        __builtin_trap();
    if (jack_dropin("# rtprov", *again, 128, 3) != dropin)
        __builtin_trap();
}

void exec_line(const std::string& value) {
    const auto words = split_exec_line(value, "u", 1);
    if (!words)
        return;
    std::string line;
    for (const std::string& word : *words)
        line += (line.empty() ? "" : " ") + exec_line_word(word);
    const auto back = split_exec_line(line, "u", 1);
    if (!back || *back != *words)
        __builtin_trap();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    squeezelite(text);
    pipewire(text);
    jack_unit(text);
    jack_unit("[Service]\nExecStart=" + text.substr(0, text.find('\n')) + "\n");
    exec_line(text.substr(0, text.find('\n')));
    return 0;
}
