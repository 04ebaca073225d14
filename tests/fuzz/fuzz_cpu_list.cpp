// SPDX-License-Identifier: Apache-2.0
// Fuzz target: a kernel CPU list (core::parse_cpu_list). Invariants: a parsed list's
// canonical form parses back to the same list, and the set operations agree.
#include "provisioner/core/cpu_list.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using rtprov::core::CpuList;
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const auto list = rtprov::core::parse_cpu_list(text);
    if (!list)
        return 0;
    const std::string canonical = list->to_string();
    const auto again = rtprov::core::parse_cpu_list(canonical);
    if (!again || *again != *list || again->to_string() != canonical)
        __builtin_trap();

    const CpuList other = CpuList::range(2, 5);
    if (list->minus(other).union_with(list->intersection(other)) != *list)
        __builtin_trap();
    return 0;
}
