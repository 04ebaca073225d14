// SPDX-License-Identifier: Apache-2.0
#include "provisioner/systemd/systemd_plan.hpp"

#include "provisioner/core/irq_layout.hpp"
#include "provisioner/systemd/units.hpp"

#include <algorithm>

namespace rtprov::systemd {

using namespace rtprov::core;

namespace {

void finding(Plan& plan, Severity severity, const std::string& code, const std::string& message) {
    plan.findings.push_back({severity, code, message});
}

FileState text_file(std::string content) {
    FileState state;
    state.content = std::move(content);
    return state;
}

// The CPUs a service's 'cpus' names; nullopt when they depend on cores not known yet
// or when it is 'all' (no CPUAffinity= at all).
std::optional<CpuList> service_cpus(const CpuTarget& target,
                                    const std::optional<ResolvedCores>& cores) {
    switch (target.kind) {
    case CpuTargetKind::reserved:
        return cores ? std::optional(cores->reserved) : std::nullopt;
    case CpuTargetKind::housekeeping:
        return cores ? std::optional(cores->housekeeping) : std::nullopt;
    case CpuTargetKind::all:
        return std::nullopt;
    case CpuTargetKind::list:
        return target.list;
    }
    return std::nullopt;
}

// Returns whether the service's drop-in may be written (false: refused).
// The origin of a service's key 'name' ('priority'), or of the service where it was not read.
const core::Origin& origin_of(const Profile& profile, const ServiceTuning& s, const char* name) {
    return profile.origin_of("tuning.services." + s.name + "." + name, s.origin);
}

bool check_priority(Plan& plan, const Profile& profile, const ServiceTuning& s,
                    const AppKnowledge* app, bool force) {
    if (!app || !s.policy || !has_static_priority(*s.policy) || !s.priority)
        return true;
    if (*s.priority < app->priority) {
        finding(plan, Severity::info, "below-app-priority",
                "'" + s.unit + "' runs at " + kernel_name(*s.policy) + " " +
                    std::to_string(*s.priority) + " unit-wide; " + app->name + "'s own " +
                    app->threads + " (" + std::to_string(app->priority) + ") stay above it");
        return true;
    }
    // Measured: MPD's rtio and output threads went 47 ms without the CPU and the DAC
    // dropped out 16 times in 10.5 s (on the reference box).
    std::string why = "'" + s.unit + "' would run at " + kernel_name(*s.policy) + " " +
                      std::to_string(*s.priority) + ", at or above " + app->name + "'s own " +
                      app->threads + " (" + std::to_string(app->priority) +
                      "); this inverts priorities and causes dropouts (measured on MPD: 47 ms "
                      "without the CPU, 16 dropouts in 10.5 s)";
    if (force) {
        finding(plan, Severity::warning, "priority-inversion-forced", why + "; forced");
        return true;
    }
    finding(plan, Severity::error, "priority-inversion",
            origin_of(profile, s, "priority").to_string() + ": " + why +
                " — remove 'priority' (and set policy 'app'), or set force_priority: true / pass "
                "--force-priority");
    return false;
}

// tuning.irqs and tuning.housekeeping_workqueues: rtprov-irq-tune@.service with the
// layout (core::irq_layout) as its arguments, its boot instance, the udev rule for cards
// that appear later; irqbalance told the reserved cores. Returns whether it runs rtprov.
bool plan_irq_tune(Plan& plan, const Profile& profile, const std::optional<ResolvedCores>& cores,
                   const TargetFacts& facts, const std::vector<AppKnowledge>& apps,
                   const std::string& rtprov) {
    const Tuning& t = profile.tuning;
    if (cores && !cores->reserved.empty() && facts.units.count(k_irqbalance_unit))
        add_file_change(plan, facts, dropin_path(k_irqbalance_unit),
                        text_file(render_irqbalance_dropin(profile.name, cores->reserved)),
                        "irqbalance keeps off the reserved cores");
    if (!t.irqs.enabled() && !t.housekeeping_workqueues)
        return false;
    if (!cores) {
        finding(plan, Severity::info, "irq-tune-deferred",
                "the IRQ and workqueue tuning waits for the core layout (first boot)");
        return false;
    }
    auto at = [](const core::Origin& o) {
        return o.file.empty() ? std::string() : o.to_string() + ": ";
    };
    std::vector<std::string> argv = {rtprov, "irq-tune"};
    std::string what;
    if (t.irqs.enabled()) {
        std::vector<core::ProfileProblem> problems;
        const core::IrqLayout layout = core::irq_layout(profile, apps, problems);
        for (const core::ProfileProblem& p : problems)
            finding(plan, Severity::error, "irq-priority-inversion", at(p.origin) + p.message);
        if (!problems.empty())
            return false;
        if (t.irqs.sound_cpus == core::IrqCpus::reserved && facts.units.count(k_irqbalance_unit)) {
            finding(plan, Severity::error, "irqbalance-reserved-irqs",
                    at(profile.origin_of("tuning.irqs.sound_cpus", {})) +
                        "tuning.irqs.sound_cpus is 'reserved', but irqbalance is installed "
                        "and keeps every interrupt off the reserved cores (IRQBALANCE_BANNED_"
                        "CPULIST), so it would move the sound card's back within seconds; set "
                        "sound_cpus to 'housekeeping', or remove irqbalance (apt-get purge "
                        "irqbalance)");
            return false;
        }
        const CpuList& sound_cpus =
            t.irqs.sound_cpus == core::IrqCpus::reserved ? cores->reserved : cores->housekeeping;
        argv.insert(argv.end(), {"--sound-priority", std::to_string(layout.sound), "--sound-cpus",
                                 sound_cpus.to_string()});
        for (const std::string& name : t.irqs.sound_names)
            argv.insert(argv.end(), {"--sound-name", "\"" + name + "\""});
        if (layout.others)
            argv.insert(argv.end(), {"--other-priority", std::to_string(*layout.others)});
        if (layout.timers)
            argv.insert(argv.end(), {"--timer-priority", std::to_string(*layout.timers)});
        what = "the sound path's IRQ threads at fifo " + std::to_string(layout.sound) + " (" +
               layout.sound_reason + ") on CPUs " + sound_cpus.to_string() + "; the others " +
               (layout.others ? "at fifo " + std::to_string(*layout.others) + " (" +
                                    layout.others_reason + ")"
                              : layout.others_reason);
    }
    if (t.housekeeping_workqueues) {
        argv.insert(argv.end(), {"--workqueue-cpus", cores->housekeeping.to_string()});
        what += std::string(what.empty() ? "" : "; ") + "unbound workqueues on CPUs " +
                cores->housekeeping.to_string();
    }
    std::string command;
    for (const std::string& word : argv)
        command += (command.empty() ? "" : " ") + word;
    const std::string unit_path = std::string(k_unit_dir) + "/" + k_irq_tune_unit;
    add_file_change(plan, facts, unit_path, text_file(render_irq_tune_unit(profile.name, command)),
                    what);
    add_file_change(plan, facts,
                    std::string(k_unit_dir) + "/multi-user.target.wants/" + k_irq_tune_boot,
                    symlink_to(unit_path), std::string("enables ") + k_irq_tune_boot);
    add_file_change(plan, facts, k_sound_udev_rule, text_file(render_sound_udev_rule(profile.name)),
                    "runs rtprov-irq-tune@<card> for a sound card that appears later");
    return true;
}

} // namespace

void plan_systemd(Plan& plan, const Profile& profile, const std::optional<ResolvedCores>& cores,
                  const TargetFacts& facts, const std::vector<AppKnowledge>& apps,
                  const PlanOptions& options) {
    const Tuning& t = profile.tuning;
    const bool cpuset =
        t.reserve_method == ReserveMethod::cpuset && cores && !cores->reserved.empty();

    // Reserving by cpuset: everything else on the housekeeping cores, the audio services
    // in a slice of their own. A child never gets CPUs its parent slice lacks
    // (cgroup-v2.rst), so the audio slice hangs off -.slice.
    if (cpuset) {
        const CpuList& hk = cores->housekeeping;
        add_file_change(
            plan, facts, dropin_path("init.scope"),
            text_file(render_allowed_cpus_dropin(profile.name, "init.scope", "Scope", hk)),
            "PID 1 on the housekeeping cores (cpuset)");
        for (const char* slice : {"system.slice", "user.slice"})
            add_file_change(plan, facts, dropin_path(slice),
                            text_file(render_allowed_cpus_dropin(profile.name, slice, "Slice", hk)),
                            std::string(slice) + " on the housekeeping cores (cpuset)");
        add_file_change(plan, facts, std::string(k_unit_dir) + "/" + k_audio_slice,
                        text_file(render_audio_slice(profile.name, cores->reserved)),
                        "the reserved cores for the audio services (cpuset)");
    } else if (t.reserve_method == ReserveMethod::cpuset && !cores) {
        finding(plan, Severity::info, "cpuset-deferred",
                "cpuset drop-ins are written when the core layout is known (first boot)");
    }

    bool reserved_used = false;
    for (const ServiceTuning& s : t.services) {
        const AppKnowledge* app = find_app(apps, s.name, s.unit);
        bool installed = facts.units.count(s.unit) > 0;
        if (!installed && s.if_missing == MissingService::skip) {
            finding(plan, Severity::warning, "service-missing",
                    "'" + s.unit +
                        "' is not installed in the target; its drop-in is skipped "
                        "(set if_missing: write in the profile to write it anyway)");
            continue;
        }
        if (!installed)
            finding(plan, Severity::info, "service-missing-written",
                    "'" + s.unit +
                        "' is not installed in the target; its drop-in is written "
                        "anyway (if_missing: write)");
        if (!check_priority(plan, profile, s, app, s.force_priority || options.force_priority))
            continue;

        ServiceSettings settings;
        if (s.cpus) {
            settings.cpu_affinity = service_cpus(*s.cpus, cores);
            if (!settings.cpu_affinity && s.cpus->kind != CpuTargetKind::all)
                finding(plan, Severity::info, "affinity-deferred",
                        "'" + s.unit + "': CPUAffinity= waits for the core layout (first boot)");
            if (settings.cpu_affinity && cores &&
                !settings.cpu_affinity->intersection(cores->reserved).empty())
                reserved_used = true;
            // With cpusets a service lives in one slice: rtprov.slice holds only reserved
            // CPUs and system.slice only housekeeping ones, so a list must not mix them.
            if (cpuset && settings.cpu_affinity) {
                CpuList on_reserved = settings.cpu_affinity->intersection(cores->reserved);
                if (on_reserved == *settings.cpu_affinity) {
                    settings.slice = k_audio_slice;
                } else if (!on_reserved.empty()) {
                    finding(plan, Severity::error, "cpuset-mixed-cpus",
                            origin_of(profile, s, "cpus").to_string() + ": '" + s.unit +
                                "' asks for CPUs " + settings.cpu_affinity->to_string() +
                                ", both reserved and housekeeping; with reserve_method cpuset a "
                                "service is in one slice: give it only reserved or only "
                                "housekeeping CPUs");
                    continue;
                }
            }
        }
        if (s.policy) {
            settings.policy = to_string(*s.policy);
            settings.priority = s.priority;
        }
        settings.reset_on_fork = s.reset_on_fork;
        settings.limit_rtprio = s.limit_rtprio;
        if (app && !s.policy) {
            if (!s.limit_rtprio)
                settings.limit_rtprio = app->priority;
            else if (*s.limit_rtprio < app->priority) {
                finding(plan, Severity::warning, "rtprio-raised",
                        "'" + s.unit + "': limit_rtprio " + std::to_string(*s.limit_rtprio) +
                            " is below the " + std::to_string(app->priority) + " " + app->name +
                            " asks for its " + app->threads + "; LimitRTPRIO=" +
                            std::to_string(app->priority) + " is written instead");
                settings.limit_rtprio = app->priority;
            }
        }
        settings.limit_memlock = s.limit_memlock;
        settings.nice = s.nice;
        if (s.io_class != IoClass::none)
            settings.io_class = to_string(s.io_class);
        add_file_change(plan, facts, dropin_path(s.unit),
                        text_file(render_service_dropin(profile.name, s.unit, settings)),
                        "CPUs, scheduling and limits for " + s.unit);
    }

    if (cores && !cores->reserved.empty() && t.reserve_method != ReserveMethod::none &&
        !reserved_used)
        finding(plan, Severity::warning, "reserved-idle",
                std::string(cores->reserved.size() == 1
                                ? "no service is pinned to reserved CPU "
                                : "no service is pinned to reserved CPUs ") +
                    cores->reserved.to_string() +
                    "; reserved and unused, it sits idle (give a service cpus: reserved)");

    // The units rtprov owns, each enabled as 'systemctl enable' would: a link in the
    // WantedBy= target's .wants folder to the unit in /etc/systemd/system.
    std::string rtprov = "/usr/bin/rtprov";
    if (!facts.has_executable(rtprov) && facts.has_executable("/usr/local/bin/rtprov"))
        rtprov = "/usr/local/bin/rtprov";
    bool needs_rtprov = false;
    auto add_unit = [&](const char* unit, std::string content, const char* wanted_by,
                        const std::string& reason) {
        const std::string unit_path = std::string(k_unit_dir) + "/" + unit;
        add_file_change(plan, facts, unit_path, text_file(std::move(content)), reason);
        add_file_change(plan, facts, std::string(k_unit_dir) + "/" + wanted_by + ".wants/" + unit,
                        symlink_to(unit_path), "enables " + std::string(unit));
    };
    if (t.rt_push_ipi_guard) {
        add_unit(k_sched_features_unit, render_sched_features_unit(profile.name, rtprov),
                 "sysinit.target",
                 "RT_PUSH_IPI guard (non-PREEMPT_RT kernels default to NO_RT_PUSH_IPI)");
        needs_rtprov = true;
    }
    if (t.hold_cpu_dma_latency) {
        add_unit(k_dma_latency_unit, render_dma_latency_unit(profile.name, rtprov),
                 "multi-user.target", "holds /dev/cpu_dma_latency at 0 (costs idle power)");
        needs_rtprov = true;
    }
    if (t.cpuset_partition && cpuset) {
        add_unit(k_partition_unit, render_partition_unit(profile.name, rtprov), "multi-user.target",
                 "rtprov.slice as an isolated cpuset partition");
        needs_rtprov = true;
    }
    if (t.cpu_governor)
        add_unit(k_governor_unit, render_governor_unit(profile.name, *t.cpu_governor),
                 "multi-user.target", "CPU frequency governor '" + *t.cpu_governor + "'");
    if (plan_irq_tune(plan, profile, cores, facts, apps, rtprov))
        needs_rtprov = true;
    if (options.trial) {
        add_unit(core::k_trial_unit, render_trial_unit(profile.name, rtprov), "multi-user.target",
                 "checks the trial boot, then commits it or falls back");
        add_file_change(plan, facts, std::string(k_unit_dir) + "/" + core::k_trial_deadline_target,
                        text_file(render_trial_deadline_target(profile.name)),
                        "reboots a trial boot that does not reach the check in time");
        add_file_change(plan, facts, k_trial_watchdog_dropin,
                        text_file(render_trial_watchdog(profile.name)),
                        "systemd's hardware watchdog, against a hung trial");
        if (facts.watchdog && !*facts.watchdog)
            plan.findings.push_back(
                {core::Severity::warning, "trial-no-watchdog",
                 "this machine has no watchdog device (no /sys/class/watchdog/watchdog0), so a "
                 "trial kernel that hangs hard is not reset: panic=" +
                     std::to_string(core::k_trial_panic_s) +
                     " still reboots one that panics, and the deadline target (" +
                     std::to_string(core::k_trial_deadline_s) +
                     " s) one whose boot stalls while systemd runs, but a frozen box waits for "
                     "a power cycle; load its watchdog driver first (x86: iTCO_wdt or sp5100_tco; "
                     "a Pi's bcm2835_wdt is built in), or keep a hand near the power switch"});
        needs_rtprov = true;
    }
    if (t.health_gate) {
        // Enabled as 'systemctl enable' does with the unit's [Install]: RequiredBy= makes
        // boot-complete.target require the gate, so systemd-bless-boot.service and RAUC's
        // rauc-mark-good.service, which wait for the target, wait for the verdict and do not
        // run when it fails; WantedBy= runs it on every boot, also where nothing pulls the
        // target in (Mender's state script reads its state then).
        const std::string unit_path = std::string(k_unit_dir) + "/" + core::k_health_unit;
        add_file_change(plan, facts, unit_path,
                        text_file(render_health_unit(profile.name, rtprov, t.selftest)),
                        "the health gate of every boot (rtprov health), before "
                        "boot-complete.target, within " +
                            std::to_string(core::health_timeout_s(t.selftest)) + " s");
        for (const char* link_dir : k_health_link_dirs)
            add_file_change(plan, facts,
                            std::string(k_unit_dir) + "/" + link_dir + "/" + core::k_health_unit,
                            symlink_to(unit_path),
                            "enables " + std::string(core::k_health_unit) + " (" + link_dir + ")");
        needs_rtprov = true;
    }
    if (needs_rtprov && !facts.has_executable(rtprov))
        finding(plan, Severity::warning, "rtprov-missing",
                "rtprov's units run " + rtprov +
                    " at boot, but the target has no rtprov; install it into the image");
}

std::string firstboot_link() {
    // The unit's [Install] WantedBy= (firstboot/rtprov-firstboot.service).
    return std::string(k_unit_dir) + "/multi-user.target.wants/" + core::k_firstboot_unit;
}

void plan_firstboot(Plan& plan, const TargetFacts& facts, const PlanOptions& options) {
    const std::string link = firstboot_link();
    if (!options.firstboot_config) {
        // Before first boot has finished, an apply of the running system is first boot's
        // own (or the commit of the trial it armed): taking its files away would stop it
        // half way, its second run after the reboot never starting, or starting without
        // its configuration. After it, they are inert (ConditionPathExists=!done).
        // Kept, not planned as they are now: a hand edit there stays drift, for status to
        // show and rollback to refuse, instead of being taken for rtprov's own.
        if (facts.mode == TargetMode::live)
            plan.kept = {k_firstboot_config_path, link};
        return;
    }
    std::string unit;
    for (const char* dir : k_unit_search_dirs) {
        const std::string path = std::string(dir) + "/" + k_firstboot_unit;
        const FileState* found = facts.file(path);
        if (!found)
            continue;
        if (found->symlink && found->content == "/dev/null") {
            finding(plan, Severity::error, "firstboot-unit-masked",
                    std::string(k_firstboot_unit) + " is masked in the target (" + path +
                        " links to /dev/null), so it cannot be enabled: remove that link, or "
                        "drop --firstboot");
            return;
        }
        unit = path;
        break;
    }
    if (unit.empty()) {
        std::string dirs;
        for (const char* dir : k_unit_search_dirs)
            dirs += (dirs.empty() ? "" : ", ") + std::string(dir);
        finding(plan, Severity::error, "firstboot-unit-missing",
                "--firstboot enables " + std::string(k_firstboot_unit) +
                    ", and the target has none (looked in " + dirs +
                    "): install rtprov's package for the image's architecture in it before "
                    "the apply");
        return;
    }
    add_file_change(plan, facts, k_firstboot_config_path, text_file(*options.firstboot_config),
                    "first boot's configuration, read by " + std::string(k_firstboot_unit));
    add_file_change(plan, facts, link, symlink_to(unit),
                    "enables " + std::string(k_firstboot_unit) + " (first boot)");
}

} // namespace rtprov::systemd
