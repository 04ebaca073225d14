// SPDX-License-Identifier: Apache-2.0
#include "provisioner/system/loop_devices.hpp"

#include <fcntl.h>
#include <linux/loop.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <sstream>

namespace rtprov::system {

namespace {

// /proc/swaps' escape of a name: \ and three octal digits for the byte
std::string unescaped(std::string_view name) {
    std::string out;
    for (std::size_t i = 0; i < name.size(); ++i) {
        const bool octal = name[i] == '\\' && i + 3 < name.size() &&
                           std::all_of(name.begin() + long(i) + 1, name.begin() + long(i) + 4,
                                       [](char c) { return c >= '0' && c <= '7'; });
        if (!octal) {
            out += name[i];
            continue;
        }
        out += char((name[i + 1] - '0') * 64 + (name[i + 2] - '0') * 8 + (name[i + 3] - '0'));
        i += 3;
    }
    return out;
}

} // namespace

std::optional<FileId> loop_file(const std::string& device) {
    struct loop_info64 info {};
    const int fd = ::open(device.c_str(), O_RDONLY | O_CLOEXEC);
    const bool asked = fd >= 0 && ::ioctl(fd, LOOP_GET_STATUS64, &info) == 0;
    if (fd >= 0)
        ::close(fd);
    if (!asked)
        return std::nullopt;
    return FileId{dev_t(info.lo_device), ino_t(info.lo_inode)};
}

std::vector<AttachedLoop> attached_loops(const SysRoot& sys, const LoopFileQuery& ask) {
    std::vector<AttachedLoop> found;
    for (const std::string& name :
         sys.names("/sys/block").value.value_or(std::vector<std::string>{})) {
        if (name.rfind("loop", 0) != 0)
            continue;
        // its first line; a loop device with nothing attached has no such file
        const std::string text =
            sys.text("/sys/block/" + name + "/loop/backing_file").value.value_or("");
        if (text.empty())
            continue;
        const std::string backing = text.substr(0, text.find('\n'));
        const std::string device = "/dev/" + name;
        if (const auto asked = ask(device))
            found.push_back({device, *asked});
        else if (!backing.ends_with(" (deleted)"))
            if (const auto named = file_id(sys, backing))
                found.push_back({device, *named});
    }
    return found;
}

std::string block_device_path(const SysRoot& sys, dev_t device) {
    // a link to the device's folder in /sys/devices, named as the device: "loop5"
    const Fact<std::string> folder =
        sys.resolve("/sys/dev/block/" + std::to_string(::major(device)) + ":" +
                    std::to_string(::minor(device)));
    if (!folder)
        return "";
    return "/dev/" + folder->substr(folder->rfind('/') + 1);
}

bool autoclears(const SysRoot& sys, const std::string& loop) {
    const std::string name = loop.substr(loop.rfind('/') + 1);
    const Fact<std::string> text = sys.text("/sys/block/" + name + "/loop/autoclear");
    return text && text->substr(0, text->find('\n')) == "1";
}

std::vector<std::string> swap_files(const SysRoot& sys) {
    return swap_file_names(sys.text("/proc/swaps").value.value_or(""));
}

std::vector<std::string> swap_file_names(std::string_view text) {
    std::vector<std::string> names;
    std::istringstream in{std::string(text)};
    std::string line;
    std::getline(in, line); // "Filename Type Size Used Priority"
    while (std::getline(in, line)) {
        std::istringstream fields(line);
        std::string name, type;
        if (fields >> name >> type && type == "file")
            names.push_back(unescaped(name));
    }
    return names;
}

} // namespace rtprov::system
