// SPDX-License-Identifier: Apache-2.0
#include "provisioner/core/profile.hpp"

#include <array>

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
    const Origin no_file{"profile"};
    const Origin count_origin =
        cpu_count ? Origin{"the running machine"} : profile.origin_of("board.cpus", no_file);
    const Origin& housekeeping_origin = profile.origin_of("tuning.cores.housekeeping", no_file);
    const Origin& reserved_origin = profile.origin_of("tuning.cores.reserved", no_file);

    if (layout.housekeeping && layout.housekeeping->empty())
        problems.push_back({housekeeping_origin,
                            "no housekeeping core: keep at least one core for the system, "
                            "interrupts and kernel housekeeping"});
    if (layout.housekeeping && layout.reserved) {
        CpuList both = layout.housekeeping->intersection(*layout.reserved);
        if (!both.empty())
            problems.push_back({given_last(reserved_origin, housekeeping_origin),
                                "reserved CPUs '" + layout.reserved->to_string() +
                                    "' overlap housekeeping CPUs '" +
                                    layout.housekeeping->to_string() + "' on " + cpu_noun(both) +
                                    both.to_string() +
                                    "; a core is either housekeeping or reserved"});
    }
    if (count) {
        CpuList all = CpuList::range(0, *count - 1);
        auto check_range = [&](const std::optional<CpuList>& list, const Origin& origin) {
            if (!list)
                return;
            CpuList beyond = list->minus(all);
            if (!beyond.empty())
                problems.push_back(
                    {given_last(origin, count_origin), cpus_are(beyond) + " beyond the board's " +
                                                           std::to_string(*count) + " CPUs (" +
                                                           all.to_string() + ")"});
        };
        check_range(layout.housekeeping, housekeeping_origin);
        check_range(layout.reserved, reserved_origin);
        if (*count < 2 && !(layout.reserved && layout.reserved->empty()))
            problems.push_back({count_origin, "a single CPU cannot be split into housekeeping and "
                                              "reserved cores; set 'tuning.cores.reserved' to "
                                              "an empty list or use a board with more CPUs"});
        if (layout.housekeeping && layout.reserved) {
            CpuList left_out = all.minus(layout.housekeeping->union_with(*layout.reserved));
            if (!left_out.empty())
                problems.push_back(
                    {given_last(given_last(reserved_origin, housekeeping_origin), count_origin),
                     cpus_are(left_out) + " neither housekeeping nor reserved; add " +
                         (left_out.size() == 1 ? "it" : "them") + " to one of the two lists"});
        } else if (layout.reserved && !layout.housekeeping && all.minus(*layout.reserved).empty() &&
                   *count >= 2) {
            problems.push_back({given_last(reserved_origin, count_origin),
                                "no housekeeping core: reserving CPUs '" +
                                    layout.reserved->to_string() + "' leaves none of the " +
                                    std::to_string(*count) + " CPUs for the system"});
        }
    }

    if (profile.tuning.cpuset_partition && profile.tuning.reserve_method != ReserveMethod::cpuset)
        problems.push_back({profile.origin_of("tuning.cpuset_partition", no_file),
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
        const std::string key = "tuning.services." + service.name + ".";
        auto at = [&](const char* name) -> const Origin& {
            return profile.origin_of(key + name, service.origin);
        };
        const bool realtime = service.policy && has_static_priority(*service.policy);
        if (service.priority) {
            if (*service.priority < 1 || *service.priority > 99)
                problems.push_back({at("priority"),
                                    "priority " + std::to_string(*service.priority) +
                                        " is outside 1-99 (the range of SCHED_FIFO and SCHED_RR)"});
            else if (!realtime)
                problems.push_back(
                    {at("priority"), who + ": a priority needs policy 'fifo' or 'rr', not '" +
                                         service_policy_word(service.policy) + "'"});
        } else if (realtime) {
            problems.push_back({at("policy"), who + ": policy '" +
                                                  service_policy_word(service.policy) +
                                                  "' needs a priority (1-99)"});
        }
        if (service.nice && (*service.nice < -20 || *service.nice > 19))
            problems.push_back({at("nice"), who + ": nice " + std::to_string(*service.nice) +
                                                " is outside -20..19"});
        if (service.limit_rtprio && (*service.limit_rtprio < 0 || *service.limit_rtprio > 99))
            problems.push_back({at("limit_rtprio"), who + ": limit_rtprio " +
                                                        std::to_string(*service.limit_rtprio) +
                                                        " is outside 0-99"});
        if (count && service.cpus && service.cpus->kind == CpuTargetKind::list) {
            CpuList beyond = service.cpus->list.minus(CpuList::range(0, *count - 1));
            if (!beyond.empty())
                problems.push_back({given_last(at("cpus"), count_origin),
                                    who + ": " + cpus_are(beyond) + " beyond the board's " +
                                        std::to_string(*count) + " CPUs"});
        }
    }

    return problems;
}

namespace {

template <typename Enum, std::size_t N>
using Table = std::array<std::pair<std::string_view, Enum>, N>;

constexpr Table<BootLoader, 4> k_boot_loaders{{{"rpi-firmware", BootLoader::rpi_firmware},
                                               {"grub", BootLoader::grub},
                                               {"systemd-boot", BootLoader::systemd_boot},
                                               {"raspi-firmware", BootLoader::raspi_firmware}}};
constexpr Table<ReserveMethod, 3> k_reserve_methods{{{"isolcpus", ReserveMethod::isolcpus},
                                                     {"cpuset", ReserveMethod::cpuset},
                                                     {"none", ReserveMethod::none}}};
constexpr Table<KernelFeature, 3> k_kernel_features{
    {{"auto", KernelFeature::automatic}, {"on", KernelFeature::on}, {"off", KernelFeature::off}}};
constexpr Table<MissingKernelConfig, 2> k_missing_configs{
    {{"require", MissingKernelConfig::require}, {"assume", MissingKernelConfig::assume}}};
constexpr Table<IoClass, 4> k_io_classes{{{"none", IoClass::none},
                                          {"realtime", IoClass::realtime},
                                          {"best-effort", IoClass::best_effort},
                                          {"idle", IoClass::idle}}};
constexpr Table<MissingService, 2> k_missing_services{
    {{"skip", MissingService::skip}, {"write", MissingService::write}}};
constexpr Table<IrqCpus, 2> k_irq_cpus{
    {{"housekeeping", IrqCpus::housekeeping}, {"reserved", IrqCpus::reserved}}};
constexpr Table<BufferMode, 3> k_buffer_modes{
    {{"keep", BufferMode::keep}, {"advise", BufferMode::advise}, {"write", BufferMode::write}}};

template <typename Enum> std::string word_of(Enum value) {
    for (const auto& [word, e] : words(value))
        if (e == value)
            return std::string(word);
    return "?";
}

} // namespace

Words<BootLoader> words(BootLoader) {
    return k_boot_loaders;
}
Words<ReserveMethod> words(ReserveMethod) {
    return k_reserve_methods;
}
Words<KernelFeature> words(KernelFeature) {
    return k_kernel_features;
}
Words<MissingKernelConfig> words(MissingKernelConfig) {
    return k_missing_configs;
}
Words<IoClass> words(IoClass) {
    return k_io_classes;
}
Words<MissingService> words(MissingService) {
    return k_missing_services;
}
Words<IrqCpus> words(IrqCpus) {
    return k_irq_cpus;
}
Words<BufferMode> words(BufferMode) {
    return k_buffer_modes;
}

std::string to_string(BootLoader value) {
    return word_of(value);
}
std::string to_string(ReserveMethod value) {
    return word_of(value);
}
std::string to_string(KernelFeature value) {
    return word_of(value);
}
std::string to_string(MissingKernelConfig value) {
    return word_of(value);
}
std::string to_string(IoClass value) {
    return word_of(value);
}
std::string to_string(MissingService value) {
    return word_of(value);
}
std::string to_string(IrqCpus value) {
    return word_of(value);
}
std::string to_string(BufferMode value) {
    return word_of(value);
}

std::string service_policy_word(const std::optional<SchedPolicy>& policy) {
    return policy ? to_string(*policy) : "app";
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
