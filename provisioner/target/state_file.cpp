// SPDX-License-Identifier: Apache-2.0
#include "provisioner/target/state_file.hpp"

#include "provisioner/core/error.hpp"
#include "provisioner/core/grammar.hpp"
#include "provisioner/core/sha256.hpp"
#include "provisioner/core/text.hpp"

#include <algorithm>
#include <sstream>

namespace rtprov::target {

namespace {

constexpr const char* k_magic = "format rtprov-state 1";

// Paths are written with %XX for bytes that would break the line format.
std::string encode(const std::string& path) {
    static const char k_hex[] = "0123456789ABCDEF";
    std::string out;
    for (char ch : path) {
        auto c = static_cast<unsigned char>(ch);
        if (c <= 0x20 || c == '%' || c == ',' || c >= 0x7f) {
            out += '%';
            out += k_hex[c >> 4];
            out += k_hex[c & 15];
        } else {
            out += char(c);
        }
    }
    return out;
}

std::optional<std::string> decode(const std::string& text) {
    std::string out;
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] != '%') {
            out += text[i];
            continue;
        }
        if (i + 2 >= text.size())
            return std::nullopt;
        unsigned value = 0;
        for (int k = 1; k <= 2; ++k) {
            char c = text[i + std::size_t(k)];
            value <<= 4;
            if (c >= '0' && c <= '9')
                value |= unsigned(c - '0');
            else if (c >= 'A' && c <= 'F')
                value |= unsigned(c - 'A' + 10);
            else
                return std::nullopt;
        }
        out += char(value);
        i += 2;
    }
    return out;
}

bool is_sha256(const std::string& text) {
    return text.size() == 64 && std::all_of(text.begin(), text.end(), [](char c) {
               return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
           });
}

// A time as apply records it (cli's utc_text, "%Y-%m-%dT%H:%M:%SZ"): a year of four or
// more digits, then "-MM-DDTHH:MM:SSZ" with digits where strftime puts them.
bool is_utc_time(const std::string& text) {
    const std::string shape = "-00-00T00:00:00Z";
    if (text.size() < 4 + shape.size())
        return false;
    const std::size_t year = text.size() - shape.size();
    auto digit = [](char c) { return c >= '0' && c <= '9'; };
    if (!std::all_of(text.begin(), text.begin() + std::ptrdiff_t(year), digit))
        return false;
    for (std::size_t i = 0; i < shape.size(); ++i)
        if (shape[i] == '0' ? !digit(text[year + i]) : text[year + i] != shape[i])
            return false;
    return true;
}

using core::words;

// An absolute, resolved in-root path as rtprov records them: '/etc/x', never '/',
// a trailing '/', '//', '.' or '..' parts.
bool clean_path(const std::string& path) {
    if (path.size() < 2 || path.front() != '/' || path.back() == '/')
        return false;
    // Nothing rtprov plans holds a control byte or bytes that are not UTF-8 (a file name it
    // writes follows a grammar); 'status', 'plan' and 'apply' print these paths, and a
    // forged one with a line break would add lines of its own to what they say.
    if (core::one_line(path) != path)
        return false;
    for (std::size_t start = 1; start < path.size();) {
        std::size_t slash = path.find('/', start);
        std::string part = path.substr(start, slash - start);
        if (part.empty() || part == "." || part == "..")
            return false;
        start = slash == std::string::npos ? path.size() : slash + 1;
    }
    return true;
}

std::vector<std::string> split_commas(const std::string& text) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (true) {
        std::size_t comma = text.find(',', start);
        out.push_back(text.substr(start, comma - start));
        if (comma == std::string::npos)
            return out;
        start = comma + 1;
    }
}

} // namespace

bool ManagedFile::is_ours(const std::optional<std::string>& sha) const {
    if (generated)
        return true; // made by a command: rollback restores or regenerates, never refuses
    if (!sha)
        return created; // a created file may be gone, or not written yet
    return *sha == sha256 || (!previous_sha256.empty() && *sha == previous_sha256) ||
           (!created && *sha == original_sha256);
}

const ManagedFile* State::find(const std::string& path) const {
    for (const ManagedFile& file : files)
        if (file.path == path)
            return &file;
    return nullptr;
}

std::string serialize_state(const State& state) {
    std::string body;
    body += std::string(k_magic) + "\n";
    body += std::string("status ") +
            (state.status == ApplyStatus::applied        ? "applied"
             : state.status == ApplyStatus::rolling_back ? "rolling-back"
                                                         : "applying") +
            "\n";
    body += "profile " + encode(state.profile) + "\n";
    body += "profile-sha256 " + state.profile_sha256 + "\n";
    body += "applied-at " + state.applied_at + "\n";
    if (!state.loader.empty())
        body += "loader " + encode(state.loader) + "\n";
    body += std::string("state-dir ") + (state.state_dir_created ? "created" : "existing") + "\n";
    for (const std::string& dir : state.created_dirs)
        body += "dir " + encode(dir) + "\n";
    for (const ManagedFile& file : state.files) {
        body += "file " + encode(file.path) + (file.created ? " created " : " changed ") +
                (file.sha256.empty() ? "-" : file.sha256);
        if (!file.created)
            body += " " + file.original_sha256;
        if (!file.previous_sha256.empty())
            body += " previous " + file.previous_sha256;
        if (file.generated)
            body += " generated";
        if (file.runtime)
            body += " runtime";
        body += "\n";
        if (file.cmdline) {
            std::string keys;
            for (const std::string& key : file.cmdline->owned_keys)
                keys += (keys.empty() ? "" : ",") + encode(key);
            body += "cmdline " + encode(file.path) +
                    (file.cmdline->first_line_only ? " first-line " : " whole-text ") +
                    (keys.empty() ? "-" : keys);
            for (const std::string& token : file.cmdline->part)
                body += " " + encode(token);
            body += "\n";
        }
    }
    auto command_line = [](const char* tag, const std::vector<std::string>& argv) {
        std::string line = tag;
        for (const std::string& arg : argv)
            line += " " + encode(arg);
        return line + "\n";
    };
    for (const auto& argv : state.pending)
        body += command_line("pending", argv);
    for (const auto& argv : state.ran)
        body += command_line("ran", argv);
    for (const auto& argv : state.made)
        body += command_line("made", argv);
    return "# rtprov state: do not edit; see 'rtprov status' and 'rtprov rollback'\n" + body +
           "checksum " + core::sha256_hex(body) + "\n";
}

State parse_state(const std::string& text, const std::string& label) {
    const std::string fix =
        "; if the target was never provisioned by rtprov, move the file away; otherwise "
        "restore it from a copy of the image";
    std::istringstream in(text);
    std::string line;
    std::vector<std::string> lines;
    while (std::getline(in, line))
        lines.push_back(line);
    std::size_t first = 0;
    while (first < lines.size() && (lines[first].empty() || lines[first][0] == '#'))
        ++first;
    if (first >= lines.size() || lines[first] != k_magic) {
        if (first < lines.size() && lines[first].rfind("format rtprov-state ", 0) == 0)
            throw Error(label + ":" + std::to_string(first + 1) + ": state file has " +
                        quoted(lines[first]) +
                        ", written by a newer rtprov; use that version to roll back or update "
                        "rtprov");
        throw Error(label + ": not an rtprov state file (no " + quoted(k_magic) + " line)" + fix);
    }
    if (text.empty() || text.back() != '\n')
        throw Error(label + ": state file is truncated (no final newline)" + fix);

    std::string body;
    State state;
    bool have_status = false, have_checksum = false, have_state_dir = false;
    for (std::size_t i = first; i < lines.size(); ++i) {
        const std::string where = label + ":" + std::to_string(i + 1) + ": ";
        auto w = words(lines[i]);
        if (have_checksum)
            throw Error(where + "text after the checksum line; the state file is damaged" + fix);
        if (w.empty())
            throw Error(where + "empty line; the state file is damaged" + fix);
        if (w[0] == "checksum") {
            if (w.size() != 2 || w[1] != core::sha256_hex(body))
                throw Error(where +
                            "checksum does not match the contents: the state file was "
                            "damaged or edited by hand" +
                            fix);
            have_checksum = true;
            continue;
        }
        body += lines[i] + "\n";
        auto bad = [&](const std::string& why) {
            return Error(where + why + " in " + quoted(lines[i]) + fix);
        };
        if (i == first)
            continue; // the magic line
        if (w[0] == "status" && w.size() == 2 &&
            (w[1] == "applied" || w[1] == "applying" || w[1] == "rolling-back")) {
            state.status = w[1] == "applied"        ? ApplyStatus::applied
                           : w[1] == "rolling-back" ? ApplyStatus::rolling_back
                                                    : ApplyStatus::applying;
            have_status = true;
        } else if (w[0] == "profile" && w.size() == 2) {
            auto name = decode(w[1]);
            if (!name)
                throw bad("bad escape");
            // the name apply recorded followed the profile-name rule (status prints it)
            if (auto rule = core::grammar::profile_name(*name))
                throw bad("a profile name that is not one (" + *rule + ")");
            state.profile = *name;
        } else if (w[0] == "profile-sha256" && w.size() == 2 && is_sha256(w[1])) {
            state.profile_sha256 = w[1];
        } else if (w[0] == "applied-at" && w.size() == 2) {
            if (!is_utc_time(w[1]))
                throw bad("a time that is not YYYY-MM-DDTHH:MM:SSZ");
            state.applied_at = w[1];
        } else if (w[0] == "loader" && w.size() == 2) {
            auto loader = decode(w[1]);
            if (!loader)
                throw bad("bad escape");
            // the boot loader apply recorded: one rtprov writes for (messages name it)
            const auto loaders = core::words(core::BootLoader{});
            if (std::none_of(loaders.begin(), loaders.end(),
                             [&](const auto& word) { return word.first == *loader; }))
                throw bad("a boot loader rtprov does not write for");
            state.loader = *loader;
        } else if (w[0] == "cmdline" && w.size() >= 4 &&
                   (w[2] == "first-line" || w[2] == "whole-text")) {
            auto path = decode(w[1]);
            ManagedFile* file = path && !state.files.empty() && state.files.back().path == *path
                                    ? &state.files.back()
                                    : nullptr;
            if (!file || file->cmdline)
                throw bad("a cmdline line that follows no file line of its path");
            core::CmdlineEdit edit;
            edit.first_line_only = w[2] == "first-line";
            if (w[3] != "-")
                for (const std::string& key : split_commas(w[3])) {
                    auto decoded = decode(key);
                    if (!decoded || decoded->empty())
                        throw bad("bad key");
                    edit.owned_keys.push_back(*decoded);
                }
            for (std::size_t k = 4; k < w.size(); ++k) {
                auto token = decode(w[k]);
                if (!token)
                    throw bad("bad escape");
                edit.part.push_back(*token);
            }
            file->cmdline = std::move(edit);
        } else if (w[0] == "state-dir" && w.size() == 2 &&
                   (w[1] == "created" || w[1] == "existing")) {
            state.state_dir_created = w[1] == "created";
            have_state_dir = true;
        } else if (w[0] == "dir" && w.size() == 2) {
            auto dir = decode(w[1]);
            if (!dir || !clean_path(*dir) ||
                std::find(state.created_dirs.begin(), state.created_dirs.end(), *dir) !=
                    state.created_dirs.end())
                throw bad("bad folder path");
            state.created_dirs.push_back(*dir);
        } else if (w[0] == "file" && w.size() >= 4 && (w[2] == "created" || w[2] == "changed")) {
            ManagedFile file;
            auto path = decode(w[1]);
            if (!path || !clean_path(*path) || state.find(*path))
                throw bad("bad file path");
            file.path = *path;
            file.created = w[2] == "created";
            // Optional words after the checksums: 'previous SHA', 'generated', 'runtime'.
            if (w.back() == "runtime") {
                file.runtime = true;
                w.pop_back();
            }
            if (w.back() == "generated") {
                file.generated = true;
                w.pop_back();
            }
            std::size_t fixed = file.created ? 4 : 5;
            bool has_previous = w.size() == fixed + 2 && w[fixed] == "previous";
            bool known = is_sha256(w[3]) || (file.generated && w[3] == "-");
            if (!known || (!file.created && (w.size() < 5 || !is_sha256(w[4]))) ||
                (w.size() != fixed && !has_previous) || (has_previous && !is_sha256(w[fixed + 1])))
                throw bad("bad checksums");
            file.sha256 = w[3] == "-" ? "" : w[3];
            if (!file.created)
                file.original_sha256 = w[4];
            if (has_previous)
                file.previous_sha256 = w[fixed + 1];
            state.files.push_back(std::move(file));
        } else if ((w[0] == "pending" || w[0] == "ran" || w[0] == "made") && w.size() >= 2) {
            std::vector<std::string> argv;
            for (std::size_t k = 1; k < w.size(); ++k) {
                auto arg = decode(w[k]);
                if (!arg)
                    throw bad("bad escape");
                argv.push_back(*arg);
            }
            (w[0] == "pending" ? state.pending
             : w[0] == "ran"   ? state.ran
                               : state.made)
                .push_back(std::move(argv));
        } else {
            throw bad("unknown entry");
        }
    }
    if (!have_checksum)
        throw Error(label + ": state file has no checksum line; it is truncated or damaged" + fix);
    if (!have_status || !have_state_dir || state.profile.empty() || state.profile_sha256.empty() ||
        state.applied_at.empty())
        throw Error(label +
                    ": state file lacks its status, state-dir, profile, profile-sha256 or "
                    "applied-at line" +
                    fix);
    return state;
}

} // namespace rtprov::target
