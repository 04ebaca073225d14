// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <vector>

namespace rtprov::selftest {

// Wake-up latencies of one measuring thread: 1-µs buckets up to a limit plus an overflow
// bucket, with the exact count, minimum, maximum and sum kept beside them.
//
// Bucketing: a sample of 'ns' nanoseconds goes into bucket ceil(ns / 1000), so bucket k
// holds the samples in (k-1 µs, k µs] and every sample in buckets 0..k is at or below
// k µs. Samples above the limit go into the overflow bucket. Negative samples (a clock
// that went backwards) count as 0.
//
// Percentile rule: percentile_ns(p) is the smallest bucket upper bound (k µs) such that at
// least p % of the samples are at or below it, capped at the exact maximum; when that
// bound would lie in the overflow bucket it is the exact maximum. It is therefore never
// below the true p-th percentile and at most 1 µs above it (inside the limit).
//
// add() never allocates: every bucket is allocated (and written) by the constructor.
//
// One thread adds while another may take a snapshot(): every field is a single writer's
// (single_writer.hpp). A snapshot may be a sample or two out of step between its fields,
// never torn within one.
class LatencyHistogram {
  public:
    static constexpr std::uint32_t k_default_limit_us = 10'000;

    // Buckets 0..'limit_us' µs and the overflow bucket.
    explicit LatencyHistogram(std::uint32_t limit_us = k_default_limit_us);

    // Records one sample. No allocation, no I/O. One thread at a time.
    void add(std::int64_t latency_ns) noexcept;

    // A copy taken while another thread may be in add() (see above). Allocates.
    LatencyHistogram snapshot() const;

    // A histogram with these buckets (0..limit_us, as buckets() gives them) and exact
    // figures, as a report keeps them; the count is the buckets' sum. Throws
    // std::invalid_argument when 'buckets' does not hold limit_us + 1 counts.
    static LatencyHistogram from_counts(std::uint32_t limit_us, std::vector<std::uint64_t> buckets,
                                        std::uint64_t overflow, std::int64_t min_ns,
                                        std::int64_t max_ns, std::int64_t sum_ns);

    // Adds every sample of 'other'. Throws std::invalid_argument when the limits differ
    // (a bug in the caller: the buckets would not line up).
    void merge(const LatencyHistogram& other);

    std::uint32_t limit_us() const { return m_limit_us; }
    std::uint64_t count() const { return m_count; }
    bool empty() const { return m_count == 0; }

    // Exact values in nanoseconds, overflow samples included; 0 when empty.
    std::int64_t min_ns() const { return m_min_ns; }
    std::int64_t max_ns() const { return m_max_ns; }
    std::int64_t sum_ns() const { return m_sum_ns; }
    double avg_ns() const;

    // See the percentile rule above; 'percent' in (0, 100], taken to 1/10000 of a percent
    // (99.99 is exact). 0 when empty.
    std::int64_t percentile_ns(double percent) const;

    // Samples strictly above 'threshold_us'. Exact for thresholds up to the limit; above
    // it, the overflow samples all count as above when the maximum is above the threshold
    // (an upper bound, exact when at most one sample overflowed).
    std::uint64_t count_above(std::uint32_t threshold_us) const;

    // buckets()[k] = samples in (k-1 µs, k µs] (bucket 0: exactly 0), k = 0..limit_us.
    const std::vector<std::uint64_t>& buckets() const { return m_buckets; }
    std::uint64_t overflow() const { return m_overflow; }

  private:
    std::uint32_t m_limit_us;
    std::vector<std::uint64_t> m_buckets;
    std::uint64_t m_overflow = 0;
    std::uint64_t m_count = 0;
    std::int64_t m_min_ns = 0;
    std::int64_t m_max_ns = 0;
    std::int64_t m_sum_ns = 0;
};

} // namespace rtprov::selftest
