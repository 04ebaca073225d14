// SPDX-License-Identifier: Apache-2.0
#include "provisioner/player/stack_conf.hpp"
#include "provisioner/player/refusal.hpp"

#include "provisioner/core/text.hpp"
#include "provisioner/player/shell_assignments.hpp"
#include "provisioner/player/spa_json.hpp"
#include "provisioner/player/unit_syntax.hpp"

#include <algorithm>
#include <array>
#include <stdexcept>
#include <string_view>
#include <utility>

namespace rtprov::player {

namespace {

// A header line (or lines) of rtprov's own files, ending in a newline.
std::string header_lines(const std::string& header) {
    if (header.empty() || header.back() == '\n')
        return header;
    return header + "\n";
}

bool is_digits(std::string_view text) {
    return !text.empty() &&
           std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// =========================================================================================
// squeezelite: /etc/default/squeezelite, a shell file that /etc/init.d/squeezelite sources
// (Debian 12's 1.9.9 and Debian 13's 2.0.0 ship the same file and init script, and no
// systemd unit: systemd runs the init script through systemd-sysv-generator). The init
// script adds "-n $SL_NAME -o $SL_SOUNDCARD -s $SB_SERVER_IP" and then $SB_EXTRA_ARGS,
// unquoted, to squeezelite's command line: the value is split at blanks and expanded as a
// file name pattern, and quotes inside it are plain characters.

// The variable Debian's init script passes to squeezelite for any other option (both
// releases; not SL_OPTS, which no Debian script reads).
constexpr std::string_view k_squeezelite_variable = "SB_EXTRA_ARGS";

// A word of SB_EXTRA_ARGS once the init script has split it: its characters' positions
// in the value.
struct ValueWord {
    std::size_t first; // index into the value
    std::size_t last;  // one past
};

// What squeezelite's own option loop (main.c: an option word whose name, without the
// '-', is found inside a list of letters; then one of the options with an optional
// argument takes the next word unless it starts with '-') makes of the words.
struct SqueezeliteWalk {
    std::optional<std::size_t> alsa_value; // the word index of the last -a's value
};

// squeezelite 1.9.9 (Debian 12) and 2.0.0 (Debian 13), main.c: the options that take a
// value ("oabcCdefmMnNpPrsZ" and, with ALSA, "UVO"), the ones without ("ltz?W", "LX",
// "uR", "D", "v", "i", "G", "S", each behind a build option), and of those the ones that
// take the next word when it does not start with '-' (-u, -R, -D, -i, -G, -S).
constexpr std::string_view k_squeezelite_with_value = "oabcCdefmMnNpPrsZUVO";
constexpr std::string_view k_squeezelite_without_value = "ltz?WLXuRDviGS";
constexpr std::string_view k_squeezelite_optional_value = "uRDiGS";

SqueezeliteWalk walk_squeezelite(const std::vector<std::string>& words, const std::string& path,
                                 unsigned line) {
    SqueezeliteWalk walk;
    const std::string in = " in '" + std::string(k_squeezelite_variable) + "'";
    std::size_t i = 0;
    while (i < words.size()) {
        const std::string& word = words[i];
        if (word.size() < 2 || word[0] != '-')
            refuse(path, line,
                   "squeezelite would stop at " + quote(word) + in +
                       " (neither an option nor an option's value) and not start ('command "
                       "line argument error'); correct it");
        const std::string_view name = std::string_view(word).substr(1);
        if (k_squeezelite_with_value.find(name) != std::string_view::npos && i + 1 < words.size()) {
            if (name[0] == 'a')
                walk.alsa_value = i + 1;
            i += 2;
            continue;
        }
        if (k_squeezelite_without_value.find(name) == std::string_view::npos) {
            if (name[0] == 'a' && name.size() == 1)
                refuse(path, line,
                       "'-a'" + in +
                           " has no value; squeezelite would not start ('Option "
                           "error'): give it one, as '-a 40:4'");
            std::string what = "squeezelite does not know the option " + quote(word) + in +
                               " and would not start ('Option error')";
            if (name[0] == 'a')
                what += ": write '-a' and its value as two words, as '-a " +
                        std::string(name.substr(1)) + "'";
            refuse(path, line, what);
        }
        ++i;
        if (k_squeezelite_optional_value.find(name[0]) != std::string_view::npos &&
            i < words.size() && words[i][0] != '-')
            ++i;
    }
    return walk;
}

// The options variable as squeezelite gets it.
struct SqueezeliteOptions {
    std::optional<ShellAssignment> assignment;
    std::vector<ValueWord> words;
    std::optional<std::size_t> alsa_value; // into 'words'
    ShellFile file;
};

SqueezeliteOptions scan_squeezelite(const std::string& text, const std::string& path) {
    core::Result<ShellFile> file =
        read_shell_assignments(text, path, std::string(k_squeezelite_variable));
    if (!file)
        throw Refusal(file.problem);
    SqueezeliteOptions options;
    options.file = std::move(*file.value);
    for (ShellAssignment& a : options.file.assignments) {
        if (a.name != k_squeezelite_variable)
            continue;
        if (options.assignment)
            refuse(path, a.line,
                   "'" + a.name + "' is assigned twice (also on line " +
                       std::to_string(options.assignment->line) +
                       "); rtprov cannot tell which one to change: keep one");
        options.assignment = std::move(a);
    }
    if (!options.assignment)
        return options;
    const ShellAssignment& a = *options.assignment;
    const std::string var = "'" + a.name + "'";
    if (a.substitution)
        refuse(path, a.line,
               var + " holds a command substitution ('$(...)' or backticks); rtprov cannot "
                     "know what it gives: write the options out");
    if (a.expansion)
        refuse(path, a.line,
               var + " holds a variable ('$NAME'); rtprov cannot know its value: write the "
                     "options out");
    std::vector<std::string> words;
    for (std::size_t k = 0; k < a.value.size(); ++k) {
        const char c = a.value[k].c;
        if (c == '*' || c == '?' || c == '[')
            refuse(path, a.line,
                   var + " holds '*', '?' or '[', which /etc/init.d/squeezelite expands as a "
                         "file name pattern; write the options without them");
        if (c == ' ' || c == '\t' || c == '\n')
            continue;
        if (k == 0 || std::string_view(" \t\n").find(a.value[k - 1].c) != std::string_view::npos) {
            options.words.push_back({k, k});
            words.emplace_back();
        }
        options.words.back().last = k + 1;
        words.back() += c;
    }
    options.alsa_value = walk_squeezelite(words, path, a.line).alsa_value;
    return options;
}

std::string value_text(const ShellAssignment& a, const ValueWord& w) {
    std::string text;
    for (std::size_t k = w.first; k < w.last; ++k)
        text += a.value[k].c;
    return text;
}

template <typename T> core::Result<T> refusal_to_result(const Refusal& refusal) {
    return core::Result<T>::failed(refusal.what());
}

// A member's value as PipeWire's settings read it (atoi of the text): a whole number,
// 'null' (the key removed), or refused.
struct ClockValue {
    std::optional<unsigned> number; // nullopt: null
};

ClockValue clock_value(const JsonNode& node, const std::string& key, const std::string& path) {
    if (node.kind == JsonNode::Kind::bare && node.text == "null")
        return {};
    if (node.kind == JsonNode::Kind::object || node.kind == JsonNode::Kind::array)
        refuse(path, node.line, quote(key) + " is an object or array, not a number");
    const std::optional<unsigned> number = core::whole_number<unsigned>(node.text);
    if (!number || *number > 0x7fffffffU)
        refuse(path, node.line,
               quote(key) + " is " + quote(node.text) +
                   ", not a whole number PipeWire reads with certainty (it reads it with "
                   "atoi()); write a number");
    return {number};
}

// A PipeWire version from its package's pipewire.conf, whose first line says it:
// '# Daemon config file for PipeWire version "1.4.2" #'.
std::optional<std::array<unsigned, 3>> pipewire_version(const std::string& conf) {
    const std::string_view first = std::string_view(conf).substr(0, conf.find('\n'));
    const std::string_view marker = "PipeWire version \"";
    const std::size_t at = first.find(marker);
    if (at == std::string_view::npos)
        return std::nullopt;
    const std::string_view rest = first.substr(at + marker.size());
    const std::vector<std::string> parts = core::split(rest.substr(0, rest.find('"')), '.');
    if (parts.size() != 3)
        return std::nullopt;
    std::array<unsigned, 3> version{};
    for (std::size_t k = 0; k < 3; ++k) {
        const std::optional<unsigned> n = core::whole_number<unsigned>(parts[k]);
        if (!n)
            return std::nullopt;
        version[k] = *n;
    }
    return version;
}

bool file_exists(const ReadFile& read, const std::string& path) {
    const core::Result<std::string> content = read(path);
    return content || !content.absent;
}

} // namespace

core::Result<SqueezeliteAlsa> read_squeezelite_alsa(const std::string& text,
                                                    const std::string& path) {
    try {
        const SqueezeliteOptions options = scan_squeezelite(text, path);
        SqueezeliteAlsa alsa;
        alsa.variable = std::string(k_squeezelite_variable);
        if (options.assignment) {
            alsa.line = options.assignment->line;
            if (options.alsa_value)
                alsa.value = value_text(*options.assignment, options.words[*options.alsa_value]);
        }
        return core::Result<SqueezeliteAlsa>{alsa, "", false};
    } catch (const Refusal& refusal) {
        return refusal_to_result<SqueezeliteAlsa>(refusal);
    }
}

core::Result<std::string> set_squeezelite_alsa(const std::string& text, const std::string& path,
                                               unsigned buffer_ms, unsigned periods) {
    // squeezelite's output_alsa.c: a buffer below 500 is a time in ms, above a size; a
    // period count below 50 is a count, above a size.
    if (buffer_ms == 0 || buffer_ms >= 500)
        return core::Result<std::string>::failed(
            "squeezelite's -a buffer must be 1 to 499 ms (500 and more are read as a size), "
            "not " +
            std::to_string(buffer_ms));
    if (periods == 0 || periods >= 50)
        return core::Result<std::string>::failed(
            "squeezelite's -a period count must be 1 to 49 (50 and more are read as a size), "
            "not " +
            std::to_string(periods));
    const std::string setting = std::to_string(buffer_ms) + ":" + std::to_string(periods);
    try {
        const SqueezeliteOptions options = scan_squeezelite(text, path);
        std::string out = text;
        if (options.assignment && options.alsa_value) {
            // Replace the first two fields (buffer and periods), keep ':format:mmap'.
            const ShellAssignment& a = *options.assignment;
            const ValueWord& w = options.words[*options.alsa_value];
            std::size_t end = w.first;
            int colons = 0;
            while (end < w.last && !(a.value[end].c == ':' && ++colons == 2))
                ++end;
            for (std::size_t k = w.first + 1; k < end; ++k)
                if (a.value[k].offset != a.value[k - 1].offset + 1)
                    refuse(path, a.line,
                           "the -a value " + quote(value_text(a, w)) +
                               " is written with quotes or backslashes inside it; rtprov "
                               "edits it only as plain text: write it plainly");
            const std::size_t from = a.value[w.first].offset;
            out.replace(from, a.value[end - 1].offset + 1 - from, setting);
        } else if (options.assignment) {
            // Add ' -a B:P' at the end of the value, inside its closing quote.
            const ShellAssignment& a = *options.assignment;
            const bool empty = a.value.empty();
            if (a.closing_quote != 0)
                out.insert(a.end - 1, (empty ? "-a " : " -a ") + setting);
            else
                out.insert(a.end, (empty ? "\"-a " : "\" -a ") + setting + "\"");
        } else {
            // A new assignment: after the last commented-out one (Debian's
            // '#SB_EXTRA_ARGS=""' stays as it is), a comment alone on its line, else at the
            // end (after an empty line when the file ends in a line continuation).
            const std::string line =
                std::string(k_squeezelite_variable) + "=\"-a " + setting + "\"\n";
            const std::string commented = std::string(k_squeezelite_variable) + "=";
            std::size_t at = text.size();
            for (const std::size_t comment : options.file.comments) {
                const std::size_t start = text.rfind('\n', comment) + 1; // npos + 1 is 0
                const std::size_t stop = text.find('\n', comment);
                const std::string_view before(text.data() + start, comment - start);
                const std::string_view body = core::trim(std::string_view(text).substr(
                    comment + 1, (stop == std::string::npos ? text.size() : stop) - comment - 1));
                if (core::trim(before).empty() && body.substr(0, commented.size()) == commented)
                    at = stop == std::string::npos ? text.size() : stop + 1;
            }
            if (at < text.size()) {
                out.insert(at, line);
            } else {
                if (!out.empty() && out.back() != '\n')
                    out += '\n';
                if (options.file.continued_at_end)
                    out += '\n';
                out += line;
            }
        }
        return core::Result<std::string>{out, "", false};
    } catch (const Refusal& refusal) {
        return refusal_to_result<std::string>(refusal);
    }
}

// ---- PipeWire

namespace {

constexpr const char* k_pipewire_etc = "/etc/pipewire/pipewire.conf";
constexpr const char* k_pipewire_share = "/usr/share/pipewire/pipewire.conf";

} // namespace

core::Result<std::vector<std::string>> pipewire_conf_files(const ReadFile& read,
                                                           const ListDir& list) {
    using Files = core::Result<std::vector<std::string>>;
    // The main file: the first there of /etc's and /usr/share's (src/pipewire/conf.c,
    // get_config_path; ~/.config/pipewire comes before both, for the user who runs it).
    std::vector<std::string> files;
    if (file_exists(read, k_pipewire_etc))
        files.emplace_back(k_pipewire_etc);
    else if (file_exists(read, k_pipewire_share))
        files.emplace_back(k_pipewire_share);
    else
        return Files::failed(std::string("PipeWire is not installed: neither '") + k_pipewire_etc +
                                 "' nor '" + k_pipewire_share + "' is there",
                             true);

    // The drop-ins: every *.conf of each pipewire.conf.d, each folder sorted by name,
    // applied in the order loaded (the later wins a key). Which folder comes first, and
    // which of two files of the same name is skipped, changed between versions (conf.c,
    // pw_conf_load_conf and check_override):
    //   before 1.0.4 (and 1.1.0 to 1.1.80; Debian 12's 0.3.65): ~/.config, /etc, then
    //     /usr/share, a name already loaded skipped: /usr/share's drop-ins win over /etc's,
    //     and an /etc file hides a /usr/share one of its name;
    //   1.0.4 to 1.5.80 (commit 764ae650e, backported as ffd9a8b89; Debian 13's 1.4.2):
    //     /usr/share, /etc, then ~/.config, a name already loaded still skipped: /etc wins,
    //     but a /usr/share file hides an /etc one of its name (PipeWire issue 4816);
    //   1.5.81 and later (commit 88d7d5706): the same order, no file skipped.
    const core::Result<std::string> packaged = read(k_pipewire_share);
    std::optional<std::array<unsigned, 3>> version;
    if (packaged)
        version = pipewire_version(*packaged);
    if (!version) {
        const core::Result<std::string> main = read(files.front());
        if (main)
            version = pipewire_version(*main);
    }
    if (!version)
        return Files::failed(std::string("cannot tell PipeWire's version: neither '") +
                             k_pipewire_share + "' nor '" + files.front() +
                             "' begins with its 'PipeWire version \"X.Y.Z\"' line, and the "
                             "order of its drop-ins depends on it");
    const std::array<unsigned, 3>& v = *version;
    using Version = std::array<unsigned, 3>;
    const bool old_order = v < Version{1, 0, 4} || (v >= Version{1, 1, 0} && v < Version{1, 1, 81});
    const bool skips_same_name = v < Version{1, 5, 81};
    const std::vector<std::string> dirs =
        old_order ? std::vector<std::string>{"/etc/pipewire/pipewire.conf.d",
                                             "/usr/share/pipewire/pipewire.conf.d"}
                  : std::vector<std::string>{"/usr/share/pipewire/pipewire.conf.d",
                                             "/etc/pipewire/pipewire.conf.d"};
    std::vector<std::string> loaded;
    for (const std::string& dir : dirs) {
        for (const std::string& name : list(dir)) {
            // conf.c's conf_filter: the name ends in ".conf".
            if (name.size() < 5 || name.compare(name.size() - 5, 5, ".conf") != 0)
                continue;
            if (skips_same_name && std::find(loaded.begin(), loaded.end(), name) != loaded.end())
                continue;
            loaded.push_back(name);
            files.push_back(dir + "/" + name);
        }
    }
    return Files{files, "", false};
}

core::Result<PipewireClock> read_pipewire_clock(const std::vector<std::string>& files,
                                                const ReadFile& read) {
    PipewireClock clock;
    unsigned quantum_line = 0;
    std::string quantum_file;
    try {
        for (const std::string& file : files) {
            const core::Result<std::string> content = read(file);
            if (!content) {
                if (content.absent)
                    continue; // as PipeWire: a file that went away is not read
                return core::Result<PipewireClock>::failed(content.problem);
            }
            const core::Result<JsonNode> parsed = read_spa_json(*content, file);
            if (!parsed)
                return core::Result<PipewireClock>::failed(parsed.problem);
            const JsonNode& root = *parsed;
            // Within a file a section named twice is replaced by the later one
            // (pw_properties_update_string); across files, sections merge key by key.
            const JsonNode* properties = nullptr;
            for (std::size_t k = 0; k < root.keys.size(); ++k)
                if (root.keys[k] == "context.properties")
                    properties = &root.values[k];
            if (properties == nullptr)
                continue;
            if (properties->kind != JsonNode::Kind::object)
                refuse(file, properties->line, "'context.properties' is not an object ('{ }')");
            for (std::size_t k = 0; k < properties->keys.size(); ++k) {
                const std::string& key = properties->keys[k];
                if (key != "default.clock.quantum" && key != "default.clock.min-quantum" &&
                    key != "default.clock.max-quantum")
                    continue;
                const ClockValue value = clock_value(properties->values[k], key, file);
                clock.set_at[key] = file + ":" + std::to_string(properties->values[k].line);
                if (key == "default.clock.quantum") {
                    clock.quantum = value.number;
                    quantum_file = file;
                    quantum_line = properties->values[k].line;
                } else if (key == "default.clock.min-quantum") {
                    clock.min_quantum = value.number;
                } else {
                    clock.max_quantum = value.number;
                }
            }
        }
    } catch (const Refusal& refusal) {
        return refusal_to_result<PipewireClock>(refusal);
    }
    if (clock.quantum)
        clock.where = quantum_file + ":" + std::to_string(quantum_line);
    return core::Result<PipewireClock>{clock, "", false};
}

std::string pipewire_dropin(const std::string& header, unsigned quantum) {
    const std::string q = std::to_string(quantum);
    // In a virtual machine PipeWire raises min-quantum to 1024 itself, which would hold
    // the quantum there too (it is clamped to min-quantum): 0.3 (Debian 12) through
    // 'vm.overrides' in pipewire.conf's context.properties, which 'null' here removes
    // (pw_properties_update_string; 1.x has none and warns only when one is there), 1.x
    // (Debian 13) through context.properties.rules, whose rules apply in order after
    // context.properties: the one here comes after pipewire.conf's.
    return header_lines(header) +
           "context.properties = {\n"
           "    default.clock.quantum     = " +
           q +
           "\n"
           "    default.clock.min-quantum = " +
           q +
           "\n"
           "    vm.overrides = null\n"
           "}\n"
           "context.properties.rules = [\n"
           "    {   matches = [ { cpu.vm.name = !null } ]\n"
           "        actions = {\n"
           "            update-props = {\n"
           "                default.clock.min-quantum = " +
           q +
           "\n"
           "            }\n"
           "        }\n"
           "    }\n"
           "]\n";
}

// ---- WirePlumber

WirePlumberFormat wireplumber_format(const ReadFile& read, const ListDir& list) {
    // 0.4 (Debian 12's 0.4.13) configures itself in Lua, main.lua.d/ and the like beside
    // a wireplumber.conf that loads them; 0.5 dropped Lua configuration for SPA-JSON
    // (wireplumber.conf with its profiles, wireplumber.conf.d/).
    if (!list("/usr/share/wireplumber/main.lua.d").empty())
        return WirePlumberFormat::lua;
    if (file_exists(read, "/usr/share/wireplumber/wireplumber.conf"))
        return WirePlumberFormat::json;
    return WirePlumberFormat::none;
}

std::string wireplumber_dropin(const std::string& header, unsigned period_frames,
                               unsigned headroom_frames) {
    // WirePlumber 0.5's monitor.alsa.rules (docs/rst/daemon/configuration/alsa.rst): each
    // rule that matches a node updates its properties, in the order the fragments load
    // (/usr/share/wireplumber/wireplumber.conf.d first, then /etc's, each by name): this
    // one comes after Debian 13's alsa-vm.conf, which sets 1024 and 2048 in a VM.
    return header_lines(header) +
           "monitor.alsa.rules = [\n"
           "  {\n"
           "    matches = [\n"
           "      {\n"
           "        node.name = \"~alsa_output.*\"\n"
           "      }\n"
           "    ]\n"
           "    actions = {\n"
           "      update-props = {\n"
           "        api.alsa.period-size = " +
           std::to_string(period_frames) +
           "\n"
           "        api.alsa.headroom    = " +
           std::to_string(headroom_frames) +
           "\n"
           "      }\n"
           "    }\n"
           "  }\n"
           "]\n";
}

// ---- JACK

namespace {

// jackd's ALSA driver options (linux/alsa/JackAlsaDriver.cpp, driver_get_descriptor): each
// has an optional value, jack_parse_driver_params takes as getopt_long's "c::" (joined:
// -p256, --period=256) or, when there is none, the next word unless it starts with '-'.
struct DriverOption {
    char letter;
    const char* name;
};
constexpr std::array<DriverOption, 18> k_alsa_options{{
    {'d', "device"},
    {'C', "capture"},
    {'P', "playback"},
    {'r', "rate"},
    {'p', "period"},
    {'n', "nperiods"},
    {'H', "hwmon"},
    {'M', "hwmeter"},
    {'D', "duplex"},
    {'s', "softmode"},
    {'m', "monitor"},
    {'z', "dither"},
    {'i', "inchannels"},
    {'o', "outchannels"},
    {'S', "shorts"},
    {'I', "input-latency"},
    {'O', "output-latency"},
    {'X', "midi-driver"},
}};

// Where a -p, -n or -r of the driver is, and how its value is written.
struct DriverValue {
    char letter;
    std::size_t word;                      // the option's word
    std::optional<std::size_t> value_word; // its value's word when separate
    bool joined = false;                   // the value is in the option's word
    bool is_long = false;
    std::optional<std::string> value; // nullopt: none given (the driver's default)
};

struct JackArgs {
    std::size_t driver_args = 0; // the first word after '-d alsa'
    std::vector<DriverValue> values;
};

// jackd's server options up to -d (common/Jackdmp.cpp: getopt_long with
// "-d:X:I:P:uvshrRL:STFl:t:mn:p:C:a:c:", which stops at the driver), then the ALSA driver's.
JackArgs parse_jack_args(const std::vector<std::string>& argv, std::size_t first,
                         const std::string& path, unsigned line) {
    struct ServerLong {
        const char* name;
        char letter;
        bool value;
    };
    static constexpr std::array<ServerLong, 20> server_long{{
        {"clock-source", 'c', true},
        {"internal-session-file", 'C', true},
        {"loopback-driver", 'L', true},
        {"audio-driver", 'd', true},
        {"midi-driver", 'X', true},
        {"internal-client", 'I', true},
        {"verbose", 'v', false},
        {"port-max", 'p', true},
        {"no-mlock", 'm', false},
        {"name", 'n', true},
        {"unlock", 'u', false},
        {"realtime", 'R', false},
        {"no-realtime", 'r', false},
        {"replace-registry", '\0', false},
        {"realtime-priority", 'P', true},
        {"timeout", 't', true},
        {"temporary", 'T', false},
        {"silent", 's', false},
        {"sync", 'S', false},
        {"autoconnect", 'a', true},
    }};
    constexpr std::string_view server_value = "dXIPLtnpCac";
    constexpr std::string_view server_flag = "uvsrRSTm";
    auto fail = [&](const std::string& what) { refuse(path, line, what); };

    std::optional<std::string> driver;
    std::size_t i = first;
    while (!driver) {
        if (i >= argv.size())
            fail("jackd has no driver here ('-d alsa'); rtprov sets the period of jackd's "
                 "ALSA driver only");
        const std::string& word = argv[i];
        if (word == "--" || word.size() < 2 || word[0] != '-')
            fail("jackd would not start with " + quote(word) +
                 " before its driver (it prints its usage)");
        if (word[1] == '-') {
            const std::string name = word.substr(2, word.find('=') - 2);
            const bool has_equals = word.find('=') != std::string::npos;
            const auto* option = std::find_if(server_long.begin(), server_long.end(),
                                              [&](const ServerLong& o) { return name == o.name; });
            if (option == server_long.end())
                fail(quote(word) + " is not one of jackd's options as written (rtprov reads " +
                     "whole option names, not abbreviations)");
            if (!option->value && has_equals)
                fail(quote(word) + ": jackd's '--" + name + "' takes no value");
            ++i;
            if (!option->value)
                continue;
            std::string value;
            if (has_equals) {
                value = word.substr(word.find('=') + 1);
            } else {
                if (i >= argv.size())
                    fail(quote(word) + " has no value");
                value = argv[i++];
            }
            if (option->letter == 'd')
                driver = value;
            continue;
        }
        ++i;
        for (std::size_t k = 1; k < word.size(); ++k) {
            const char letter = word[k];
            if (server_flag.find(letter) != std::string_view::npos)
                continue;
            if (server_value.find(letter) == std::string_view::npos)
                fail(quote(word) + ": jackd does not run with '-" + std::string(1, letter) +
                     "' (it prints its usage)");
            std::string value;
            if (k + 1 < word.size()) {
                value = word.substr(k + 1);
            } else {
                if (i >= argv.size())
                    fail(quote(word) + " has no value");
                value = argv[i++];
            }
            if (letter == 'd')
                driver = value;
            break;
        }
    }
    if (*driver != "alsa")
        fail("jackd's driver is " + quote(*driver) +
             ", not alsa; rtprov sets the period of jackd's ALSA driver only");

    JackArgs args;
    args.driver_args = i;
    while (i < argv.size()) {
        const std::string& word = argv[i];
        if (word == "--" || word.size() < 2 || word[0] != '-')
            fail(quote(word) + " after '-d alsa' is not an option of jackd's ALSA driver " +
                 "(jackd would ignore it)");
        DriverValue found{'\0', i, std::nullopt, false, word[1] == '-', std::nullopt};
        std::optional<std::string> joined;
        if (found.is_long) {
            const std::size_t equals = word.find('=');
            const std::string name = word.substr(2, equals - 2);
            const auto* option =
                std::find_if(k_alsa_options.begin(), k_alsa_options.end(),
                             [&](const DriverOption& o) { return name == o.name; });
            if (option == k_alsa_options.end())
                fail(quote(word) + " is not an option of jackd's ALSA driver as written " +
                     "(rtprov reads whole option names, not abbreviations)");
            found.letter = option->letter;
            if (equals != std::string::npos)
                joined = word.substr(equals + 1);
        } else {
            const auto* option =
                std::find_if(k_alsa_options.begin(), k_alsa_options.end(),
                             [&](const DriverOption& o) { return o.letter == word[1]; });
            if (option == k_alsa_options.end())
                fail(quote(word) + " is not an option of jackd's ALSA driver (jackd would " +
                     "print the driver's options and stop)");
            found.letter = word[1];
            if (word.size() > 2)
                joined = word.substr(2);
        }
        ++i;
        if (joined) {
            found.joined = true;
            found.value = joined;
        } else if (i < argv.size() && !argv[i].empty() && argv[i][0] != '-') {
            found.value_word = i;
            found.value = argv[i++];
        }
        if (found.letter == 'p' || found.letter == 'n' || found.letter == 'r') {
            if (found.value && !is_digits(*found.value))
                fail(quote(word) + " with the value " + quote(*found.value) +
                     ": not a whole number jackd reads with certainty");
            args.values.push_back(found);
        }
    }
    return args;
}

std::size_t first_option(const JackCommand& command) {
    return command.prefix.find('@') != std::string::npos ? 2 : 1;
}

} // namespace

core::Result<JackCommand> read_jack_command(const std::string& text, const std::string& path) {
    try {
        std::string section;
        std::vector<UnitLine> exec;
        for (const UnitLine& l : unit_file_lines(text)) {
            const std::string_view content = core::trim(l.text);
            if (content.empty() || content[0] == '#' || content[0] == ';')
                continue;
            if (content[0] == '[') {
                if (content.back() != ']')
                    refuse(path, l.line, "a section header without its ']'");
                section = std::string(content.substr(1, content.size() - 2));
                continue;
            }
            const std::size_t equals = content.find('=');
            if (equals == std::string_view::npos || section != "Service" ||
                core::trim(content.substr(0, equals)) != "ExecStart")
                continue;
            const std::string_view value = core::trim(content.substr(equals + 1));
            if (value.empty())
                exec.clear(); // an empty ExecStart= resets the list
            else
                exec.push_back({l.line, std::string(value)});
        }
        if (exec.empty())
            return core::Result<JackCommand>::failed(path + ": no 'ExecStart=' in [Service]");
        if (exec.size() > 1)
            refuse(path, exec[1].line,
                   "a second 'ExecStart=' (the first on line " + std::to_string(exec[0].line) +
                       "); rtprov changes a service that runs one command, jackd");

        JackCommand command;
        command.unit_path = path;
        command.line = exec[0].line;
        core::Result<std::vector<std::string>> argv =
            split_exec_line(exec[0].text, path, command.line);
        if (!argv)
            return core::Result<JackCommand>::failed(argv.problem);
        command.argv = std::move(*argv.value);
        if (command.argv.empty())
            refuse(path, command.line, "'ExecStart=' runs nothing");
        std::string& program = command.argv.front();
        const std::size_t start = program.find_first_not_of("@-:+!");
        command.prefix = program.substr(0, std::min(start, program.size()));
        program.erase(0, command.prefix.size());
        const std::size_t slash = program.rfind('/');
        const std::string name = slash == std::string::npos ? program : program.substr(slash + 1);
        if (name != "jackd")
            refuse(path, command.line,
                   "the service runs " + quote(program) + ", not jackd, in 'ExecStart='");
        if (first_option(command) > command.argv.size())
            refuse(path, command.line, "'@' without the name jackd runs as in 'ExecStart='");
        const JackArgs args =
            parse_jack_args(command.argv, first_option(command), path, command.line);
        for (const DriverValue& v : args.values) {
            // The last one given counts (each is applied in turn); one without a value is
            // the driver's default.
            const unsigned fallback = v.letter == 'p' ? 1024 : v.letter == 'n' ? 2 : 48000;
            const unsigned value =
                v.value ? core::whole_number<unsigned>(*v.value).value_or(0) : fallback;
            (v.letter == 'p'   ? command.period
             : v.letter == 'n' ? command.nperiods
                               : command.rate) = value;
        }
        return core::Result<JackCommand>{command, "", false};
    } catch (const Refusal& refusal) {
        return refusal_to_result<JackCommand>(refusal);
    }
}

std::string jack_dropin(const std::string& header, const JackCommand& command, unsigned period,
                        unsigned nperiods) {
    std::vector<std::string> argv = command.argv;
    const JackArgs args =
        parse_jack_args(argv, first_option(command), command.unit_path, command.line);
    bool has_period = false;
    bool has_nperiods = false;
    // From the last word back, so that an inserted word moves none still to edit.
    for (auto v = args.values.rbegin(); v != args.values.rend(); ++v) {
        if (v->letter == 'r')
            continue;
        const std::string value = std::to_string(v->letter == 'p' ? period : nperiods);
        (v->letter == 'p' ? has_period : has_nperiods) = true;
        if (v->joined) {
            const std::string& word = argv[v->word];
            argv[v->word] =
                v->is_long ? word.substr(0, word.find('=') + 1) + value : word.substr(0, 2) + value;
        } else if (v->value_word) {
            argv[*v->value_word] = value;
        } else {
            argv.insert(argv.begin() + static_cast<std::ptrdiff_t>(v->word) + 1, value);
        }
    }
    std::vector<std::string> added;
    if (!has_period)
        added.insert(added.end(), {"-p", std::to_string(period)});
    if (!has_nperiods)
        added.insert(added.end(), {"-n", std::to_string(nperiods)});
    argv.insert(argv.begin() + static_cast<std::ptrdiff_t>(args.driver_args), added.begin(),
                added.end());

    std::string line = exec_line_word(command.prefix + argv.front());
    for (std::size_t k = 1; k < argv.size(); ++k)
        line += " " + exec_line_word(argv[k]);
    return header_lines(header) + "[Service]\nExecStart=\nExecStart=" + line + "\n";
}

} // namespace rtprov::player
