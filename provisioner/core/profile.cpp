#include "provisioner/core/profile.hpp"

namespace rtprov::core {

namespace {

std::optional<unsigned> count_of(const Profile& profile, std::optional<unsigned> cpu_count) {
    return cpu_count ? cpu_count : profile.board.cpus;
}

std::string cpu_noun(const CpuList& list) {
    return list.size() == 1 ? "CPU " : "CPUs ";
}

// "CPU 4 is" / "CPUs 4-5 are"
std::string cpus_are(const CpuList& list) {
    return cpu_noun(list) + list.to_string() + (list.size() == 1 ? " is" : " are");
}

} // namespace

std::optional<ResolvedCores> resolve_cores(const Profile& profile,
                                           std::optional<unsigned> cpu_count) {
    const CoreLayout& layout = profile.tuning.cores;
    if (layout.housekeeping && layout.reserved)
        return ResolvedCores{*layout.housekeeping, *layout.reserved};
    auto count = count_of(profile, cpu_count);
    if (!count || *count == 0)
        return std::nullopt;
    CpuList all = CpuList::range(0, *count - 1);
    if (layout.housekeeping)
        return ResolvedCores{*layout.housekeeping, all.minus(*layout.housekeeping)};
    if (layout.reserved)
        return ResolvedCores{all.minus(*layout.reserved), *layout.reserved};
    // Both 'auto': reserve the upper half, as in the reference measurements (2-3 of 4
    // reserved on the x86 reference box). CPU 0 stays housekeeping:
    // it is the boot CPU, which nohz_full= may not take.
    unsigned reserved = *count / 2;
    if (reserved == 0)
        return ResolvedCores{all, CpuList()};
    return ResolvedCores{CpuList::range(0, *count - reserved - 1),
                         CpuList::range(*count - reserved, *count - 1)};
}

std::vector<ProfileProblem> validate(const Profile& profile, std::optional<unsigned> cpu_count) {
    std::vector<ProfileProblem> problems;
    const CoreLayout& layout = profile.tuning.cores;
    auto count = count_of(profile, cpu_count);
    const Origin& count_origin =
        cpu_count ? Origin{"the running machine"} : profile.board.cpus_origin;

    if (layout.housekeeping && layout.housekeeping->empty())
        problems.push_back({layout.housekeeping_origin,
                            "no housekeeping core: keep at least one core for the system, "
                            "interrupts and kernel housekeeping"});
    if (layout.housekeeping && layout.reserved) {
        CpuList both = layout.housekeeping->intersection(*layout.reserved);
        if (!both.empty())
            problems.push_back(
                {layout.reserved_origin, "reserved CPUs '" + layout.reserved->to_string() +
                                             "' overlap housekeeping CPUs '" +
                                             layout.housekeeping->to_string() + "' on " +
                                             cpu_noun(both) + both.to_string() +
                                             "; a core is either housekeeping or reserved"});
    }
    if (count) {
        CpuList all = CpuList::range(0, *count - 1);
        auto check_range = [&](const std::optional<CpuList>& list, const Origin& origin) {
            if (!list)
                return;
            CpuList beyond = list->minus(all);
            if (!beyond.empty())
                problems.push_back({origin, cpus_are(beyond) + " beyond the board's " +
                                                std::to_string(*count) + " CPUs (" +
                                                all.to_string() + ")"});
        };
        check_range(layout.housekeeping, layout.housekeeping_origin);
        check_range(layout.reserved, layout.reserved_origin);
        if (*count < 2 && !(layout.reserved && layout.reserved->empty()))
            problems.push_back({count_origin, "a single CPU cannot be split into housekeeping and "
                                              "reserved cores; set 'tuning.cores.reserved' to "
                                              "an empty list or use a board with more CPUs"});
        if (layout.housekeeping && layout.reserved) {
            CpuList left_out = all.minus(layout.housekeeping->union_with(*layout.reserved));
            if (!left_out.empty())
                problems.push_back(
                    {layout.reserved_origin,
                     cpus_are(left_out) + " neither housekeeping nor reserved; add " +
                         (left_out.size() == 1 ? "it" : "them") + " to one of the two lists"});
        } else if (layout.reserved && !layout.housekeeping && all.minus(*layout.reserved).empty() &&
                   *count >= 2) {
            problems.push_back({layout.reserved_origin,
                                "no housekeeping core: reserving CPUs '" +
                                    layout.reserved->to_string() + "' leaves none of the " +
                                    std::to_string(*count) + " CPUs for the system"});
        }
    }

    if (profile.tuning.cpuset_partition && profile.tuning.reserve_method != ReserveMethod::cpuset)
        problems.push_back({Origin{"tuning.cpuset_partition"},
                            "cpuset_partition makes rtprov.slice an isolated partition, which "
                            "needs reserve_method: cpuset (it is '" +
                                to_string(profile.tuning.reserve_method) + "')"});
    for (std::size_t i = 0; i < profile.tuning.services.size(); ++i)
        for (std::size_t k = 0; k < i; ++k)
            if (profile.tuning.services[i].unit == profile.tuning.services[k].unit)
                problems.push_back({profile.tuning.services[i].origin,
                                    "services '" + profile.tuning.services[k].name + "' and '" +
                                        profile.tuning.services[i].name + "' both tune unit '" +
                                        profile.tuning.services[i].unit +
                                        "': one drop-in cannot say both; keep one of them"});
    for (const ServiceTuning& service : profile.tuning.services) {
        const std::string who = "service '" + service.name + "'";
        const bool realtime = service.policy && has_static_priority(*service.policy);
        if (service.priority) {
            if (*service.priority < 1 || *service.priority > 99)
                problems.push_back({service.priority_origin,
                                    "priority " + std::to_string(*service.priority) +
                                        " is outside 1-99 (the range of SCHED_FIFO and SCHED_RR)"});
            else if (!realtime)
                problems.push_back({service.priority_origin,
                                    who + ": a priority needs policy 'fifo' or 'rr', not '" +
                                        service_policy_word(service.policy) + "'"});
        } else if (realtime) {
            problems.push_back({service.origin, who + ": policy '" +
                                                    service_policy_word(service.policy) +
                                                    "' needs a priority (1-99)"});
        }
        if (service.nice && (*service.nice < -20 || *service.nice > 19))
            problems.push_back({service.origin, who + ": nice " + std::to_string(*service.nice) +
                                                    " is outside -20..19"});
        if (service.limit_rtprio && (*service.limit_rtprio < 0 || *service.limit_rtprio > 99))
            problems.push_back({service.origin, who + ": limit_rtprio " +
                                                    std::to_string(*service.limit_rtprio) +
                                                    " is outside 0-99"});
        if (count && service.cpus && service.cpus->kind == CpuTargetKind::list) {
            CpuList beyond = service.cpus->list.minus(CpuList::range(0, *count - 1));
            if (!beyond.empty())
                problems.push_back({service.origin, who + ": " + cpus_are(beyond) +
                                                        " beyond the board's " +
                                                        std::to_string(*count) + " CPUs"});
        }
    }

    return problems;
}

std::string to_string(BootLoader value) {
    switch (value) {
    case BootLoader::rpi_firmware:
        return "rpi-firmware";
    case BootLoader::grub:
        return "grub";
    case BootLoader::systemd_boot:
        return "systemd-boot";
    }
    return "?";
}

std::string to_string(ReserveMethod value) {
    switch (value) {
    case ReserveMethod::isolcpus:
        return "isolcpus";
    case ReserveMethod::cpuset:
        return "cpuset";
    case ReserveMethod::none:
        return "none";
    }
    return "?";
}

std::string to_string(KernelFeature value) {
    switch (value) {
    case KernelFeature::automatic:
        return "auto";
    case KernelFeature::on:
        return "on";
    case KernelFeature::off:
        return "off";
    }
    return "?";
}

std::string to_string(MissingKernelConfig value) {
    return value == MissingKernelConfig::require ? "require" : "assume";
}

std::string service_policy_word(const std::optional<SchedPolicy>& policy) {
    return policy ? to_string(*policy) : "app";
}

std::string to_string(IoClass value) {
    switch (value) {
    case IoClass::none:
        return "none";
    case IoClass::realtime:
        return "realtime";
    case IoClass::best_effort:
        return "best-effort";
    case IoClass::idle:
        return "idle";
    }
    return "?";
}

std::string to_string(MissingService value) {
    return value == MissingService::skip ? "skip" : "write";
}

std::string to_string(const CpuTarget& value) {
    switch (value.kind) {
    case CpuTargetKind::reserved:
        return "reserved";
    case CpuTargetKind::housekeeping:
        return "housekeeping";
    case CpuTargetKind::all:
        return "all";
    case CpuTargetKind::list:
        return value.list.to_string();
    }
    return "?";
}

} // namespace rtprov::core
