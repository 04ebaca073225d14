// SPDX-License-Identifier: Apache-2.0
#include "provisioner/boot/loader.hpp"

#include <algorithm>
#include <stdexcept>

namespace rtprov::boot {

// The rows, one file each.
const Loader& rpi_firmware_loader(); // boot/rpi_firmware_loader.cpp
const Loader& grub_loader();         // boot/grub_loader.cpp
const Loader& systemd_boot_loader(); // boot/systemd_boot_loader.cpp

std::span<const Loader* const> loaders() {
    static const Loader* const table[] = {
        &rpi_firmware_loader(),
        &grub_loader(),
        &systemd_boot_loader(),
    };
    return table;
}

const Loader& loader(core::BootLoader id) {
    auto rows = loaders();
    auto row = std::find_if(rows.begin(), rows.end(), [&](const Loader* l) { return l->id == id; });
    if (row == rows.end())
        throw std::logic_error("boot loader '" + core::to_string(id) +
                               "' has no row in boot::loaders()");
    return **row;
}

const Loader* find_loader(std::string_view name) {
    for (const Loader* l : loaders())
        if (l->name() == name)
            return l;
    return nullptr;
}

} // namespace rtprov::boot
