// SPDX-License-Identifier: Apache-2.0
#include "provisioner/selftest/schedstat.hpp"

#include "provisioner/fs/kernel_file.hpp"

#include <charconv>
#include <system_error>

namespace rtprov::selftest {

namespace {

bool is_blank(char c) {
    return c == ' ' || c == '\t';
}

} // namespace

std::optional<SchedStat> parse_schedstat(std::string_view text) {
    if (!text.empty() && text.back() == '\n')
        text.remove_suffix(1);
    std::uint64_t values[3] = {0, 0, 0};
    const char* p = text.data();
    const char* const end = text.data() + text.size();
    for (std::size_t i = 0; i < 3; ++i) {
        if (i > 0) {
            if (p == end || !is_blank(*p))
                return std::nullopt;
            while (p != end && is_blank(*p))
                ++p;
        }
        auto [next, error] = std::from_chars(p, end, values[i]);
        if (error != std::errc())
            return std::nullopt;
        p = next;
    }
    if (p != end)
        return std::nullopt;
    return SchedStat{values[0], values[1], values[2]};
}

bool is_starved(const SchedStat& before, const SchedStat& after, std::chrono::nanoseconds window,
                const StarvationRule& rule) {
    if (window.count() <= 0 || after.run_ns < before.run_ns || after.wait_ns < before.wait_ns)
        return false;
    const auto window_ns = static_cast<double>(window.count());
    const auto waited = static_cast<double>(after.wait_ns - before.wait_ns);
    const auto ran = static_cast<double>(after.run_ns - before.run_ns);
    return waited >= rule.min_wait_share * window_ns && ran < rule.max_run_share * window_ns;
}

std::vector<ThreadSample> sample_threads(const std::string& proc_root, pid_t pid,
                                         const std::vector<pid_t>& tids) {
    std::vector<ThreadSample> samples;
    samples.reserve(tids.size());
    const std::string task_dir = proc_root + "/" + std::to_string(pid) + "/task/";
    for (pid_t tid : tids) {
        ThreadSample sample;
        sample.tid = tid;
        const std::string dir = task_dir + std::to_string(tid) + "/";
        if (auto comm = fs::read_kernel_file(dir + "comm")) {
            sample.name = *comm;
            if (!sample.name.empty() && sample.name.back() == '\n')
                sample.name.pop_back();
        }
        if (auto text = fs::read_kernel_file(dir + "schedstat")) {
            if (auto stat = parse_schedstat(*text)) {
                sample.status = SampleStatus::ok;
                sample.stat = *stat;
            } else {
                sample.status = SampleStatus::malformed;
            }
        }
        samples.push_back(std::move(sample));
    }
    return samples;
}

std::vector<StarvedThread> find_starved(const std::vector<ThreadSample>& before,
                                        const std::vector<ThreadSample>& after,
                                        std::chrono::nanoseconds window_start,
                                        std::chrono::nanoseconds window,
                                        const StarvationRule& rule) {
    std::vector<StarvedThread> starved;
    for (const ThreadSample& now : after) {
        if (now.status != SampleStatus::ok)
            continue;
        for (const ThreadSample& then : before) {
            if (then.tid != now.tid || then.status != SampleStatus::ok)
                continue;
            if (is_starved(then.stat, now.stat, window, rule))
                starved.push_back({now.tid, now.name.empty() ? then.name : now.name, window_start,
                                   window, now.stat.wait_ns - then.stat.wait_ns,
                                   now.stat.run_ns - then.stat.run_ns});
            break;
        }
    }
    return starved;
}

} // namespace rtprov::selftest
