// SPDX-License-Identifier: Apache-2.0
#include "provisioner/audit/proc_text.hpp"

#include "provisioner/core/text.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace rtprov::audit {

namespace {

std::optional<LimitValue> limit_value(std::string_view text) {
    if (text == "unlimited")
        return LimitValue{true, 0};
    if (auto value = core::whole_number<std::uint64_t>(text))
        return LimitValue{false, *value};
    return std::nullopt;
}

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

std::string lower(std::string text) {
    for (char& c : text)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return text;
}

// The trigger column of /proc/interrupts: 'Edge', 'Level' (ARM), '2-edge', '9-fasteoi'
// (x86; kernel/irq/proc.c prints the chip, then the hwirq and the flow handler's name).
bool is_trigger(const std::string& word) {
    const std::string w = lower(word);
    return w.find("edge") != std::string::npos || w.find("level") != std::string::npos ||
           w.find("fasteoi") != std::string::npos;
}

} // namespace

std::string to_string(const ThreadPolicy& policy) {
    return policy ? core::to_string(*policy) : "unknown";
}

std::string ps_class(const ThreadPolicy& policy) {
    if (!policy)
        return "?";
    // procps' ps/output.c (pr_class).
    switch (*policy) {
    case core::SchedPolicy::other:
        return "TS";
    case core::SchedPolicy::fifo:
        return "FF";
    case core::SchedPolicy::rr:
        return "RR";
    case core::SchedPolicy::batch:
        return "B";
    case core::SchedPolicy::idle:
        return "IDL";
    case core::SchedPolicy::deadline:
        return "DLN";
    }
    return "?";
}

bool is_realtime(const ThreadPolicy& policy) {
    return policy && core::is_realtime(*policy);
}

std::optional<core::CpuList> parse_cpus_allowed(std::string_view status) {
    constexpr std::string_view key = "Cpus_allowed_list:";
    for (std::string_view line : lines(status)) {
        if (!line.starts_with(key))
            continue;
        return core::parse_cpu_list(line.substr(key.size())).value;
    }
    return std::nullopt;
}

std::optional<unsigned> parse_status_uid(std::string_view status) {
    constexpr std::string_view key = "Uid:";
    for (std::string_view line : lines(status)) {
        if (!line.starts_with(key))
            continue;
        const std::vector<std::string> ids = words(line.substr(key.size()));
        if (ids.size() < 2)
            return std::nullopt;
        return core::whole_number<unsigned>(ids[1]);
    }
    return std::nullopt;
}

std::optional<bool> parse_status_has_cap(std::string_view status, unsigned cap) {
    constexpr std::string_view key = "CapEff:";
    for (std::string_view line : lines(status)) {
        if (!line.starts_with(key))
            continue;
        const std::string_view hex = core::trim(line.substr(key.size()));
        std::uint64_t mask = 0;
        auto [end, ec] = std::from_chars(hex.data(), hex.data() + hex.size(), mask, 16);
        if (hex.empty() || ec != std::errc() || end != hex.data() + hex.size() || cap > 63)
            return std::nullopt;
        return (mask >> cap) & 1U;
    }
    return std::nullopt;
}

std::optional<TimerList> parse_timer_list(std::string_view text) {
    TimerList out;
    // the fields of one CPU's section, counted once each however often they appear
    bool hres = false, nohz = false;
    auto field = [](std::string_view line, std::string_view name) -> std::optional<std::string> {
        // '  .hres_active    : 1'
        std::string_view rest = core::trim(line);
        if (!rest.starts_with(name))
            return std::nullopt;
        rest.remove_prefix(name.size());
        rest = core::trim(rest);
        if (!rest.starts_with(':'))
            return std::nullopt;
        return std::string(core::trim(rest.substr(1)));
    };
    for (std::string_view line : lines(text)) {
        if (line.starts_with("cpu: ")) {
            ++out.cpus;
            hres = nohz = false;
            continue;
        }
        if (out.cpus == 0)
            continue;
        if (auto v = field(line, ".hres_active"); v && !hres) {
            hres = true;
            ++out.hres_shown;
            out.hres_active += *v == "1" ? 1 : 0;
        }
        std::optional<std::string> mode = field(line, ".nohz_mode");
        if (!mode)
            mode = field(line, ".nohz");
        if (mode && !nohz) {
            nohz = true;
            ++out.nohz_shown;
            out.nohz_active += *mode != "0" ? 1 : 0;
        }
    }
    if (out.cpus == 0)
        return std::nullopt;
    return out;
}

namespace {

// fstab(5) fields in /proc/mounts escape ' ', '\t', '\n' and '\\' as three octal digits.
std::string unescape_mount_field(std::string_view field) {
    auto octal = [](char c) { return c >= '0' && c <= '7'; };
    std::string out;
    for (std::size_t i = 0; i < field.size(); ++i) {
        if (field[i] == '\\' && i + 3 < field.size() && octal(field[i + 1]) &&
            octal(field[i + 2]) && octal(field[i + 3])) {
            out += static_cast<char>((field[i + 1] - '0') * 64 + (field[i + 2] - '0') * 8 +
                                     (field[i + 3] - '0'));
            i += 3;
            continue;
        }
        out += field[i];
    }
    return out;
}

} // namespace

std::vector<Mount> parse_mounts(std::string_view text) {
    std::vector<Mount> out;
    for (std::string_view line : lines(text)) {
        const std::vector<std::string> f = words(line);
        if (f.size() < 4)
            continue;
        out.push_back({unescape_mount_field(f[0]), unescape_mount_field(f[1]),
                       unescape_mount_field(f[2]), unescape_mount_field(f[3])});
    }
    return out;
}

bool covers(const LimitValue& have, const LimitValue& need) {
    if (have.unlimited)
        return true;
    return !need.unlimited && have.value >= need.value;
}

std::string to_string(const LimitValue& limit) {
    return limit.unlimited ? "unlimited" : std::to_string(limit.value);
}

std::string bytes_text(const LimitValue& limit) {
    if (limit.unlimited)
        return "unlimited";
    static const char k_units[] = {'K', 'M', 'G', 'T'};
    std::uint64_t value = limit.value;
    int unit = -1;
    while (value != 0 && value % 1024 == 0 && unit < 3) {
        value /= 1024;
        ++unit;
    }
    return std::to_string(value) +
           (unit < 0 ? std::string() : std::string(1, k_units[static_cast<std::size_t>(unit)]));
}

ProcessLimits parse_limits(std::string_view text) {
    ProcessLimits limits;
    for (std::string_view line : lines(text)) {
        std::optional<SoftHard>* target = nullptr;
        std::string_view rest;
        if (line.starts_with("Max realtime priority")) {
            target = &limits.rtprio;
            rest = line.substr(std::string_view("Max realtime priority").size());
        } else if (line.starts_with("Max locked memory")) {
            target = &limits.memlock;
            rest = line.substr(std::string_view("Max locked memory").size());
        } else {
            continue;
        }
        const std::vector<std::string> values = words(rest);
        if (values.size() < 2)
            continue;
        auto soft = limit_value(values[0]);
        auto hard = limit_value(values[1]);
        if (soft && hard)
            *target = SoftHard{*soft, *hard};
    }
    return limits;
}

std::optional<LimitValue> parse_memlock_setting(const std::string& text) {
    if (text == "infinity")
        return LimitValue{true, 0};
    std::string_view digits = text;
    std::uint64_t scale = 1;
    if (!digits.empty()) {
        const std::string_view units = "KMGT";
        if (std::size_t at = units.find(digits.back()); at != std::string_view::npos) {
            scale = std::uint64_t{1} << (10 * (at + 1));
            digits.remove_suffix(1);
        }
    }
    auto value = core::whole_number<std::uint64_t>(digits);
    if (!value)
        return std::nullopt;
    return LimitValue{false, *value * scale};
}

std::vector<InterruptLine> parse_interrupts(std::string_view text) {
    std::vector<InterruptLine> out;
    std::vector<std::string_view> all = lines(text);
    if (all.empty())
        return out;
    // The header names a column per online CPU: 'CPU0 CPU1 CPU3'.
    std::vector<unsigned> cpus;
    for (const std::string& column : words(all[0]))
        if (auto cpu = column.starts_with("CPU") ? core::whole_number<unsigned>(column.substr(3))
                                                 : std::nullopt)
            cpus.push_back(*cpu);
    for (std::size_t i = 1; i < all.size(); ++i) {
        std::vector<std::string> w = words(all[i]);
        if (w.empty() || !w[0].ends_with(':'))
            continue;
        auto irq = core::whole_number<unsigned>(std::string_view(w[0]).substr(0, w[0].size() - 1));
        if (!irq)
            continue;
        InterruptLine line;
        line.irq = *irq;
        std::size_t at = 1;
        for (; at < w.size() && line.counts.size() < cpus.size(); ++at) {
            auto count = core::whole_number<std::uint64_t>(w[at]);
            if (!count)
                break;
            line.counts[cpus[line.counts.size()]] = *count;
        }
        if (at < w.size())
            line.chip = w[at++];
        std::size_t description = at;
        if (at < w.size()) {
            std::string_view hw = w[at];
            std::size_t digits = 0;
            while (digits < hw.size() && std::isdigit(static_cast<unsigned char>(hw[digits])))
                ++digits;
            line.hwirq = core::whole_number<unsigned>(hw.substr(0, digits));
        }
        std::size_t trigger = at;
        while (trigger < w.size() && !is_trigger(w[trigger]))
            ++trigger;
        std::size_t name_from = trigger < w.size() ? trigger + 1 : description;
        for (std::size_t j = name_from; j < w.size(); ++j)
            line.name += (line.name.empty() ? "" : " ") + w[j];
        out.push_back(std::move(line));
    }
    return out;
}

bool cgroup_in_unit(std::string_view path, std::string_view unit) {
    std::size_t start = 0;
    while (start <= path.size()) {
        std::size_t end = path.find('/', start);
        std::string_view part = path.substr(
            start, end == std::string_view::npos ? std::string_view::npos : end - start);
        if (part == unit)
            return true;
        if (end == std::string_view::npos)
            break;
        start = end + 1;
    }
    return false;
}

} // namespace rtprov::audit
