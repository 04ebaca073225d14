// SPDX-License-Identifier: Apache-2.0
#include "provisioner/selftest/latency_histogram.hpp"

#include "provisioner/selftest/single_writer.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace rtprov::selftest {

namespace {

constexpr std::uint64_t k_ppm = 1'000'000; // percentiles are counted in parts per million

// ceil(count * ppm / 10^6) without overflow: count = q * 10^6 + r.
std::uint64_t rank_for(std::uint64_t count, std::uint64_t ppm) {
    const std::uint64_t q = count / k_ppm;
    const std::uint64_t r = count % k_ppm;
    return q * ppm + (r * ppm + k_ppm - 1) / k_ppm;
}

template <typename T> void store(T& field, T value) noexcept {
    relaxed_store(field, value);
}
template <typename T> T load(const T& field) noexcept {
    return relaxed_load(field);
}

} // namespace

LatencyHistogram::LatencyHistogram(std::uint32_t limit_us)
    : m_limit_us(limit_us), m_buckets(std::size_t{limit_us} + 1, 0) {}

void LatencyHistogram::add(std::int64_t latency_ns) noexcept {
    const std::int64_t ns = std::max<std::int64_t>(latency_ns, 0);
    // ceil(ns / 1000): bucket k holds (k-1 µs, k µs].
    const std::uint64_t bucket = (static_cast<std::uint64_t>(ns) + 999) / 1000;
    if (bucket <= m_limit_us)
        store(m_buckets[bucket], load(m_buckets[bucket]) + 1);
    else
        store(m_overflow, load(m_overflow) + 1);
    const std::uint64_t count = load(m_count);
    if (count == 0 || ns < load(m_min_ns))
        store(m_min_ns, ns);
    if (count == 0 || ns > load(m_max_ns))
        store(m_max_ns, ns);
    // saturates rather than wraps: 292 years of latency, which no run reaches
    std::int64_t sum = 0;
    if (__builtin_add_overflow(load(m_sum_ns), ns, &sum))
        sum = std::numeric_limits<std::int64_t>::max();
    store(m_sum_ns, sum);
    store(m_count, count + 1);
}

LatencyHistogram LatencyHistogram::snapshot() const {
    LatencyHistogram copy(m_limit_us);
    // The count is the buckets' sum, so that the percentiles of the copy add up whatever
    // add() did while the buckets were read.
    for (std::size_t k = 0; k < m_buckets.size(); ++k)
        copy.m_count += copy.m_buckets[k] = load(m_buckets[k]);
    copy.m_overflow = load(m_overflow);
    copy.m_count += copy.m_overflow;
    copy.m_min_ns = load(m_min_ns);
    copy.m_max_ns = load(m_max_ns);
    copy.m_sum_ns = load(m_sum_ns);
    return copy;
}

void LatencyHistogram::merge(const LatencyHistogram& other) {
    if (other.m_limit_us != m_limit_us)
        throw std::invalid_argument("cannot merge latency histograms with limits " +
                                    std::to_string(m_limit_us) + " and " +
                                    std::to_string(other.m_limit_us) + " µs");
    if (other.m_count == 0)
        return;
    for (std::size_t k = 0; k < m_buckets.size(); ++k)
        m_buckets[k] += other.m_buckets[k];
    m_overflow += other.m_overflow;
    m_min_ns = m_count == 0 ? other.m_min_ns : std::min(m_min_ns, other.m_min_ns);
    m_max_ns = m_count == 0 ? other.m_max_ns : std::max(m_max_ns, other.m_max_ns);
    m_sum_ns += other.m_sum_ns;
    m_count += other.m_count;
}

LatencyHistogram LatencyHistogram::from_counts(std::uint32_t limit_us,
                                               std::vector<std::uint64_t> buckets,
                                               std::uint64_t overflow, std::int64_t min_ns,
                                               std::int64_t max_ns, std::int64_t sum_ns) {
    if (buckets.size() != std::size_t{limit_us} + 1)
        throw std::invalid_argument("a histogram up to " + std::to_string(limit_us) + " µs has " +
                                    std::to_string(limit_us + 1) + " buckets, not " +
                                    std::to_string(buckets.size()));
    LatencyHistogram h(0);
    h.m_limit_us = limit_us;
    h.m_buckets = std::move(buckets);
    h.m_overflow = overflow;
    for (std::uint64_t n : h.m_buckets)
        h.m_count += n;
    h.m_count += overflow;
    h.m_min_ns = min_ns;
    h.m_max_ns = max_ns;
    h.m_sum_ns = sum_ns;
    return h;
}

double LatencyHistogram::avg_ns() const {
    if (m_count == 0)
        return 0.0;
    return static_cast<double>(m_sum_ns) / static_cast<double>(m_count);
}

std::int64_t LatencyHistogram::percentile_ns(double percent) const {
    assert(percent > 0.0 && percent <= 100.0);
    if (m_count == 0)
        return 0;
    const auto ppm = static_cast<std::uint64_t>(
        std::clamp<long long>(std::llround(percent * 10'000.0), 1, static_cast<long long>(k_ppm)));
    const std::uint64_t rank = rank_for(m_count, ppm); // 1..count
    std::uint64_t at_or_below = 0;
    for (std::size_t k = 0; k < m_buckets.size(); ++k) {
        at_or_below += m_buckets[k];
        if (at_or_below >= rank)
            return std::min(static_cast<std::int64_t>(k) * 1000, m_max_ns);
    }
    return m_max_ns; // the rank lies in the overflow bucket
}

std::uint64_t LatencyHistogram::count_above(std::uint32_t threshold_us) const {
    if (threshold_us >= m_limit_us)
        return m_max_ns > std::int64_t{threshold_us} * 1000 ? m_overflow : 0;
    // A sample is above T µs exactly when its bucket ceil(ns / 1000) is above T.
    std::uint64_t above = m_overflow;
    for (std::size_t k = std::size_t{threshold_us} + 1; k < m_buckets.size(); ++k)
        above += m_buckets[k];
    return above;
}

} // namespace rtprov::selftest
