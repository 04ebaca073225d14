// SPDX-License-Identifier: Apache-2.0
// Fuzz target: Raspberry Pi firmware config.txt (boot::parse_config_txt,
// boot::foreign_kernel_lines, boot::edit_config_txt). Invariants: editing is idempotent
// (a second apply changes nothing), and on a config.txt without an rtprov block that ends
// in a newline (or is empty), adding the block and removing it again gives back every
// byte (config.txt is not rtprov's). A file without a final newline gets one with the
// block; plan() gives it back without (boot_plan.cpp compares with the original), so
// that case is not this function's to keep.
#include "provisioner/boot/rpi_firmware.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    const auto settings = rtprov::boot::parse_config_txt(text, "pi4");
    (void)rtprov::boot::cmdline_txt_path("/boot/firmware", settings);
    (void)rtprov::boot::foreign_kernel_lines(text, "pi5");

    const std::optional<std::string> rt_image = "kernel8_rt.img";
    const std::string with_block = rtprov::boot::edit_config_txt(text, rt_image, "pi4", "pi4");
    if (rtprov::boot::edit_config_txt(with_block, rt_image, "pi4", "pi4") != with_block)
        __builtin_trap();
    const std::string without_block =
        rtprov::boot::edit_config_txt(with_block, std::nullopt, "pi4", "pi4");
    const bool had_block = text.find("# >>> rtprov") != std::string::npos ||
                           text.find("# <<< rtprov") != std::string::npos;
    const bool ends_in_newline = text.empty() || text.back() == '\n';
    if (!had_block && ends_in_newline && without_block != text)
        __builtin_trap();
    return 0;
}
