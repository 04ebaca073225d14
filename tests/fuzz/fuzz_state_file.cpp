// SPDX-License-Identifier: Apache-2.0
// Fuzz target: rtprov's state file (target::parse_state). Each input is tried twice: as
// it is, and with its checksum lines replaced by a right one, so that mutations reach
// the entries behind the checksum. Refusals (rtprov::Error) are fine; a state that
// parses must come back from serialize_state(): parse(serialize(s)) == s.
#include "provisioner/core/error.hpp"
#include "provisioner/core/sha256.hpp"
#include "provisioner/target/state_file.hpp"

#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

namespace {

// 'text' without its 'checksum' lines, ending in the checksum parse_state() expects: over
// every line from the first that is neither empty nor a comment.
std::string with_right_checksum(const std::string& text) {
    std::istringstream in(text);
    std::string line, out, body;
    bool started = false;
    while (std::getline(in, line)) {
        if (line.rfind("checksum", 0) == 0)
            continue;
        out += line + "\n";
        if (!started && !line.empty() && line[0] != '#')
            started = true;
        if (started)
            body += line + "\n";
    }
    return out + "checksum " + rtprov::core::sha256_hex(body) + "\n";
}

void check(const std::string& text) {
    rtprov::target::State state;
    try {
        state = rtprov::target::parse_state(text, "state");
    } catch (const rtprov::Error&) {
        return;
    }
    try {
        if (rtprov::target::parse_state(rtprov::target::serialize_state(state), "state") != state)
            __builtin_trap();
    } catch (const rtprov::Error&) {
        __builtin_trap(); // serialize_state() wrote a file parse_state() refuses
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    check(text);
    check(with_right_checksum(text));
    return 0;
}
