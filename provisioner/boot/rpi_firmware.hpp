// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/boot/cmdline.hpp"

#include <optional>
#include <string>

// Raspberry Pi firmware boot files: config.txt and cmdline.txt (Raspberry Pi documentation,
// computers/config_txt/ and computers/configuration/kernel-command-line-config.adoc).
namespace rtprov::boot {

// 'filter' below is the board's model filter without brackets (board.boot.config_filter:
// "pi4", "pi5"); the sections that apply to the board are those before any filter, [all]
// and [<filter>] (conditional.adoc: [all] resets the filters). A section of a filter that
// also matches the board ([pi400] on a Pi 400, which sees [pi4] too) is not counted.

// What config.txt says about where the command line is: the last 'cmdline=' and
// 'os_prefix=' in sections that apply to the board.
struct FirmwareSettings {
    std::string cmdline_file = "cmdline.txt";
    std::string os_prefix;
};

FirmwareSettings parse_config_txt(const std::string& text, const std::string& filter);

// In-root path of the command-line file: '<dir>/<os_prefix><cmdline_file>'.
std::string cmdline_txt_path(const std::string& firmware_dir, const FirmwareSettings& settings);

// The trial (apply --trial): tryboot.txt, which the firmware reads instead of config.txt
// for one boot after 'reboot "0 tryboot"' (the flag clears itself), and the command line
// its cmdline= names (read, as cmdline.txt is, below os_prefix).
inline constexpr const char* k_rpi_tryboot = "tryboot.txt";
inline constexpr const char* k_rpi_trial_cmdline = "rtprov-trial-cmdline.txt";

// The firmware reads at most 1024 characters of command line and prepends its own
// (raspberrypi/linux#140); past this, plan warns.
inline constexpr std::size_t k_cmdline_warn_length = 900;

// The kernel= image's matching initramfs: 'kernel8_rt.img' -> 'initramfs8_rt'.
std::string initramfs_for(const std::string& kernel_image);

// config.txt with rtprov's block removed and, when 'rt_image' is given, a block that
// boots it on the board appended:
//   # >>> rtprov ...
//   [pi4]                       ('filter')
//   kernel=kernel8_rt.img
//   initramfs initramfs8_rt followkernel
//   [all]
//   # <<< rtprov
// so later lines still land in [all]. Every other byte is kept.
std::string edit_config_txt(const std::string& text, const std::optional<std::string>& rt_image,
                            const std::string& profile_name, const std::string& filter);

// 'kernel=' lines outside rtprov's block in sections that apply to the board.
std::vector<std::string> foreign_kernel_lines(const std::string& text, const std::string& filter);

} // namespace rtprov::boot
