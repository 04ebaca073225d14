// SPDX-License-Identifier: Apache-2.0
#include "provisioner/system/proc_stat.hpp"

#include "provisioner/core/text.hpp"

#include <charconv>
#include <vector>

namespace rtprov::system {

namespace {

std::vector<std::string_view> lines(std::string_view text) {
    std::vector<std::string_view> out;
    while (!text.empty()) {
        std::size_t end = text.find('\n');
        out.push_back(text.substr(0, end));
        if (end == std::string_view::npos)
            break;
        text.remove_prefix(end + 1);
    }
    return out;
}

} // namespace

std::optional<TaskStat> parse_stat(std::string_view text) {
    const std::size_t open = text.find('(');
    const std::size_t close = text.rfind(')');
    if (open == std::string_view::npos || close == std::string_view::npos || close < open)
        return std::nullopt;
    TaskStat stat;
    const std::vector<std::string> head = core::words(text.substr(0, open));
    auto pid = head.size() == 1 ? core::whole_number<int>(head[0]) : std::nullopt;
    if (!pid)
        return std::nullopt;
    stat.pid = *pid;
    stat.comm = std::string(text.substr(open + 1, close - open - 1));
    // Field n (1-based) is rest[n - 3]: the rest starts at field 3, the state.
    const std::vector<std::string> rest = core::words(text.substr(close + 1));
    if (rest.size() < 41 - 2 || rest[3 - 3].size() != 1)
        return std::nullopt;
    auto ppid = core::whole_number<int>(rest[4 - 3]);
    auto flags = core::whole_number<unsigned long>(rest[9 - 3]);
    auto processor = core::whole_number<int>(rest[39 - 3]);
    auto rt_priority = core::whole_number<int>(rest[40 - 3]);
    auto policy = core::whole_number<long>(rest[41 - 3]);
    if (!ppid || !flags || !processor || !rt_priority || !policy)
        return std::nullopt;
    stat.state = rest[3 - 3][0];
    stat.ppid = *ppid;
    stat.flags = *flags;
    stat.processor = *processor;
    stat.rt_priority = *rt_priority;
    stat.policy = core::sched_policy_from_number(*policy);
    return stat;
}

std::string systemd_cgroup(std::string_view text) {
    std::string unified;
    for (std::string_view line : lines(text)) {
        // hierarchy-ID:controller-list:cgroup-path (cgroups(7))
        std::size_t first = line.find(':');
        std::size_t second = first == std::string_view::npos ? first : line.find(':', first + 1);
        if (second == std::string_view::npos)
            continue;
        std::string_view controllers = line.substr(first + 1, second - first - 1);
        std::string_view path = line.substr(second + 1);
        if (controllers == "name=systemd")
            return std::string(path);
        if (line.substr(0, first) == "0" && controllers.empty())
            unified = std::string(path);
    }
    return unified;
}

CgroupUnit unit_of_cgroup(std::string_view path) {
    // '/user.slice/user-1000.slice/user@1000.service/app.slice/mpd.service': systemd puts
    // each user's manager in user@UID.service and that user's units below it
    // (systemd.special(7), user@.service); a service may make subgroups of its own below
    // its unit's (delegation), so the unit is the last component that names one.
    CgroupUnit out;
    std::optional<unsigned> manager;
    for (const std::string& part : core::split(path, '/')) {
        if (!part.ends_with(".service") && !part.ends_with(".scope"))
            continue;
        if (out.unit.starts_with("user@") && out.unit.ends_with(".service"))
            manager = core::whole_number<unsigned>(
                std::string_view(out.unit).substr(5, out.unit.size() - 5 - 8));
        out.unit = part;
    }
    out.user = manager;
    return out;
}

} // namespace rtprov::system
