// SPDX-License-Identifier: Apache-2.0
#include "provisioner/player/mpd_conf.hpp"

#include "provisioner/core/text.hpp"

#include <algorithm>
#include <cstddef>
#include <set>
#include <string_view>
#include <unordered_map>
#include <utility>

// The grammar is MPD's own, read from its sources (src/config/File.cxx, src/util/Tokenizer.cxx,
// src/util/CharUtil.hxx, src/io/BufferedReader.cxx; the same in 0.23 and 0.24):
// - a line ends at '\n' (one '\r' before it dropped); a blank is any byte 0x01..0x20;
// - a name is an ASCII letter, then letters, digits and '_', ended by a blank;
// - a value is always in double quotes ('\' takes the next byte as it is) and a blank or the
//   line's end follows the closing quote; after the value only a '#' comment;
// - 'NAME {' opens a block, a line '}' closes it; blocks do not nest; a setting twice in a
//   block is refused;
// - 'include'/'include_optional' (top level only) name a file relative to the directory of
//   the including one; a '*' or '?' in its last component makes it a wildcard.
// Bytes that are not UTF-8 are MPD's to read as it does: bytes, kept as they are.
namespace rtprov::player {
namespace {

// Bounds. MPD stops reading a file, silently, at a line longer than its 512 KiB line
// buffer (BufferedReader::MAX_SIZE); rtprov refuses lines far below that, so the buffer's
// exact state never matters (a real line is a setting, under 5 KiB even with a PATH_MAX path).
constexpr std::size_t k_max_line = 64 * 1024;
// MPD follows includes with no limit and no loop check ("TODO: detect recursion"). rtprov
// follows a chain of 16 files (real ones nest one or two deep) and 256 includes in all, so
// a file included many times over cannot make the reading exponential.
constexpr std::size_t k_max_depth = 16;
constexpr std::size_t k_max_includes = 256;
// Memory stays bounded on hostile input: what the reader keeps grows only with these.
// MPD's largest plugin has a few dozen settings; a box has a handful of outputs.
constexpr std::size_t k_max_block_settings = 1024;
constexpr std::size_t k_max_outputs = 256;

// The blocks MPD knows (config_block_templates of src/config/Templates.cxx, 0.23 and 0.24):
// any MPD refuses one of these names without '{'.
constexpr std::string_view k_block_names[] = {
    "audio_output", "decoder", "input",    "input_cache", "archive_plugin", "playlist_plugin",
    "resampler",    "filter",  "database", "neighbors",   "partition"};

struct Refused {
    std::string problem;
};

[[noreturn]] void refuse(const std::string& path, unsigned line, const std::string& what) {
    throw Refused{core::one_line(path) + ":" + std::to_string(line) + ": " + what};
}

// Text of the file, for a message: one line, every byte visible, cut when long.
std::string shown(std::string_view text) {
    constexpr std::size_t k_shown = 60;
    if (text.size() > k_shown)
        return core::one_line(text.substr(0, k_shown)) + "...";
    return core::one_line(text);
}

bool is_blank(char c) {
    const auto byte = static_cast<unsigned char>(c);
    return byte >= 1 && byte <= 0x20;
}
bool is_letter(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
bool is_name_char(char c) {
    return is_letter(c) || (c >= '0' && c <= '9') || c == '_';
}

// Where the editor works on an output: byte offsets in its file.
struct Place {
    std::size_t buffer_begin = 0, buffer_end = 0; // buffer_time's quoted value
    std::size_t period_begin = 0, period_end = 0;
    std::size_t close_line = 0; // start of the '}' line
    std::string indent;         // of the block's first setting
    std::string eol;            // the line ending before the '}' line
};

struct Include {
    unsigned line = 0;
    std::string value;
    bool optional = false;
};

// One file, parsed: its outputs and its includes, each in the order of its lines.
struct ParsedFile {
    std::vector<MpdOutput> outputs;
    std::vector<Place> places;
    std::vector<Include> includes;
};

// One line of a file, read token by token as MPD's Tokenizer does.
class LineReader {
  public:
    LineReader(const std::string& path, unsigned line, std::string_view text)
        : m_path(path), m_line(line), m_text(text) {}

    [[noreturn]] void refuse(const std::string& what) const {
        player::refuse(m_path, m_line, what);
    }
    bool at_end() const { return m_i == m_text.size(); }
    char peek() const { return m_text[m_i]; }
    std::size_t offset() const { return m_i; }
    void skip(std::size_t n) { m_i += n; }
    void skip_blanks() {
        while (m_i < m_text.size() && is_blank(m_text[m_i]))
            ++m_i;
    }
    // Only a '#' comment may follow.
    bool at_rest() const { return at_end() || peek() == '#'; }

    std::string_view name() {
        const std::size_t begin = m_i;
        std::size_t end = begin;
        while (end < m_text.size() && !is_blank(m_text[end]))
            ++end;
        const std::string_view token = m_text.substr(begin, end - begin);
        if (!is_letter(token[0]))
            refuse("'" + shown(token) +
                   "' does not start with a letter, as the name of an MPD setting must; fix the "
                   "line or make it a '#' comment");
        if (!std::all_of(token.begin(), token.end(), is_name_char))
            refuse("'" + shown(token) +
                   "' is not a setting name: a name holds only letters, digits and '_', and a "
                   "blank separates it from its value or '{'; fix the line");
        m_i = end;
        skip_blanks();
        return token;
    }

    // The quoted value of 'name' into 'value', and nothing but a comment after it; the
    // quoted token's offsets in the line.
    std::pair<std::size_t, std::size_t> value(std::string_view name, std::string& value) {
        const std::string written = "write it as " + std::string(name) + " \"VALUE\"";
        if (at_end())
            refuse("'" + shown(name) + "' has no value; " + written);
        if (peek() != '"')
            refuse("the value of '" + shown(name) +
                   "' is not in double quotes, which MPD requires; " + written);
        const std::size_t begin = m_i++;
        value.clear();
        while (true) {
            if (!at_end() && peek() == '"')
                break;
            if (!at_end() && peek() == '\\')
                ++m_i; // the next byte as it is, a '"' too
            if (at_end())
                refuse("the value of '" + shown(name) +
                       "' has no closing '\"' on its line; close it (a value is one line)");
            value.push_back(m_text[m_i++]);
        }
        const std::size_t end = ++m_i;
        if (!at_end() && !is_blank(peek()))
            refuse("the value of '" + shown(name) + "' is followed by '" +
                   shown(m_text.substr(m_i)) +
                   "' with no blank between, which MPD refuses; put a blank after the "
                   "closing '\"'");
        skip_blanks();
        if (!at_rest())
            refuse("'" + shown(m_text.substr(m_i)) + "' after the value of '" + shown(name) +
                   "'; a line holds one setting, and only a '#' comment may follow its value");
        return {begin, end};
    }

  private:
    const std::string& m_path;
    unsigned m_line;
    std::string_view m_text;
    std::size_t m_i = 0;
};

// An open block while its file is read.
struct OpenBlock {
    std::string name;
    unsigned line = 0;
    bool output = false;
    bool indented = false; // its first setting seen, and the indent taken from it
    std::unordered_map<std::string_view, unsigned> settings; // name: line
};

ParsedFile parse_file(const std::string& path, std::string_view text) {
    ParsedFile parsed;
    std::optional<OpenBlock> block;
    std::string value; // reused: no allocation a line
    std::string_view previous_eol = "\n";
    unsigned number = 0;
    for (std::size_t start = 0; start < text.size();) {
        const std::size_t newline = text.find('\n', start);
        const std::size_t stop = newline == std::string_view::npos ? text.size() : newline;
        const std::string_view line = text.substr(start, stop - start);
        LineReader reader(path, ++number, line);
        if (line.size() > k_max_line)
            reader.refuse("a line of " + std::to_string(line.size()) + " bytes, longer than the " +
                          std::to_string(k_max_line) +
                          " rtprov reads (MPD stops reading a file, without a word, at a line "
                          "over 512 KiB); shorten it");
        if (number == 1 && line.substr(0, 3) == "\xEF\xBB\xBF")
            reader.refuse("a UTF-8 byte order mark at the start of the file, which MPD reads as "
                          "part of the first line and refuses; save the file without it");
        if (line.find('\0') != std::string_view::npos)
            reader.refuse("a NUL byte, where MPD would end the line and skip the rest of it "
                          "unread; remove it");

        reader.skip_blanks();
        if (reader.at_rest()) {
        } else if (reader.peek() == '}') {
            if (!block)
                reader.refuse("'}' closes no block; remove it, or open the block with 'NAME {' "
                              "on a line before");
            reader.skip(1);
            reader.skip_blanks();
            if (!reader.at_rest())
                reader.refuse("'" + shown(line.substr(reader.offset())) +
                              "' after '}'; only a '#' comment may follow it on its line");
            if (block->output) {
                parsed.places.back().close_line = start;
                parsed.places.back().eol = std::string(previous_eol);
            }
            block.reset();
        } else if (block) {
            const std::size_t name_begin = reader.offset();
            const std::string_view name = reader.name();
            if (!reader.at_end() && reader.peek() == '{')
                reader.refuse("'" + shown(name) + " {' inside the block '" + shown(block->name) +
                              "' of line " + std::to_string(block->line) +
                              "; MPD's blocks do not nest: close that one with '}' first");
            const auto [begin, end] = reader.value(name, value);
            if (block->settings.size() == k_max_block_settings)
                reader.refuse("more than " + std::to_string(k_max_block_settings) +
                              " settings in the block of line " + std::to_string(block->line) +
                              ", more than rtprov reads in one block; split it");
            const auto [first, fresh] = block->settings.emplace(name, number);
            if (!fresh)
                reader.refuse("'" + shown(name) + "' is set twice in the block '" +
                              shown(block->name) + "' of line " + std::to_string(block->line) +
                              ", first on line " + std::to_string(first->second) +
                              "; MPD refuses that: keep one");
            if (block->output) {
                MpdOutput& output = parsed.outputs.back();
                Place& place = parsed.places.back();
                if (!block->indented)
                    place.indent = std::string(line.substr(0, name_begin));
                if (name == "type")
                    output.type = value;
                else if (name == "name")
                    output.name = value;
                else if (name == "buffer_time") {
                    output.buffer_time = value;
                    output.buffer_time_line = number;
                    place.buffer_begin = start + begin;
                    place.buffer_end = start + end;
                } else if (name == "period_time") {
                    output.period_time = value;
                    output.period_time_line = number;
                    place.period_begin = start + begin;
                    place.period_end = start + end;
                }
            }
            block->indented = true;
        } else {
            const std::string_view name = reader.name();
            if (name == "include" || name == "include_optional") {
                reader.value(name, value);
                if (value.empty())
                    reader.refuse("'" + std::string(name) + "' of an empty path; name a file");
                const std::size_t slash = value.rfind('/');
                const std::string_view base =
                    std::string_view(value).substr(slash == std::string::npos ? 0 : slash + 1);
                if (base.find_first_of("*?") != std::string_view::npos)
                    reader.refuse("'" + shown(value) +
                                  "' is a wildcard, which MPD expands and rtprov does not; "
                                  "name each file in an include of its own");
                if (parsed.includes.size() == k_max_includes)
                    reader.refuse("more than " + std::to_string(k_max_includes) +
                                  " includes, more than rtprov follows; include fewer files");
                parsed.includes.push_back({number, value, name == "include_optional"});
            } else if (!reader.at_end() && reader.peek() == '{') {
                reader.skip(1);
                reader.skip_blanks();
                if (!reader.at_rest())
                    reader.refuse("'" + shown(line.substr(reader.offset())) +
                                  "' after '{'; the block's settings go on the lines after it, "
                                  "one a line");
                block = OpenBlock{std::string(name), number, name == "audio_output", false, {}};
                if (block->output) {
                    if (parsed.outputs.size() == k_max_outputs)
                        reader.refuse("more than " + std::to_string(k_max_outputs) +
                                      " audio_output blocks, more than rtprov reads");
                    parsed.outputs.push_back(MpdOutput{path, number, "", "", {}, {}, 0, 0});
                    parsed.places.emplace_back();
                }
            } else if (std::find(std::begin(k_block_names), std::end(k_block_names), name) !=
                       std::end(k_block_names)) {
                reader.refuse("'" + std::string(name) + "' opens a block: write '" +
                              std::string(name) +
                              " {' on this line, its settings on the lines after, and '}' "
                              "alone on the last");
            } else if (!reader.at_end()) {
                // A name without a value is left to MPD: 0.24 reads it as the reset of a
                // repeatable setting, 0.23 refuses it; neither is an output.
                reader.value(name, value);
            }
        }
        previous_eol = newline != std::string_view::npos && stop > start && text[stop - 1] == '\r'
                           ? "\r\n"
                           : "\n";
        start = newline == std::string_view::npos ? text.size() : newline + 1;
    }
    if (block)
        refuse(path, block->line,
               "the block '" + shown(block->name) +
                   "' opened here is not closed before the end of the file; add a line '}' "
                   "after its last setting");
    return parsed;
}

// 'path' with its "." components and repeated '/' folded, and with Parents::fold its ".."
// components too (lexically, which is not what the kernel does past a symbolic link).
enum class Parents { keep, fold };
std::string normalise(std::string_view path, Parents parents) {
    const bool absolute = !path.empty() && path[0] == '/';
    std::vector<std::string_view> parts;
    for (std::size_t start = 0; start <= path.size();) {
        std::size_t slash = path.find('/', start);
        if (slash == std::string_view::npos)
            slash = path.size();
        const std::string_view part = path.substr(start, slash - start);
        start = slash + 1;
        if (part.empty() || part == ".")
            continue;
        if (part == ".." && parents == Parents::fold) {
            if (!parts.empty() && parts.back() != "..") {
                parts.pop_back();
                continue;
            }
            if (absolute)
                continue; // the parent of '/' is '/'
        }
        parts.push_back(part);
    }
    std::string result = absolute ? "/" : "";
    for (std::size_t i = 0; i < parts.size(); ++i)
        result.append(i ? "/" : "").append(parts[i]);
    return result.empty() ? "." : result;
}

// MPD's path of an include: absolute as written, else after the including file's directory.
std::string include_path(const std::string& including, const std::string& value) {
    if (value[0] == '/')
        return normalise(value, Parents::keep);
    const std::size_t slash = including.rfind('/');
    const std::string directory = slash == std::string::npos ? "." : including.substr(0, slash);
    return normalise(directory + "/" + value, Parents::keep);
}

struct LoadedFile {
    bool absent = false;
    std::string text; // kept for the main file and the files that hold an output
    ParsedFile parsed;
};

// The whole configuration, read from the main file through its includes.
class ConfigReader {
  public:
    explicit ConfigReader(const ReadFile& read) : m_read(read) {}

    struct Found {
        const std::string* path;
        const LoadedFile* file;
        std::size_t index; // in file->parsed
    };

    // The main file, or why not; throws Refused.
    core::Result<bool> run(const std::string& path) {
        core::Result<std::string> text = m_read(path);
        if (!text)
            return core::Result<bool>::failed(text.problem, text.absent);
        auto main = m_files.try_emplace(path).first;
        LoadedFile& file = main->second;
        file.text = std::move(*text.value);
        file.parsed = parse_file(path, file.text);
        m_main = &file;
        m_config.files.push_back(path);
        walk(main->first, main->second);
        return core::Result<bool>{true, {}, false};
    }

    MpdConfig& config() { return m_config; }
    const std::vector<Found>& found() const { return m_found; }
    const LoadedFile& main() const { return *m_main; }

  private:
    struct Step {
        std::string key; // the path with ".." folded, to know a file spelled two ways
        std::string path;
        unsigned line = 0; // of the include being followed
    };

    void walk(const std::string& path, const LoadedFile& file) {
        m_chain.push_back({normalise(path, Parents::fold), path, 0});
        const ParsedFile& parsed = file.parsed;
        for (std::size_t o = 0, i = 0; o < parsed.outputs.size() || i < parsed.includes.size();) {
            if (i == parsed.includes.size() ||
                (o < parsed.outputs.size() && parsed.outputs[o].line < parsed.includes[i].line)) {
                if (m_config.outputs.size() == k_max_outputs)
                    refuse(path, parsed.outputs[o].line,
                           "more than " + std::to_string(k_max_outputs) +
                               " audio_output blocks, more than rtprov reads");
                m_config.outputs.push_back(parsed.outputs[o]);
                m_found.push_back({&path, &file, o++});
            } else {
                follow(path, parsed.includes[i++]);
            }
        }
        m_chain.pop_back();
    }

    void follow(const std::string& path, const Include& include) {
        const char* directive = include.optional ? "include_optional" : "include";
        if (++m_includes > k_max_includes)
            refuse(path, include.line,
                   "more than " + std::to_string(k_max_includes) +
                       " includes in all, more than rtprov follows (MPD sets no limit); include "
                       "fewer files");
        const std::string target = include_path(path, include.value);
        const std::string key = normalise(target, Parents::fold);
        m_chain.back().line = include.line;
        for (const Step& step : m_chain)
            if (step.key == key) {
                std::string loop;
                for (std::size_t i = 0; i < m_chain.size(); ++i)
                    loop += (i ? ", '" : "'") + shown(m_chain[i].path) + "' line " +
                            std::to_string(m_chain[i].line) + " includes '" +
                            shown(i + 1 < m_chain.size() ? m_chain[i + 1].path : target) + "'";
                if (target != step.path)
                    loop += " (the file '" + shown(step.path) + "')";
                refuse(path, include.line,
                       "an include loop: " + loop +
                           "; MPD would read these files in a circle until it fails, so remove "
                           "one of these includes");
            }
        if (m_chain.size() == k_max_depth)
            refuse(path, include.line,
                   "includes nested more than " + std::to_string(k_max_depth) +
                       " files deep, more than rtprov follows (MPD sets no limit); include the "
                       "files from fewer levels");
        auto [entry, fresh] = m_files.try_emplace(target);
        LoadedFile& file = entry->second;
        if (fresh) {
            m_config.files.push_back(target);
            core::Result<std::string> text = m_read(target);
            if (!text && !text.absent)
                refuse(path, include.line,
                       std::string(directive) + " '" + shown(include.value) +
                           "': cannot read it: " + text.problem);
            file.absent = !text;
            if (text) {
                file.text = std::move(*text.value);
                file.parsed = parse_file(target, file.text);
                if (file.parsed.outputs.empty())
                    std::string().swap(file.text);
            }
        }
        if (file.absent) {
            if (include.optional)
                return;
            refuse(path, include.line,
                   "include '" + shown(include.value) + "': there is no '" + shown(target) +
                       "', and MPD refuses to start without it; create it, or write "
                       "include_optional");
        }
        walk(entry->first, file);
    }

    const ReadFile& m_read;
    std::map<std::string, LoadedFile> m_files; // by path; a map's nodes stay where they are
    const LoadedFile* m_main = nullptr;
    std::vector<Step> m_chain;
    std::size_t m_includes = 0;
    MpdConfig m_config;
    std::vector<Found> m_found; // where each of m_config.outputs is
};

struct Edit {
    std::size_t begin = 0, end = 0;
    std::string text;
};

std::string edited(const std::string& text, std::vector<Edit> edits) {
    std::stable_sort(edits.begin(), edits.end(),
                     [](const Edit& a, const Edit& b) { return a.begin < b.begin; });
    std::string out;
    out.reserve(text.size() + 256);
    std::size_t at = 0;
    for (const Edit& edit : edits) {
        out.append(text, at, edit.begin - at).append(edit.text);
        at = edit.end;
    }
    return out.append(text, at);
}

std::string quoted(std::uint32_t value) {
    return "\"" + std::to_string(value) + "\"";
}

// The output rtprov adds to a configuration with none, at the end of 'text'.
std::string with_added_output(std::string text, std::uint32_t period_us, std::uint32_t buffer_us) {
    const std::size_t first = text.find('\n');
    const std::string eol =
        first != std::string::npos && first > 0 && text[first - 1] == '\r' ? "\r\n" : "\n";
    if (!text.empty() && text.back() != '\n')
        text += text.back() == '\r' ? "\n" : eol;
    if (!text.empty())
        text += eol;
    text += "# Added by rtprov to set the ALSA buffer: with no audio_output, MPD detects ALSA's" +
            eol + "# default device itself, and this output is that device." + eol +
            "audio_output {" + eol + "    type \"alsa\"" + eol + "    name \"rtprov\"" + eol +
            "    buffer_time " + quoted(buffer_us) + eol + "    period_time " + quoted(period_us) +
            eol + "}" + eol;
    return text;
}

} // namespace

core::Result<MpdConfig> read_mpd_config(const std::string& path, const ReadFile& read) {
    try {
        ConfigReader reader(read);
        if (core::Result<bool> ran = reader.run(path); !ran)
            return core::Result<MpdConfig>::failed(ran.problem, ran.absent);
        return core::Result<MpdConfig>{std::move(reader.config()), {}, false};
    } catch (const Refused& refused) {
        return core::Result<MpdConfig>::failed(refused.problem);
    }
}

core::Result<std::map<std::string, std::string>> set_mpd_buffers(const std::string& path,
                                                                 const ReadFile& read,
                                                                 std::uint32_t period_us,
                                                                 std::uint32_t buffer_us) {
    using Files = std::map<std::string, std::string>;
    if (period_us == 0 || buffer_us == 0 || period_us > buffer_us)
        return core::Result<Files>::failed(
            "MPD's period_time " + std::to_string(period_us) + " and buffer_time " +
            std::to_string(buffer_us) +
            " µs are not a pair MPD can run with: each must be above 0 (MPD refuses 0) and the "
            "period no longer than the buffer");
    try {
        ConfigReader reader(read);
        if (core::Result<bool> ran = reader.run(path); !ran)
            return core::Result<Files>::failed(ran.problem, ran.absent);
        const MpdConfig& config = reader.config();
        Files changed;
        if (config.outputs.empty()) {
            changed[path] = with_added_output(reader.main().text, period_us, buffer_us);
            return core::Result<Files>{std::move(changed), {}, false};
        }
        // By file: the file, and its edits.
        std::map<std::string, std::pair<const LoadedFile*, std::vector<Edit>>> edits;
        std::set<std::pair<const LoadedFile*, std::size_t>> done; // a file included twice
        bool any_alsa = false;
        for (std::size_t i = 0; i < config.outputs.size(); ++i) {
            const MpdOutput& output = config.outputs[i];
            if (output.type != "alsa")
                continue;
            any_alsa = true;
            const ConfigReader::Found& found = reader.found()[i];
            if (!done.insert({found.file, found.index}).second)
                continue;
            const Place& place = found.file->parsed.places[found.index];
            auto& entry = edits[*found.path];
            entry.first = found.file;
            std::vector<Edit>& file_edits = entry.second;
            const auto set = [&](const std::optional<std::string>& now, std::size_t begin,
                                 std::size_t end, const char* name, std::uint32_t value) {
                if (!now)
                    file_edits.push_back({place.close_line, place.close_line,
                                          place.indent + name + " " + quoted(value) + place.eol});
                else if (*now != std::to_string(value))
                    file_edits.push_back({begin, end, quoted(value)});
            };
            set(output.buffer_time, place.buffer_begin, place.buffer_end, "buffer_time", buffer_us);
            set(output.period_time, place.period_begin, place.period_end, "period_time", period_us);
        }
        if (!any_alsa) {
            const MpdOutput& first = config.outputs.front();
            refuse(first.file, first.line,
                   (first.type.empty()
                        ? std::string("this audio_output has no type")
                        : "this audio_output is of type '" + shown(first.type) + "'") +
                       " and no output is of type 'alsa'; rtprov sets buffer_time and "
                       "period_time in ALSA outputs, and one it added would be a second output "
                       "that MPD plays to as well: set this output's buffer by hand, or make "
                       "it type \"alsa\"");
        }
        for (const auto& [file_path, entry] : edits)
            if (!entry.second.empty())
                changed[file_path] = edited(entry.first->text, entry.second);
        return core::Result<Files>{std::move(changed), {}, false};
    } catch (const Refused& refused) {
        return core::Result<Files>::failed(refused.problem);
    }
}

} // namespace rtprov::player
