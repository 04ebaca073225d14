// SPDX-License-Identifier: Apache-2.0
// Fuzz target: a kept self-test report read back (cli::read_selftest_json, with
// core::parse_json under it). Refusals (rtprov::Error) are fine; a report that reads must
// write the JSON it reads back as: read(write(read(x))) writes write(read(x)) again.
#include "provisioner/cli/selftest_render.hpp"
#include "provisioner/core/error.hpp"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    rtprov::selftest::SelftestReport report;
    try {
        report = rtprov::cli::read_selftest_json(text, "report.json");
    } catch (const rtprov::Error&) {
        return 0;
    }
    const std::string json = rtprov::cli::selftest_json(report);
    try {
        if (rtprov::cli::selftest_json(rtprov::cli::read_selftest_json(json, "again.json")) != json)
            __builtin_trap();
    } catch (const rtprov::Error&) {
        __builtin_trap(); // selftest_json() wrote a report read_selftest_json() refuses
    }
    (void)rtprov::cli::selftest_text(report);
    (void)rtprov::cli::selftest_html(report, {});
    return 0;
}
