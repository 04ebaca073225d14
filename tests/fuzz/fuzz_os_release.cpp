// SPDX-License-Identifier: Apache-2.0
// Fuzz target: os-release(5) text (core::parse_os_release), which ignores what it does
// not understand; any crash, hang or leak is a bug.
#include "provisioner/core/os_release.hpp"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    const rtprov::core::OsRelease os = rtprov::core::parse_os_release(text);
    for (const std::string& word : os.id_like)
        if (word.empty())
            __builtin_trap(); // ID_LIKE is split into words
    return 0;
}
