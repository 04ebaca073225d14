// SPDX-License-Identifier: Apache-2.0
#include "provisioner/target/firstboot_state.hpp"

#include "provisioner/core/error.hpp"
#include "provisioner/core/text.hpp"

#include <charconv>
#include <sstream>

namespace rtprov::target {

std::string format_firstboot_state(const FirstbootState& s) {
    std::string out = "# rtprov first boot progress; do not edit, 'rtprov status' shows it\n";
    auto line = [&out](const char* key, std::string value) {
        for (char& c : value) // one line per key, whatever a message holds
            if (c == '\n' || c == '\r')
                c = ' ';
        if (!value.empty())
            out += std::string(key) + "=" + value + "\n";
    };
    line("phase", s.phase);
    line("profile", s.profile);
    out += "reboots=" + std::to_string(s.reboots) + "\n";
    line("reboot_cause", s.reboot_cause);
    line("cmdline", s.cmdline);
    line("selftest", s.selftest);
    line("audit", s.audit);
    line("trial", s.trial);
    line("buffers", s.buffers);
    line("reason", s.reason);
    line("updated_at", s.updated_at);
    return out;
}

FirstbootState parse_firstboot_state(const std::string& text, const std::string& label) {
    FirstbootState s;
    std::istringstream in(text);
    std::string line;
    for (int number = 1; std::getline(in, line); ++number) {
        if (line.empty() || line[0] == '#')
            continue;
        std::size_t eq = line.find('=');
        std::string key = line.substr(0, eq),
                    value = eq == std::string::npos ? "" : line.substr(eq + 1);
        auto bad = [&](const std::string& what) {
            return Error(label + ":" + std::to_string(number) + ": " + what +
                         "; the first-boot state is damaged: remove it to run first boot "
                         "again ('" +
                         core::shell_command({"rm", label}) + "'), or fix the line");
        };
        if (eq == std::string::npos)
            throw bad("expected key=value, found " + quoted(line));
        if (key == "phase") {
            if (value != "rebooting" && value != "done" && value != "failed")
                throw bad("unknown phase " + quoted(value));
            s.phase = value;
        } else if (key == "profile") {
            s.profile = value;
        } else if (key == "reboots") {
            auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), s.reboots);
            if (ec != std::errc() || ptr != value.data() + value.size())
                throw bad("'reboots' must be a number, found " + quoted(value));
        } else if (key == "reboot_cause") {
            s.reboot_cause = value;
        } else if (key == "cmdline") {
            s.cmdline = value;
        } else if (key == "selftest") {
            s.selftest = value;
        } else if (key == "audit") {
            s.audit = value;
        } else if (key == "trial") {
            s.trial = value;
        } else if (key == "buffers") {
            s.buffers = value;
        } else if (key == "reason") {
            s.reason = value;
        } else if (key == "updated_at") {
            s.updated_at = value;
        } else {
            throw bad("unknown key " + quoted(key));
        }
    }
    return s;
}

std::optional<FirstbootState> read_firstboot_state(const fs::Root& root) {
    auto file = root.read(k_firstboot_state, fs::caps::k_config);
    if (!file)
        return std::nullopt;
    return parse_firstboot_state(file->content, root.shown(k_firstboot_state));
}

RebootDecision decide_reboot(const FirstbootState& state, const std::string& missing,
                             bool reboot_allowed) {
    if (missing.empty())
        return {false, "ok",
                "nothing needed a reboot: the running kernel has what the profile plans"};
    if (state.reboots > 0)
        return {false,
                "still missing after the reboot: " + missing +
                    "; the boot loader did not use the new configuration (see "
                    "'rtprov plan --live' and the boot loader's files)",
                "first boot rebooted once already"};
    if (!reboot_allowed)
        return {false,
                "missing until the next reboot (reboot: false in " +
                    std::string(k_firstboot_config) + "): " + missing,
                "first boot does not reboot (reboot: false in " + std::string(k_firstboot_config) +
                    ")"};
    return {true, missing, ""};
}

void write_firstboot_state(fs::Root& root, const FirstbootState& state) {
    root.make_directories(k_firstboot_dir);
    core::FileState file;
    file.content = format_firstboot_state(state);
    root.write(k_firstboot_state, file);
    if (state.phase == "done" || state.phase == "failed")
        root.write(k_firstboot_done, file);
}

} // namespace rtprov::target
