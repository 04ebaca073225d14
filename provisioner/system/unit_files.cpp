// SPDX-License-Identifier: Apache-2.0
#include "provisioner/system/unit_files.hpp"

#include "provisioner/core/text.hpp"

namespace rtprov::system {

const std::vector<std::string>& unit_search_path() {
    static const std::vector<std::string> k_path = {
        "/etc/systemd/system.control", "/run/systemd/system.control",
        "/run/systemd/transient",      "/etc/systemd/system",
        "/run/systemd/system",         "/usr/local/lib/systemd/system",
        "/usr/lib/systemd/system",     "/lib/systemd/system"};
    return k_path;
}

void apply_unit_text(const std::string& text, const std::string& file,
                     std::map<std::string, UnitSetting>& into) {
    // systemd.syntax(7): '#' and ';' start a comment line, '[Section]' a section,
    // 'Key=Value' with blanks around both allowed; a line ending in '\' continues.
    std::string section;
    const std::vector<std::string> lines = core::split(text, '\n');
    for (std::size_t i = 0; i < lines.size(); ++i) {
        const int number = int(i) + 1;
        std::string line(core::trim(lines[i]));
        while (line.ends_with('\\') && i + 1 < lines.size()) {
            line.pop_back();
            line += " " + std::string(core::trim(lines[++i]));
        }
        if (line.empty() || line.front() == '#' || line.front() == ';')
            continue;
        if (line.front() == '[') {
            section = line.substr(1, line.find(']') == std::string::npos ? 0 : line.find(']') - 1);
            continue;
        }
        const std::size_t equals = line.find('=');
        if (section != "Service" || equals == std::string::npos)
            continue;
        const std::string key(core::trim(std::string_view(line).substr(0, equals)));
        const std::string value(core::trim(std::string_view(line).substr(equals + 1)));
        if (value.empty())
            into.erase(key);
        else
            into[key] = {value, file + ":" + std::to_string(number)};
    }
}

Fact<UnitFile> read_unit_file(const SysRoot& root, const std::string& unit) {
    UnitFile out;
    auto read = [&](const std::string& path, bool& found) -> std::string {
        Fact<std::string> text = root.text(path);
        if (text) {
            found = true;
            apply_unit_text(*text, path, out.service);
            return {};
        }
        return text.absent ? std::string() : text.problem;
    };
    for (const std::string& dir : unit_search_path()) {
        bool found = false;
        if (std::string problem = read(dir + "/" + unit, found); !problem.empty())
            return Fact<UnitFile>::failed(problem);
        if (found) {
            out.path = dir + "/" + unit;
            break;
        }
    }
    // Drop-ins by name across the folders; the first folder to hold a name wins.
    std::map<std::string, std::string> dropins;
    for (const std::string& dir : unit_search_path()) {
        const std::string folder = dir + "/" + unit + ".d";
        Fact<std::vector<std::string>> names = root.names(folder);
        if (!names && !names.absent)
            return Fact<UnitFile>::failed(names.problem);
        if (names)
            for (const std::string& name : *names)
                if (name.ends_with(".conf"))
                    dropins.emplace(name, folder + "/" + name);
    }
    for (const auto& [name, path] : dropins) {
        bool found = false;
        if (std::string problem = read(path, found); !problem.empty())
            return Fact<UnitFile>::failed(problem);
        if (found)
            out.dropins.push_back(path);
    }
    if (out.path.empty() && out.dropins.empty())
        return Fact<UnitFile>::failed("no unit file or drop-in of '" + unit + "' in " +
                                          core::join(unit_search_path(), ", "),
                                      true);
    return {std::move(out), {}, false};
}

} // namespace rtprov::system
