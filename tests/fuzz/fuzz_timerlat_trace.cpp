// SPDX-License-Identifier: Apache-2.0
// Fuzz target: timerlat trace text (selftest::TimerlatAnalysis). Anything the kernel or a
// hostile tracefs could put in the instance's trace_pipe must be read without a crash, and
// each CPU's figures must add up: the worst wake-up's latency is the histogram's maximum.
#include "provisioner/selftest/timerlat_trace.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    rtprov::selftest::TimerlatAnalysis analysis(1'000'000, 4, 100,
                                                rtprov::core::CpuList::range(0, 3));
    analysis.add_text(text);
    for (const auto& [cpu, core] : analysis.cores()) {
        if (core.histogram.empty())
            continue;
        if (!core.worst || core.worst->thread_latency_ns != core.histogram.max_ns())
            __builtin_trap();
        (void)core.worst->main_part();
        (void)core.worst->rest_ns();
    }
    return 0;
}
