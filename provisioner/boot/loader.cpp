// SPDX-License-Identifier: Apache-2.0
#include "provisioner/boot/loader.hpp"

#include <algorithm>
#include <stdexcept>

namespace rtprov::boot {

// The rows, one file each.
const Loader& rpi_firmware_loader();   // boot/rpi_firmware_loader.cpp
const Loader& grub_loader();           // boot/grub_loader.cpp
const Loader& systemd_boot_loader();   // boot/systemd_boot_loader.cpp
const Loader& raspi_firmware_loader(); // boot/raspi_firmware_loader.cpp

std::span<const Loader* const> loaders() {
    static const Loader* const table[] = {
        &rpi_firmware_loader(),
        &grub_loader(),
        &systemd_boot_loader(),
        &raspi_firmware_loader(),
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

const Loader& loader_for(const core::Profile& profile, const TargetReader& reader) {
    for (const Loader* l : loaders())
        if (l->flavour_of == profile.board.boot.loader && l->detect && l->detect(reader))
            return *l;
    return loader(profile.board.boot.loader);
}

const Loader& loader_for(const core::Profile& profile, const core::TargetFacts& facts) {
    return loader(facts.boot_loader.value_or(profile.board.boot.loader));
}

} // namespace rtprov::boot
