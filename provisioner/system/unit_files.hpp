// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/system/sysroot.hpp"

#include <map>
#include <string>
#include <vector>

// The settings of a systemd service unit as systemd loads them (systemd.unit(5), "Unit
// File Load Path" and "[Unit] Section Options"): the unit file first found on the system
// search path, then every '<unit>.d/*.conf' drop-in on it, in the order of their file
// names (a drop-in in an earlier folder hides one of the same name in a later folder);
// within them the last assignment of a setting wins and an empty one resets it.
// Templates, aliases and generators are not followed.
namespace rtprov::system {

// The folders searched, earliest first (systemd.unit(5), without the generator folders;
// /lib/systemd/system for Debian 12, where it is not yet a link to /usr/lib).
const std::vector<std::string>& unit_search_path();

// One setting and where it was set.
struct UnitSetting {
    std::string value;
    std::string where; // '/etc/systemd/system/mpd.service.d/60-rtprov.conf:5'
};

struct UnitFile {
    std::string path;                 // the unit file; "" when there are only drop-ins
    std::vector<std::string> dropins; // in the order they apply
    // The [Service] section's settings in effect ('User', 'LimitRTPRIO')
    std::map<std::string, UnitSetting> service;
};

// Reads 'unit' ('mpd.service'); 'absent' when neither a unit file nor a drop-in is there.
// A file that is there but cannot be read is a problem: the settings would be incomplete.
Fact<UnitFile> read_unit_file(const SysRoot& root, const std::string& unit);

// The [Service] settings of unit file text, applied over 'into' (file: the name for
// 'where'). Pure.
void apply_unit_text(const std::string& text, const std::string& file,
                     std::map<std::string, UnitSetting>& into);

} // namespace rtprov::system
