// SPDX-License-Identifier: Apache-2.0
#include "provisioner/selftest/latency_histogram.hpp"

#include "tests/unit/catch.hpp"

#include <atomic>
#include <thread>

#include <stdexcept>

using rtprov::selftest::LatencyHistogram;

namespace {

constexpr std::int64_t k_us = 1000;

} // namespace

TEST_CASE("an empty latency histogram reports zeros") {
    LatencyHistogram h;
    CHECK(h.limit_us() == 10'000);
    CHECK(h.empty());
    CHECK(h.count() == 0);
    CHECK(h.min_ns() == 0);
    CHECK(h.max_ns() == 0);
    CHECK(h.sum_ns() == 0);
    CHECK(h.avg_ns() == 0.0);
    CHECK(h.percentile_ns(50) == 0);
    CHECK(h.percentile_ns(99.99) == 0);
    CHECK(h.count_above(0) == 0);
    CHECK(h.count_above(20'000) == 0);
    CHECK(h.buckets().size() == 10'001);
    CHECK(h.overflow() == 0);
}

TEST_CASE("one sample is the minimum, maximum, average and every percentile") {
    LatencyHistogram h;
    h.add(1500);
    CHECK(h.count() == 1);
    CHECK(h.min_ns() == 1500);
    CHECK(h.max_ns() == 1500);
    CHECK(h.sum_ns() == 1500);
    CHECK(h.avg_ns() == 1500.0);
    CHECK(h.buckets()[2] == 1);
    // The bucket's bound (2 µs) is capped at the exact maximum.
    CHECK(h.percentile_ns(50) == 1500);
    CHECK(h.percentile_ns(99.99) == 1500);
    CHECK(h.percentile_ns(100) == 1500);
    CHECK(h.count_above(1) == 1);
    CHECK(h.count_above(2) == 0);
}

TEST_CASE("a sample of k µs goes into bucket k, and one nanosecond more into the next") {
    LatencyHistogram h(10);
    h.add(0);
    h.add(1);
    h.add(1000);
    h.add(1001);
    h.add(10 * k_us);
    h.add(10 * k_us + 1);
    h.add(-5); // a clock that went backwards counts as 0
    CHECK(h.buckets()[0] == 2);
    CHECK(h.buckets()[1] == 2);
    CHECK(h.buckets()[2] == 1);
    CHECK(h.buckets()[10] == 1);
    CHECK(h.overflow() == 1);
    CHECK(h.count() == 7);
    CHECK(h.min_ns() == 0);
    CHECK(h.max_ns() == 10 * k_us + 1);
    CHECK(h.sum_ns() == 0 + 1 + 1000 + 1001 + 10'000 + 10'001);
}

TEST_CASE("percentiles are the smallest bucket bound with that share at or below it") {
    LatencyHistogram h;
    for (std::int64_t us = 1; us <= 100; ++us)
        h.add(us * k_us);
    CHECK(h.count() == 100);
    CHECK(h.sum_ns() == 5050 * k_us);
    CHECK(h.avg_ns() == 50'500.0);
    CHECK(h.percentile_ns(50) == 50 * k_us);
    CHECK(h.percentile_ns(99) == 99 * k_us);
    CHECK(h.percentile_ns(99.9) == 100 * k_us);
    CHECK(h.percentile_ns(99.99) == 100 * k_us);
    CHECK(h.percentile_ns(1) == 1 * k_us);
    CHECK(h.percentile_ns(0.0001) == 1 * k_us);
    CHECK(h.percentile_ns(100) == 100 * k_us);
}

TEST_CASE("p99.9 and p99.99 count exactly at their edges") {
    LatencyHistogram thousand;
    for (int i = 0; i < 999; ++i)
        thousand.add(10 * k_us);
    thousand.add(500 * k_us);
    // 999 of 1000 is exactly 99.9 %; 99.99 % needs all 1000.
    CHECK(thousand.percentile_ns(99.9) == 10 * k_us);
    CHECK(thousand.percentile_ns(99.99) == 500 * k_us);
    CHECK(thousand.percentile_ns(99) == 10 * k_us);

    LatencyHistogram ten_thousand;
    for (int i = 0; i < 9990; ++i)
        ten_thousand.add(10 * k_us);
    for (int i = 0; i < 10; ++i)
        ten_thousand.add(500 * k_us);
    CHECK(ten_thousand.percentile_ns(99.9) == 10 * k_us);
    CHECK(ten_thousand.percentile_ns(99.99) == 500 * k_us);

    LatencyHistogram just_over;
    for (int i = 0; i < 9989; ++i)
        just_over.add(10 * k_us);
    for (int i = 0; i < 11; ++i)
        just_over.add(500 * k_us);
    CHECK(just_over.percentile_ns(99.9) == 500 * k_us);
}

TEST_CASE("a percentile that falls in the overflow bucket is the exact maximum") {
    LatencyHistogram h(10);
    for (int i = 0; i < 9; ++i)
        h.add(5 * k_us);
    h.add(50 * k_us + 7);
    CHECK(h.percentile_ns(50) == 5 * k_us);
    CHECK(h.percentile_ns(90) == 5 * k_us);
    CHECK(h.percentile_ns(90.01) == 50 * k_us + 7);
    CHECK(h.percentile_ns(99) == 50 * k_us + 7);
}

TEST_CASE("a histogram with every sample in overflow keeps the exact figures") {
    LatencyHistogram h(10);
    h.add(20 * k_us);
    h.add(30 * k_us);
    h.add(25'500);
    CHECK(h.overflow() == 3);
    for (std::uint64_t bucket : h.buckets())
        CHECK(bucket == 0);
    CHECK(h.count() == 3);
    CHECK(h.min_ns() == 20 * k_us);
    CHECK(h.max_ns() == 30 * k_us);
    CHECK(h.sum_ns() == 75'500);
    CHECK(h.avg_ns() == 75'500.0 / 3.0);
    CHECK(h.percentile_ns(50) == 30 * k_us);
    CHECK(h.percentile_ns(99.99) == 30 * k_us);
    CHECK(h.count_above(5) == 3);
    CHECK(h.count_above(10) == 3); // exact at the limit
    CHECK(h.count_above(25) == 3); // above the limit: an upper bound
    CHECK(h.count_above(30) == 0); // nothing above the maximum
    CHECK(h.count_above(40) == 0);
}

TEST_CASE("count_above counts samples strictly above the threshold") {
    LatencyHistogram h(100);
    h.add(1000); // exactly 1 µs: not above 1
    h.add(1001); // above 1
    h.add(50 * k_us);
    h.add(200 * k_us);
    CHECK(h.count_above(0) == 4);
    CHECK(h.count_above(1) == 3);
    CHECK(h.count_above(2) == 2);
    CHECK(h.count_above(49) == 2);
    CHECK(h.count_above(50) == 1);
    CHECK(h.count_above(99) == 1);
    CHECK(h.count_above(100) == 1);
    CHECK(h.count_above(199) == 1);
    CHECK(h.count_above(200) == 0);
}

TEST_CASE("merging histograms adds every sample and keeps exact extremes") {
    LatencyHistogram a(100);
    a.add(3 * k_us);
    a.add(150 * k_us);
    LatencyHistogram b(100);
    b.add(1 * k_us);
    b.add(7 * k_us + 500);

    LatencyHistogram merged(100);
    merged.merge(LatencyHistogram(100)); // an empty one changes nothing
    CHECK(merged.empty());
    CHECK(merged.min_ns() == 0);
    merged.merge(a);
    merged.merge(b);
    CHECK(merged.count() == 4);
    CHECK(merged.min_ns() == 1 * k_us);
    CHECK(merged.max_ns() == 150 * k_us);
    CHECK(merged.sum_ns() == 3000 + 150'000 + 1000 + 7500);
    CHECK(merged.buckets()[1] == 1);
    CHECK(merged.buckets()[3] == 1);
    CHECK(merged.buckets()[8] == 1);
    CHECK(merged.overflow() == 1);
    CHECK(merged.percentile_ns(50) == 3 * k_us);
    CHECK(merged.percentile_ns(75) == 8 * k_us);
    CHECK(merged.percentile_ns(99) == 150 * k_us);

    LatencyHistogram other_limit(50);
    CHECK_THROWS_AS(merged.merge(other_limit), std::invalid_argument);
    CHECK(merged.count() == 4);
}

TEST_CASE("adding samples never reallocates the buckets") {
    LatencyHistogram h;
    const std::uint64_t* before = h.buckets().data();
    for (std::int64_t ns = 0; ns < 20'000'000; ns += 997)
        h.add(ns);
    CHECK(h.buckets().data() == before);
    CHECK(h.count() == 20'061);
}

TEST_CASE("a snapshot taken while another thread adds is a histogram whose counts add up") {
    LatencyHistogram h(100);
    std::atomic<bool> done{false};
    std::thread writer([&] {
        for (std::int64_t i = 0; i < 2'000'000; ++i)
            h.add((i % 150) * 1000); // a third of them overflow
        done = true;
    });
    int snapshots = 0;
    while (!done || snapshots == 0) {
        const LatencyHistogram copy = h.snapshot();
        std::uint64_t in_buckets = copy.overflow();
        for (std::uint64_t n : copy.buckets())
            in_buckets += n;
        CHECK(in_buckets == copy.count());
        if (!copy.empty())
            CHECK(copy.percentile_ns(50) <= copy.max_ns());
        ++snapshots;
    }
    writer.join();
    const LatencyHistogram last = h.snapshot();
    CHECK(last.count() == 2'000'000);
    CHECK(last.max_ns() == 149'000);
    CHECK(last.buckets() == h.buckets());
}
