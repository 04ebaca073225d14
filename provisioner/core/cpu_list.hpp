// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/core/result.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rtprov::core {

// A set of CPU numbers as the kernel writes them in cmdline parameters and sysfs:
// "0-1,3", "2-3", "" (empty). Ordered, duplicate free.
class CpuList {
  public:
    static constexpr unsigned k_max_cpu = 4095; // NR_CPUS on arm64 and x86 defconfigs

    CpuList() = default;
    explicit CpuList(std::vector<unsigned> cpus);

    // Range 'first'..'last' inclusive.
    static CpuList range(unsigned first, unsigned last);

    bool empty() const { return m_cpus.empty(); }
    std::size_t size() const { return m_cpus.size(); }
    const std::vector<unsigned>& cpus() const { return m_cpus; }
    bool contains(unsigned cpu) const;
    std::optional<unsigned> max() const;

    CpuList intersection(const CpuList& other) const;
    CpuList union_with(const CpuList& other) const;
    CpuList minus(const CpuList& other) const;

    // Canonical kernel form: ascending ranges, "0-1,3". Empty list gives "".
    std::string to_string() const;
    // The kernel's hex bitmap (cpumask_parse(), lib/bitmap-str.c): 32-bit words, most
    // significant first, joined by ',' ("7" for 0-2, "1,00000001" for 0,32; "0" empty).
    std::string to_mask() const;

    friend bool operator==(const CpuList&, const CpuList&) = default;

  private:
    std::vector<unsigned> m_cpus;
};

// Parses a kernel CPU list ("0-2,5", "3", "1,2"). Whitespace around items is allowed.
// On failure the problem says what is wrong, e.g. "range '3-1' runs backwards". An empty
// string is an empty list.
Result<CpuList> parse_cpu_list(std::string_view text);

// Parses the kernel's hex bitmap as CpuList::to_mask writes it and cpumask files show it
// ("f", "00000000,0000000f"): 32-bit words of at most 8 hex digits, most significant first.
// A bit beyond k_max_cpu is a problem.
Result<CpuList> parse_cpu_mask(std::string_view text);

} // namespace rtprov::core
