// SPDX-License-Identifier: Apache-2.0
#include "provisioner/target/trial_record.hpp"

#include "provisioner/boot/cmdline.hpp"
#include "provisioner/boot/loader.hpp"
#include "provisioner/core/error.hpp"
#include "provisioner/core/grammar.hpp"
#include "provisioner/core/plan.hpp"
#include "provisioner/core/text.hpp"

#include <algorithm>
#include <array>
#include <set>
#include <sstream>

namespace rtprov::target {

namespace {

// The one table of the record's keys: each line's name and its field.
using Field = std::string TrialRecord::*;
constexpr std::array<std::pair<const char*, Field>, 10> k_fields = {{
    {"phase", &TrialRecord::phase},
    {"id", &TrialRecord::id},
    {"profile", &TrialRecord::profile},
    {"loader", &TrialRecord::loader},
    {"armed_at", &TrialRecord::armed_at},
    {"armed_boot", &TrialRecord::armed_boot},
    {"reason", &TrialRecord::reason},
    {"selftest", &TrialRecord::selftest},
    {"audit", &TrialRecord::audit},
    {"updated_at", &TrialRecord::updated_at},
}};

// The length of the printable UTF-8 character at 'i', 0 for a control byte (C0, DEL,
// C1) or a byte that does not start a well-formed character.
std::size_t printable_at(const std::string& text, std::size_t i) {
    auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80)
        return c < 0x20 || c == 0x7f ? 0 : 1;
    if (c == 0xc2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) < 0xa0)
        return 0; // U+0080..U+009F
    return core::utf8_length(text, i);
}

bool printable_utf8(const std::string& text) {
    for (std::size_t i = 0, n = 0; i < text.size(); i += n)
        if ((n = printable_at(text, i)) == 0)
            return false;
    return true;
}

// The boot loaders' names, in alphabetical order: "grub, rpi-firmware or systemd-boot".
std::string loader_names() {
    std::vector<std::string> names;
    for (const boot::Loader* l : boot::loaders())
        names.push_back(l->name());
    std::sort(names.begin(), names.end());
    std::string text;
    for (std::size_t i = 0; i < names.size(); ++i)
        text += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
    return text;
}

bool known_phase(const std::string& phase) {
    return phase == "armed" || phase == "committed" || phase == "fell-back" || phase == "aborted" ||
           phase == "commit-failed";
}

} // namespace

std::string format_trial_record(const TrialRecord& record) {
    std::string out = "# rtprov trial; do not edit, 'rtprov trial status' shows it\n";
    for (const auto& [key, field] : k_fields) {
        // One printable line per key, whatever a message holds: a line end or another
        // control byte becomes a space, a byte that is not UTF-8 a '?'.
        const std::string& raw = record.*field;
        std::string value;
        for (std::size_t i = 0, n = 0; i < raw.size(); i += n) {
            n = printable_at(raw, i);
            if (n == 0) {
                auto c = static_cast<unsigned char>(raw[i]);
                value += c < 0x20 || c == 0x7f ? ' ' : '?';
                n = 1;
            } else {
                value.append(raw, i, n);
            }
        }
        if (!value.empty())
            out += std::string(key) + "=" + value + "\n";
    }
    return out;
}

TrialRecord parse_trial_record(const std::string& text, const std::string& label) {
    TrialRecord record;
    std::set<std::string> seen;
    std::istringstream in(text);
    std::string line;
    for (int number = 1; std::getline(in, line); ++number) {
        if (line.empty() || line[0] == '#')
            continue;
        auto bad = [&](const std::string& what) {
            return Error(label + ":" + std::to_string(number) + ": " + what +
                         "; the trial record is damaged: 'rtprov trial abort' ends the trial "
                         "and writes a new one, or fix the line");
        };
        std::size_t eq = line.find('=');
        if (eq == std::string::npos)
            throw bad("expected key=value, found " + quoted(line));
        const std::string key = line.substr(0, eq), value = line.substr(eq + 1);
        auto field = std::find_if(k_fields.begin(), k_fields.end(),
                                  [&](const auto& f) { return key == f.first; });
        if (field == k_fields.end())
            throw bad("unknown key " + quoted(key));
        if (seen.count(key))
            throw bad("a second " + quoted(key) + " line");
        // rtprov writes printable UTF-8 only: anything else is not its record, and would
        // reach a terminal, JSON and Prometheus labels.
        if (!printable_utf8(value))
            throw bad(quoted(key) + " holds a control byte or bytes that are not UTF-8");
        seen.insert(key);
        record.*(field->second) = value;
    }
    // 'unknown': what 'trial abort' writes after a damaged record, which said no loader.
    if (!boot::find_loader(record.loader) &&
        !(record.loader == "unknown" && record.phase == "aborted"))
        throw Error(label +
                    ": the trial record names no boot loader rtprov tries boots with "
                    "('loader=' " +
                    loader_names() + "); 'rtprov trial abort' ends the trial and writes a new one");
    if (!known_phase(record.phase))
        throw Error(label + ": the trial record has no known phase (armed, committed, "
                            "fell-back, aborted, commit-failed); 'rtprov trial abort' ends the "
                            "trial and writes a new one");
    // The profile's name follows the profile-name rule, as the state's does: apply records
    // a loaded profile's, and 'trial status' prints it into a terminal, JSON and a
    // Prometheus label.
    if (auto rule = core::grammar::profile_name(record.profile))
        throw Error(label + ": the trial record's profile " + quoted(record.profile) +
                    " is not a profile name (" + *rule +
                    "); 'rtprov trial abort' ends the trial and writes a new one");
    if (record.id.empty() || record.id.find_first_not_of("0123456789abcdef") != std::string::npos)
        throw Error(label + ": the trial record's id " + quoted(record.id) +
                    " is not the hex id rtprov writes; 'rtprov trial abort' ends the trial and "
                    "writes a new one");
    return record;
}

std::optional<TrialRecord> read_trial_record(const fs::Root& root) {
    auto file = root.read(core::k_trial_record_path, fs::caps::k_config);
    if (!file)
        return std::nullopt;
    return parse_trial_record(file->content, root.shown(core::k_trial_record_path));
}

void write_trial_record(fs::Root& root, const TrialRecord& record) {
    core::FileState file;
    file.content = format_trial_record(record);
    file.mode = 0644;
    root.write(core::k_trial_record_path, file);
}

TrialBoot classify_boot(const std::optional<TrialRecord>& record, const std::string& cmdline,
                        const std::string& boot_id) {
    if (!record || record->phase != "armed")
        return TrialBoot::none;
    for (const boot::CmdlineToken& token : boot::parse_cmdline(cmdline))
        if (token.key() == core::k_trial_param && token.value() == record->id)
            return TrialBoot::trial;
    if (!record->armed_boot.empty() && record->armed_boot == boot_id)
        return TrialBoot::not_yet;
    return TrialBoot::did_not_start;
}

} // namespace rtprov::target
