// SPDX-License-Identifier: Apache-2.0
#include "provisioner/audit/check.hpp"

#include <utility>

namespace rtprov::audit {

std::string to_string(Status status) {
    switch (status) {
    case Status::ok:
        return "ok";
    case Status::warn:
        return "warn";
    case Status::fail:
        return "fail";
    }
    return "fail";
}

Status worst(Status a, Status b) {
    return static_cast<int>(a) > static_cast<int>(b) ? a : b;
}

Check make_check(const char* id, const char* title) {
    Check c;
    c.id = id;
    c.title = title;
    return c;
}

Check warn(Check c, std::string reason, std::string fix) {
    c.status = Status::warn;
    c.reason = std::move(reason);
    c.fix = std::move(fix);
    return c;
}

Check ok(Check c, std::string reason) {
    c.reason = std::move(reason);
    return c;
}

Check cannot_read(Check c, const std::string& problem) {
    c.status = Status::warn;
    c.reason = problem;
    c.fix = "rerun 'rtprov audit' as root on the running system, with /proc and /sys mounted";
    return c;
}

std::string cpus_text(const core::CpuList& cpus) {
    if (cpus.empty())
        return "no CPU";
    return (cpus.size() == 1 ? "CPU " : "CPUs ") + cpus.to_string();
}

std::string listing(const std::vector<std::string>& items, std::size_t max) {
    std::string out;
    const std::size_t shown = items.size() > max ? max : items.size();
    for (std::size_t i = 0; i < shown; ++i) {
        if (i > 0)
            out += (i + 1 == items.size() ? " and " : ", ");
        out += items[i];
    }
    if (items.size() > shown)
        out += " and " + std::to_string(items.size() - shown) + " more";
    return out;
}

} // namespace rtprov::audit
