// SPDX-License-Identifier: Apache-2.0
// Fuzz target: one '--set' override (the input, as given after '--set') applied to the
// built-in profile 'pi4' from the source tree's board-profiles/ (profile::load_profile).
// A refusal (rtprov::Error) is fine; a crash, hang, leak or memory blow-up is a bug.
#include "provisioner/core/error.hpp"
#include "provisioner/profile/profile_loader.hpp"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const rtprov::profile::SearchPath k_search_path = {
        {RTPROV_SOURCE_DIR "/board-profiles", "built-in"}};
    const rtprov::profile::Override override{
        std::string(reinterpret_cast<const char*>(data), size)};
    try {
        rtprov::profile::load_profile("pi4", k_search_path, {override});
    } catch (const rtprov::Error&) {
    }
    return 0;
}
