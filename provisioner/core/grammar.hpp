// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <optional>
#include <string>

// The rules a value must follow before rtprov puts it into a file, a unit, a path or a
// command: one function per kind of value. Each returns nullopt when 'value' follows
// its rule, else the rule in words, for a message that names the key and the rule
// ("'board.kernel.rt_packages' item 'a;b' is not ...: <rule>"). Pure.
namespace rtprov::core::grammar {

// A profile's name, which rtprov writes into the header of every file it owns:
// letters, digits, '.', '_', '-', starting with a letter or digit; at most 64.
std::optional<std::string> profile_name(const std::string& value);

// A key under tuning.services (and the default unit '<key>.service'): letters, digits,
// '_', '.', '@', '-', starting with a letter or digit; at most 64.
std::optional<std::string> service_key(const std::string& value);

// A service unit name as systemd defines unit names (systemd.unit(5), "unit names"): at
// most 255 characters of letters, digits, ':', '_', '.', '\', '-', and one '@' for a
// template or instance, ending in '.service' with a non-empty name before it.
std::optional<std::string> service_unit(const std::string& value);

// A Debian package name (Debian Policy 5.6.1): lower-case letters, digits, '+', '-' and
// '.', at least two characters, starting with a letter or digit.
std::optional<std::string> debian_package(const std::string& value);

// A kernel command-line token 'key' or 'key=value' that rtprov writes: a key of
// letters, digits, '_', '-', '.' (Documentation/admin-guide/kernel-parameters.rst:
// 'module.param', dashes and underscores alike), a value of letters, digits and
// . , : / = + @ % ~ _ -  — no quotes, spaces or shell syntax: tokens go into cmdline.txt
// and into the shell text of GRUB's drop-in, which update-grub sources as root.
std::optional<std::string> kernel_parameter(const std::string& value);

// A file name of the boot partition (board.kernel.rt_image, board.boot.cmdline_file):
// letters, digits, '.', '_', '+', '-'; not '.' or '..'; at most 64.
std::optional<std::string> file_name(const std::string& value);

// A model filter of the Raspberry Pi firmware's config.txt, without its brackets
// (raspberrypi/documentation, computers/config_txt/conditional.adoc): pi0, pi0w, pi02,
// pi1, pi2, pi3, pi3+, pi4, pi400, cm4, cm4s, pi5, pi500, cm5.
std::optional<std::string> rpi_model_filter(const std::string& value);

// An absolute folder inside the target (board.boot.firmware_dir): '/' and names that
// follow file_name(), no '.' or '..' parts.
std::optional<std::string> absolute_folder(const std::string& value);

// A cpufreq governor name ('performance', 'schedutil'): lower-case letters, digits and
// '_'; at most 32. It goes into a shell command of rtprov's governor unit.
std::optional<std::string> cpu_governor(const std::string& value);

// LimitMEMLOCK= as rtprov writes it (systemd.exec(5)): 'infinity', or a whole number
// with an optional K, M, G or T (base 1024).
std::optional<std::string> memlock_size(const std::string& value);

// A kernel release as in /boot/vmlinuz-<release> ('6.12.117+deb13-amd64'): letters,
// digits, '.', '_', '+', '~', '-'; at most 128. It becomes an argument of kernel-install.
std::optional<std::string> kernel_release(const std::string& value);

// A glob for the name of an IRQ handler as /proc/interrupts and /sys/kernel/irq/N/actions
// show it ('xhci_hcd', 'DMA IRQ', 'dwc_otg*'): letters, digits, spaces inside, and
// _ - . : , / + @ * ? [ ] !; at most 64. It goes into an ExecStart= in double quotes.
std::optional<std::string> irq_name_glob(const std::string& value);

// An ALSA PCM name as alsa-lib's configuration names devices ('hw:CARD=DAC,DEV=0',
// 'hw:1,0', 'plughw:Loopback', 'pipewire', 'default'; alsa-lib's pcm(5) names and
// snd_pcm_open(3)): letters, digits and _ - . : , =; at most 128. It goes into a
// command line of rtprov's first boot.
std::optional<std::string> alsa_pcm_name(const std::string& value);

// One line of text for messages and listings (description, board.model, match
// patterns): no control characters; at most 256.
std::optional<std::string> text_line(const std::string& value);

} // namespace rtprov::core::grammar
