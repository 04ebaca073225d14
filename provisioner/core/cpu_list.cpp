// SPDX-License-Identifier: Apache-2.0
#include "provisioner/core/cpu_list.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdio>

namespace rtprov::core {

CpuList::CpuList(std::vector<unsigned> cpus) : m_cpus(std::move(cpus)) {
    std::sort(m_cpus.begin(), m_cpus.end());
    m_cpus.erase(std::unique(m_cpus.begin(), m_cpus.end()), m_cpus.end());
}

CpuList CpuList::range(unsigned first, unsigned last) {
    std::vector<unsigned> cpus;
    for (unsigned cpu = first; cpu <= last; ++cpu)
        cpus.push_back(cpu);
    return CpuList(std::move(cpus));
}

bool CpuList::contains(unsigned cpu) const {
    return std::binary_search(m_cpus.begin(), m_cpus.end(), cpu);
}

std::optional<unsigned> CpuList::max() const {
    if (m_cpus.empty())
        return std::nullopt;
    return m_cpus.back();
}

CpuList CpuList::intersection(const CpuList& other) const {
    std::vector<unsigned> out;
    std::set_intersection(m_cpus.begin(), m_cpus.end(), other.m_cpus.begin(), other.m_cpus.end(),
                          std::back_inserter(out));
    return CpuList(std::move(out));
}

CpuList CpuList::union_with(const CpuList& other) const {
    std::vector<unsigned> out;
    std::set_union(m_cpus.begin(), m_cpus.end(), other.m_cpus.begin(), other.m_cpus.end(),
                   std::back_inserter(out));
    return CpuList(std::move(out));
}

CpuList CpuList::minus(const CpuList& other) const {
    std::vector<unsigned> out;
    std::set_difference(m_cpus.begin(), m_cpus.end(), other.m_cpus.begin(), other.m_cpus.end(),
                        std::back_inserter(out));
    return CpuList(std::move(out));
}

std::string CpuList::to_mask() const {
    std::vector<std::uint32_t> words(max().value_or(0) / 32 + 1, 0);
    for (unsigned cpu : m_cpus)
        words[cpu / 32] |= std::uint32_t(1) << (cpu % 32);
    std::string out;
    char word[16];
    for (std::size_t i = words.size(); i-- > 0;) {
        std::snprintf(word, sizeof word, out.empty() ? "%x" : "%08x", unsigned(words[i]));
        out += (out.empty() ? "" : ",") + std::string(word);
    }
    return out;
}

std::string CpuList::to_string() const {
    std::string out;
    std::size_t i = 0;
    while (i < m_cpus.size()) {
        std::size_t j = i;
        while (j + 1 < m_cpus.size() && m_cpus[j + 1] == m_cpus[j] + 1)
            ++j;
        if (!out.empty())
            out += ',';
        out += std::to_string(m_cpus[i]);
        if (j > i)
            out += '-' + std::to_string(m_cpus[j]);
        i = j + 1;
    }
    return out;
}

namespace {

// blanks only: a CR is not one in a CPU list
std::string_view trim_blanks(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
        s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
        s.remove_suffix(1);
    return s;
}

std::optional<unsigned> parse_cpu(std::string_view text, std::string& error) {
    unsigned value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size()) {
        error = "'" + std::string(text) + "' is not a CPU number";
        return std::nullopt;
    }
    if (value > CpuList::k_max_cpu) {
        error = "CPU " + std::string(text) + " is beyond the kernel's limit of " +
                std::to_string(CpuList::k_max_cpu);
        return std::nullopt;
    }
    return value;
}

std::optional<CpuList> parse(std::string_view text, std::string& error) {
    // A set of at most k_max_cpu + 1 bits, however many times a range repeats: a list of
    // 18000 ranges '0-4095' would otherwise be 73 million numbers before they are merged.
    std::vector<bool> seen(CpuList::k_max_cpu + 1, false);
    text = trim_blanks(text);
    if (text.empty())
        return CpuList();
    std::size_t start = 0;
    while (start <= text.size()) {
        std::size_t comma = text.find(',', start);
        if (comma == std::string_view::npos)
            comma = text.size();
        std::string_view item = trim_blanks(text.substr(start, comma - start));
        if (item.empty()) {
            error = "empty item in CPU list '" + std::string(text.substr(0, 80)) +
                    (text.size() > 80 ? "...'" : "'");
            return std::nullopt;
        }
        std::size_t dash = item.find('-');
        if (dash == std::string_view::npos) {
            auto cpu = parse_cpu(item, error);
            if (!cpu)
                return std::nullopt;
            seen[*cpu] = true;
        } else {
            auto first = parse_cpu(trim_blanks(item.substr(0, dash)), error);
            if (!first)
                return std::nullopt;
            auto last = parse_cpu(trim_blanks(item.substr(dash + 1)), error);
            if (!last)
                return std::nullopt;
            if (*last < *first) {
                error = "range '" + std::string(item) + "' runs backwards";
                return std::nullopt;
            }
            for (unsigned cpu = *first; cpu <= *last; ++cpu)
                seen[cpu] = true;
        }
        start = comma + 1;
    }
    std::vector<unsigned> cpus;
    for (unsigned cpu = 0; cpu <= CpuList::k_max_cpu; ++cpu)
        if (seen[cpu])
            cpus.push_back(cpu);
    return CpuList(std::move(cpus));
}

} // namespace

Result<CpuList> parse_cpu_list(std::string_view text) {
    std::string error;
    if (std::optional<CpuList> list = parse(text, error))
        return {std::move(*list), {}, false};
    return Result<CpuList>::failed(std::move(error));
}

Result<CpuList> parse_cpu_mask(std::string_view text) {
    text = trim_blanks(text);
    const std::string shown =
        "'" + std::string(text.substr(0, 80)) + (text.size() > 80 ? "...'" : "'");
    if (text.empty())
        return Result<CpuList>::failed("an empty CPU mask");
    std::vector<std::string_view> words;
    for (std::size_t start = 0;;) {
        const std::size_t comma = text.find(',', start);
        words.push_back(
            text.substr(start, comma == std::string_view::npos ? comma : comma - start));
        if (comma == std::string_view::npos)
            break;
        start = comma + 1;
    }
    std::vector<unsigned> cpus;
    for (std::size_t i = 0; i < words.size(); ++i) {
        const std::string_view word = words[i];
        std::uint32_t value = 0;
        auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), value, 16);
        if (word.empty() || word.size() > 8 || ec != std::errc() ||
            end != word.data() + word.size())
            return Result<CpuList>::failed(shown + " is not a hex CPU mask");
        const std::size_t base = (words.size() - 1 - i) * 32;
        for (unsigned bit = 0; bit < 32; ++bit) {
            if (!(value & (std::uint32_t(1) << bit)))
                continue;
            if (base + bit > CpuList::k_max_cpu)
                return Result<CpuList>::failed(shown +
                                               " names a CPU beyond the kernel's limit of " +
                                               std::to_string(CpuList::k_max_cpu));
            cpus.push_back(unsigned(base + bit));
        }
    }
    return {CpuList(std::move(cpus)), {}, false};
}

} // namespace rtprov::core
