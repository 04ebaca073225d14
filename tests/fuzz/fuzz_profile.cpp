// SPDX-License-Identifier: Apache-2.0
// Fuzz target: a resolved profile's text (profile::parse_profile). A refusal
// (rtprov::Error) is a fine outcome; a crash, hang, leak or memory blow-up is a bug, and
// so is a profile that parses but does not come back from to_yaml() (the header's
// promise: parse_profile(to_yaml(p)) gives p back).
#include "provisioner/core/error.hpp"
#include "provisioner/profile/profile_loader.hpp"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    std::string yaml;
    try {
        yaml = rtprov::profile::to_yaml(rtprov::profile::parse_profile(text, "fuzz.yaml"));
    } catch (const rtprov::Error&) {
        return 0;
    }
    try {
        if (rtprov::profile::to_yaml(rtprov::profile::parse_profile(yaml, "fuzz.yaml")) != yaml)
            __builtin_trap();
    } catch (const rtprov::Error&) {
        __builtin_trap(); // to_yaml() wrote a profile parse_profile() refuses
    }
    return 0;
}
