#include "provisioner/target/trial_record.hpp"

#include "provisioner/boot/cmdline.hpp"
#include "provisioner/core/error.hpp"
#include "provisioner/core/plan.hpp"

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

bool known_phase(const std::string& phase) {
    return phase == "armed" || phase == "committed" || phase == "fell-back" || phase == "aborted" ||
           phase == "commit-failed";
}

} // namespace

std::string format_trial_record(const TrialRecord& record) {
    std::string out = "# rtprov trial; do not edit, 'rtprov trial status' shows it\n";
    for (const auto& [key, field] : k_fields) {
        std::string value = record.*field;
        for (char& c : value) // one line per key, whatever a message holds
            if (c == '\n' || c == '\r')
                c = ' ';
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
        seen.insert(key);
        record.*(field->second) = value;
    }
    if (record.loader.empty())
        throw Error(label + ": the trial record names no boot loader ('loader='); 'rtprov trial "
                            "abort' ends the trial and writes a new one");
    if (!known_phase(record.phase))
        throw Error(label + ": the trial record has no known phase (armed, committed, "
                            "fell-back, aborted); 'rtprov trial abort' ends the trial and "
                            "writes a new one");
    if (record.id.empty() || record.id.find_first_not_of("0123456789abcdef") != std::string::npos)
        throw Error(label + ": the trial record's id " + quoted(record.id) +
                    " is not the hex id rtprov writes; 'rtprov trial abort' ends the trial and "
                    "writes a new one");
    return record;
}

std::optional<TrialRecord> read_trial_record(const Root& root) {
    auto file = root.read(core::k_trial_record_path, caps::k_config);
    if (!file)
        return std::nullopt;
    return parse_trial_record(file->content, root.host_path(core::k_trial_record_path));
}

void write_trial_record(Root& root, const TrialRecord& record) {
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
