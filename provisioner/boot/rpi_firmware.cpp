// SPDX-License-Identifier: Apache-2.0
#include "provisioner/boot/rpi_firmware.hpp"

#include "provisioner/core/text.hpp"

#include <sstream>
#include <vector>

namespace rtprov::boot {

namespace {

constexpr const char* k_begin = "# >>> rtprov";
constexpr const char* k_end = "# <<< rtprov";

// Calls 'line_fn(line, applies, ours)' for each line of config.txt; 'applies' is whether
// the section the line is in applies to the board of model filter 'filter'.
template <typename LineFn>
void walk_config(const std::string& text, const std::string& filter, LineFn line_fn) {
    std::istringstream in(text);
    std::string line;
    bool applies = true, ours = false;
    while (std::getline(in, line)) {
        std::string t(core::trim(line));
        if (t.rfind(k_begin, 0) == 0)
            ours = true;
        if (!t.empty() && t.front() == '[' && t.back() == ']')
            applies = t == "[all]" || t == "[" + filter + "]";
        line_fn(t, applies, ours);
        if (t.rfind(k_end, 0) == 0)
            ours = false;
    }
}

} // namespace

FirmwareSettings parse_config_txt(const std::string& text, const std::string& filter) {
    FirmwareSettings settings;
    walk_config(text, filter, [&](const std::string& t, bool applies, bool) {
        if (!applies)
            return;
        if (t.rfind("cmdline=", 0) == 0)
            settings.cmdline_file = std::string(core::trim(t.substr(8)));
        else if (t.rfind("os_prefix=", 0) == 0)
            settings.os_prefix = std::string(core::trim(t.substr(10)));
    });
    return settings;
}

std::string cmdline_txt_path(const std::string& firmware_dir, const FirmwareSettings& settings) {
    return firmware_dir + "/" + settings.os_prefix + settings.cmdline_file;
}

std::string initramfs_for(const std::string& kernel_image) {
    std::string stem = kernel_image;
    if (stem.size() > 4 && stem.ends_with(".img"))
        stem.resize(stem.size() - 4);
    if (stem.rfind("kernel", 0) == 0)
        stem = stem.substr(6);
    return "initramfs" + stem;
}

std::string edit_config_txt(const std::string& text, const std::optional<std::string>& rt_image,
                            const std::string& profile_name, const std::string& filter) {
    std::string out;
    std::istringstream in(text);
    std::string line;
    bool inside = false;
    while (std::getline(in, line)) {
        std::string t(core::trim(line));
        if (t.rfind(k_begin, 0) == 0)
            inside = true;
        if (!inside)
            out += line + "\n";
        if (t.rfind(k_end, 0) == 0)
            inside = false;
    }
    // A file without a final newline keeps that property unless rtprov appends.
    if (!text.empty() && text.back() != '\n' && !out.empty())
        out.pop_back();
    if (!rt_image)
        return out;
    if (!out.empty() && out.back() != '\n')
        out += "\n";
    // Every line stays under config.txt's 98-character limit (Raspberry Pi documentation,
    // computers/config_txt/what_is_config_txt.adoc).
    out += std::string(k_begin) + " (profile '" + profile_name + "'): boot the PREEMPT_RT kernel\n";
    out += "[" + filter + "]\n";
    out += "kernel=" + *rt_image + "\n";
    out += "initramfs " + initramfs_for(*rt_image) + " followkernel\n";
    out += "[all]\n";
    out += std::string(k_end) + "\n";
    return out;
}

std::vector<std::string> foreign_kernel_lines(const std::string& text, const std::string& filter) {
    std::vector<std::string> lines;
    walk_config(text, filter, [&](const std::string& t, bool applies, bool ours) {
        if (applies && !ours && t.rfind("kernel=", 0) == 0)
            lines.push_back(t);
    });
    return lines;
}

} // namespace rtprov::boot
