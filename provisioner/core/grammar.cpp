// SPDX-License-Identifier: Apache-2.0
#include "provisioner/core/grammar.hpp"

#include <algorithm>
#include <string_view>

namespace rtprov::core::grammar {

namespace {

bool alnum(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

// Every character of 'value' is alphanumeric or one of 'extra'.
bool only(std::string_view value, std::string_view extra) {
    return std::all_of(value.begin(), value.end(),
                       [&](char c) { return alnum(c) || extra.find(c) != std::string_view::npos; });
}

std::optional<std::string> broken(bool ok, std::string rule) {
    if (ok)
        return std::nullopt;
    return rule;
}

} // namespace

std::optional<std::string> profile_name(const std::string& value) {
    return broken(!value.empty() && value.size() <= 64 && alnum(value[0]) && only(value, "._-"),
                  "a profile name holds only letters, digits, '.', '_' and '-', starts with a "
                  "letter or digit, and is at most 64 characters");
}

std::optional<std::string> service_key(const std::string& value) {
    return broken(!value.empty() && value.size() <= 64 && alnum(value[0]) && only(value, "_.@-"),
                  "a service key holds only letters, digits, '_', '.', '@' and '-', starts "
                  "with a letter or digit, and is at most 64 characters");
}

std::optional<std::string> service_unit(const std::string& value) {
    const std::string_view suffix = ".service";
    bool ok = value.size() > suffix.size() && value.size() <= 255 && value.ends_with(suffix) &&
              only(value, ":_.\\-@") && std::count(value.begin(), value.end(), '@') <= 1 &&
              value[0] != '@' && value[0] != '.';
    return broken(ok, "a service unit name ends in '.service' and holds only letters, digits, "
                      "':', '_', '.', '\\', '-' and one '@', at most 255 characters "
                      "(systemd.unit(5))");
}

std::optional<std::string> debian_package(const std::string& value) {
    bool ok = value.size() >= 2 && value.size() <= 128 &&
              std::all_of(value.begin(), value.end(),
                          [](char c) {
                              return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' ||
                                     c == '-' || c == '.';
                          }) &&
              alnum(value[0]);
    return broken(ok, "a Debian package name holds only lower-case letters, digits, '+', '-' "
                      "and '.', has at least two characters and starts with a letter or digit "
                      "(Debian Policy 5.6.1)");
}

std::optional<std::string> kernel_parameter(const std::string& value) {
    std::string_view token = value;
    std::size_t equals = token.find('=');
    std::string_view key = token.substr(0, equals);
    bool ok = !key.empty() && token.size() <= 512 && only(key, "_-.") &&
              (equals == std::string_view::npos || only(token.substr(equals + 1), ".,:/=+@%~_-"));
    return broken(ok, "a kernel parameter is KEY or KEY=VALUE, the key of letters, digits, "
                      "'_', '-', '.', the value of letters, digits and . , : / = + @ % ~ _ -");
}

std::optional<std::string> irq_name_glob(const std::string& value) {
    return broken(!value.empty() && value.size() <= 64 && value.front() != ' ' &&
                      value.back() != ' ' && only(value, " _-.:,/+@*?[]!"),
                  "an IRQ name glob holds letters, digits, spaces inside and _ - . : , / + @ * ? "
                  "[ ] !, at most 64 characters");
}

std::optional<std::string> file_name(const std::string& value) {
    return broken(!value.empty() && value.size() <= 64 && value != "." && value != ".." &&
                      only(value, "._+-"),
                  "a file name holds only letters, digits, '.', '_', '+' and '-' (not '.' or "
                  "'..'), at most 64 characters");
}

std::optional<std::string> rpi_model_filter(const std::string& value) {
    static const char* const k_filters[] = {"pi0", "pi0w",  "pi02", "pi1",  "pi2", "pi3",   "pi3+",
                                            "pi4", "pi400", "cm4",  "cm4s", "pi5", "pi500", "cm5"};
    return broken(std::find(std::begin(k_filters), std::end(k_filters), value) !=
                      std::end(k_filters),
                  "a config.txt model filter is one of pi0, pi0w, pi02, pi1, pi2, pi3, pi3+, pi4, "
                  "pi400, cm4, cm4s, pi5, pi500, cm5 (without brackets)");
}

std::optional<std::string> absolute_folder(const std::string& value) {
    bool ok = value.size() > 1 && value.size() <= 256 && value.front() == '/';
    for (std::size_t start = 1; ok && start < value.size();) {
        std::size_t slash = value.find('/', start);
        std::string part = value.substr(start, slash - start);
        ok = !file_name(part) || (part.empty() && slash == std::string::npos);
        start = slash == std::string::npos ? value.size() : slash + 1;
    }
    return broken(ok, "a folder is an absolute path such as '/boot/firmware' whose parts hold "
                      "only letters, digits, '.', '_', '+' and '-' (no '.' or '..')");
}

std::optional<std::string> cpu_governor(const std::string& value) {
    bool ok =
        !value.empty() && value.size() <= 32 && std::all_of(value.begin(), value.end(), [](char c) {
            return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
        });
    return broken(ok, "a governor name such as 'performance' holds only lower-case letters, "
                      "digits and '_'");
}

std::optional<std::string> alsa_pcm_name(const std::string& value) {
    bool ok = !value.empty() && value.size() <= 128 &&
              std::all_of(value.begin(), value.end(), [](char c) {
                  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                         (c >= '0' && c <= '9') ||
                         std::string_view("_-.:,=").find(c) != std::string_view::npos;
              });
    return broken(ok, "an ALSA device name such as 'hw:CARD=DAC,DEV=0' holds only letters, "
                      "digits and _ - . : , = (at most 128)");
}

std::optional<std::string> memlock_size(const std::string& value) {
    std::string_view digits = value;
    if (!digits.empty() && std::string_view("KMGT").find(digits.back()) != std::string_view::npos)
        digits.remove_suffix(1);
    bool number =
        !digits.empty() && digits.size() <= 19 &&
        std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; });
    return broken(value == "infinity" || number,
                  "a memory lock limit is 'infinity' or a size such as '512M' (a whole number "
                  "with K, M, G or T)");
}

std::optional<std::string> kernel_release(const std::string& value) {
    return broken(!value.empty() && value.size() <= 128 && alnum(value[0]) && only(value, "._+~-"),
                  "a kernel release holds only letters, digits, '.', '_', '+', '~' and '-'");
}

std::optional<std::string> text_line(const std::string& value) {
    bool ok = value.size() <= 256 && std::none_of(value.begin(), value.end(), [](char c) {
                  return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
              });
    return broken(ok, "text here is one line of at most 256 characters, without control "
                      "characters");
}

} // namespace rtprov::core::grammar
