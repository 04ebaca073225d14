// SPDX-License-Identifier: Apache-2.0
// Fuzz target: a kernel config, /boot/config-<version> (boot::parse_kernel_config), and
// the feature check that reads it (boot::kernel_support).
#include "provisioner/boot/kernel_config.hpp"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    rtprov::core::InstalledKernel kernel;
    kernel.version = "6.12.117+deb13-amd64";
    kernel.has_image = true;
    kernel.config = rtprov::boot::parse_kernel_config(text);
    for (const auto& [option, value] : *kernel.config)
        if (option.rfind("CONFIG_", 0) != 0 || option.find('\n') != std::string::npos ||
            value.find('\n') != std::string::npos)
            __builtin_trap();
    (void)rtprov::boot::kernel_support({kernel}, "CONFIG_NO_HZ_FULL");
    return 0;
}
