// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/core/cpu_list.hpp"
#include "provisioner/core/profile.hpp"

#include <optional>
#include <string>

// systemd unit files and drop-ins rtprov writes (systemd 257: systemd.unit(5),
// systemd.exec(5), systemd.resource-control(5)).
namespace rtprov::systemd {

inline constexpr const char* k_unit_dir = "/etc/systemd/system";
// Where 'systemctl enable' finds a unit file in an image, in its order: Debian 13's
// systemd 257 lookup paths (systemd.unit(5), "System Unit Search Path"), less those under
// /run, which hold nothing offline. (Debian 12's systemd 252, built for a split /usr,
// looks in /lib/systemd/system before /usr/lib/systemd/system: the same file on a merged
// /usr, and systemd starts a unit an enable link wants by the link's name.)
inline constexpr const char* k_unit_search_dirs[] = {
    "/etc/systemd/system", "/usr/local/lib/systemd/system", "/usr/lib/systemd/system"};
inline constexpr const char* k_dropin_name = "60-rtprov.conf";
// The slice that holds the reserved cores. No dash in the name: 'a-b.slice' would be a
// child of 'a.slice'; this one is a direct child of -.slice (systemd.slice(5)).
inline constexpr const char* k_audio_slice = "rtprov.slice";
inline constexpr const char* k_sched_features_unit = "rtprov-sched-features.service";
inline constexpr const char* k_dma_latency_unit = "rtprov-cpu-dma-latency.service";
inline constexpr const char* k_governor_unit = "rtprov-cpu-governor.service";
inline constexpr const char* k_partition_unit = "rtprov-cpuset-partition.service";
// The IRQ threads and unbound workqueues (tuning.irqs, tuning.housekeeping_workqueues):
// a template started at boot (the 'boot' instance) and by the udev rule for each sound
// card that appears, a USB DAC plugged in later included.
inline constexpr const char* k_irq_tune_unit = "rtprov-irq-tune@.service";
inline constexpr const char* k_irq_tune_boot = "rtprov-irq-tune@boot.service";
inline constexpr const char* k_sound_udev_rule = "/etc/udev/rules.d/60-rtprov-sound.rules";
inline constexpr const char* k_irqbalance_unit = "irqbalance.service";
// The trial (apply --trial): the check at boot, the deadline the trial entry's command
// line starts, and the systemd watchdog while the trial form is applied.
inline constexpr const char* k_trial_watchdog_dropin =
    "/etc/systemd/system.conf.d/60-rtprov-trial.conf";
inline constexpr unsigned k_trial_watchdog_s = 60;
// Where 'systemctl enable' links the health gate (core::k_health_unit), from its
// [Install] RequiredBy=boot-complete.target and WantedBy=multi-user.target.
inline constexpr const char* k_health_link_dirs[] = {"boot-complete.target.requires",
                                                     "multi-user.target.wants"};

// '/etc/systemd/system/<unit>.d/60-rtprov.conf'
std::string dropin_path(const std::string& unit);

// The [Service] settings rtprov gives one service.
struct ServiceSettings {
    std::optional<core::CpuList> cpu_affinity;
    std::optional<std::string> policy; // 'fifo', 'rr', 'other', 'batch', 'idle'
    std::optional<int> priority;
    std::optional<bool> reset_on_fork;
    std::optional<int> limit_rtprio;
    std::optional<std::string> limit_memlock;
    std::optional<int> nice;
    std::optional<std::string> io_class; // 'realtime', 'best-effort', 'idle'
    std::optional<std::string> slice;
};

// A drop-in with rtprov's header and 'settings'. CPUAffinity= is reset first, because
// systemd merges repeated assignments (systemd.exec(5)).
std::string render_service_dropin(const std::string& profile_name, const std::string& unit,
                                  const ServiceSettings& settings);

// A drop-in for a slice or scope ('section' is "Slice" or "Scope') limiting it to 'cpus'.
std::string render_allowed_cpus_dropin(const std::string& profile_name, const std::string& unit,
                                       const std::string& section, const core::CpuList& cpus);

// The slice unit for the reserved cores.
std::string render_audio_slice(const std::string& profile_name, const core::CpuList& reserved);

// rtprov-irq-tune@.service: a oneshot running 'command' (rtprov irq-tune with the
// profile's layout), after sound.target so the cards present at boot are there.
std::string render_irq_tune_unit(const std::string& profile_name, const std::string& command);

// The udev rule that starts rtprov-irq-tune@<card>.service when a sound card appears
// (udev(7): TAG+="systemd" with SYSTEMD_WANTS, systemd.device(5)).
std::string render_sound_udev_rule(const std::string& profile_name);

// irqbalance.service's drop-in: IRQBALANCE_BANNED_CPULIST (irqbalance(1)) the reserved
// cores, so it never moves an interrupt there.
std::string render_irqbalance_dropin(const std::string& profile_name,
                                     const core::CpuList& reserved);

// The RT_PUSH_IPI guard: a oneshot at every boot running 'rtprov_path sched-features'.
std::string render_sched_features_unit(const std::string& profile_name,
                                       const std::string& rtprov_path);

// Holds /dev/cpu_dma_latency at 0 for as long as it runs ('rtprov hold-cpu-dma-latency'):
// no deep idle states, so wake-ups are fast and the idle power is higher.
std::string render_dma_latency_unit(const std::string& profile_name,
                                    const std::string& rtprov_path);

// Makes rtprov.slice an isolated cpuset partition at boot ('rtprov cpuset-partition').
std::string render_partition_unit(const std::string& profile_name, const std::string& rtprov_path);

// Sets every CPU's frequency governor at boot.
// rtprov-trial.service: 'rtprov trial check' at every boot while a trial record exists.
std::string render_trial_unit(const std::string& profile_name, const std::string& rtprov_path);
// rtprov-trial-deadline.target: started only by the trial entry's systemd.wants=; its
// job timeout reboots a trial boot that has not finished the check in time.
std::string render_trial_deadline_target(const std::string& profile_name);
// system.conf drop-in: RuntimeWatchdogSec=, so a hung kernel or PID 1 is reset by the
// hardware watchdog (systemd-system.conf(5)).
std::string render_trial_watchdog(const std::string& profile_name);

std::string render_governor_unit(const std::string& profile_name, const std::string& governor);

// rtprov-health.service (tuning.health_gate; docs/update-gate.md): 'rtprov health --boot'
// once the boot, first boot and the trial's check are done, ordered before
// boot-complete.target, which requires it, and wanted by multi-user.target so that it runs
// on every boot. Its start timeout (a oneshot has none by default) is the gate's own limit
// from the profile's self-test ('limits', core::health_timeout_s), which the command gets
// as --timeout, and core::k_health_unit_slack_s more, so that rtprov says it ran out of
// time before systemd kills it. packaging/rtprov-health.service is this unit for the
// default limits.
std::string render_health_unit(const std::string& profile_name, const std::string& rtprov_path,
                               const core::SelftestThresholds& limits);

} // namespace rtprov::systemd
