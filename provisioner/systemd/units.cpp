// SPDX-License-Identifier: Apache-2.0
#include "provisioner/systemd/units.hpp"

#include "provisioner/core/plan.hpp"

namespace rtprov::systemd {

std::string dropin_path(const std::string& unit) {
    return std::string(k_unit_dir) + "/" + unit + ".d/" + k_dropin_name;
}

namespace {

std::string header(const std::string& profile_name, const std::string& what) {
    return core::owned_file_header(profile_name) + "# " + what + "\n";
}

} // namespace

std::string render_service_dropin(const std::string& profile_name, const std::string& unit,
                                  const ServiceSettings& s) {
    std::string out =
        header(profile_name, "CPUs, scheduling and limits for " + unit) + "[Service]\n";
    if (s.slice)
        out += "Slice=" + *s.slice + "\n";
    if (s.cpu_affinity)
        out += "CPUAffinity=\nCPUAffinity=" + s.cpu_affinity->to_string() + "\n";
    if (s.policy)
        out += "CPUSchedulingPolicy=" + *s.policy + "\n";
    if (s.priority)
        out += "CPUSchedulingPriority=" + std::to_string(*s.priority) + "\n";
    if (s.reset_on_fork)
        out += std::string("CPUSchedulingResetOnFork=") + (*s.reset_on_fork ? "yes" : "no") + "\n";
    if (s.limit_rtprio)
        out += "LimitRTPRIO=" + std::to_string(*s.limit_rtprio) + "\n";
    if (s.limit_memlock)
        out += "LimitMEMLOCK=" + *s.limit_memlock + "\n";
    if (s.nice)
        out += "Nice=" + std::to_string(*s.nice) + "\n";
    if (s.io_class)
        out += "IOSchedulingClass=" + *s.io_class + "\n";
    return out;
}

std::string render_allowed_cpus_dropin(const std::string& profile_name, const std::string& unit,
                                       const std::string& section, const core::CpuList& cpus) {
    return header(profile_name, "keeps " + unit + " on the housekeeping cores") + "[" + section +
           "]\nAllowedCPUs=" + cpus.to_string() + "\n";
}

std::string render_audio_slice(const std::string& profile_name, const core::CpuList& reserved) {
    return header(profile_name, "the reserved cores, for the audio services (Slice=" +
                                    std::string(k_audio_slice) + ")") +
           "[Unit]\nDescription=rtprov: reserved cores for audio services\n"
           "Documentation=man:rtprov(1)\n\n[Slice]\nAllowedCPUs=" +
           reserved.to_string() + "\n";
}

std::string render_sched_features_unit(const std::string& profile_name,
                                       const std::string& rtprov_path) {
    // Since dd29c017aed6 non-PREEMPT_RT kernels default to NO_RT_PUSH_IPI, which causes
    // multi-second PI-boost starvation in audio workloads (LKML, 2026-08-14);
    // Debian 13's 6.12.117 already ships it (Debian's linux changelog, 6.12.96-1).
    return header(profile_name, "re-enables RT_PUSH_IPI at every boot on kernels without "
                                "PREEMPT_RT") +
           "[Unit]\n"
           "Description=rtprov: RT_PUSH_IPI on (non-PREEMPT_RT kernels)\n"
           "Documentation=man:rtprov(1)\n"
           "DefaultDependencies=no\n"
           "After=sys-kernel-debug.mount\n"
           "Before=sysinit.target shutdown.target\n"
           "Conflicts=shutdown.target\n\n"
           "[Service]\n"
           "Type=oneshot\n"
           "RemainAfterExit=yes\n"
           "ExecStart=" +
           rtprov_path +
           " sched-features\n\n"
           "[Install]\n"
           "WantedBy=sysinit.target\n";
}

std::string render_dma_latency_unit(const std::string& profile_name,
                                    const std::string& rtprov_path) {
    // cyclictest does the same while it measures; it hides deep-idle exit latency
    // (43 µs against 211 µs on the same core of the reference box).
    return header(profile_name, "holds /dev/cpu_dma_latency at 0: no deep idle states") +
           "[Unit]\nDescription=rtprov: hold /dev/cpu_dma_latency at 0 (no deep CPU idle)\n"
           "Documentation=man:rtprov(1)\n\n"
           "[Service]\nExecStart=" +
           rtprov_path +
           " hold-cpu-dma-latency\n\n"
           "[Install]\nWantedBy=multi-user.target\n";
}

std::string render_governor_unit(const std::string& profile_name, const std::string& governor) {
    // '$$' is a literal '$' in systemd's ExecStart= (systemd.service(5), "Command lines").
    return header(profile_name, "CPU frequency governor '" + governor + "' at boot") +
           "[Unit]\nDescription=rtprov: CPU frequency governor " + governor +
           "\nDocumentation=man:rtprov(1)\n\n"
           "[Service]\nType=oneshot\nRemainAfterExit=yes\n"
           "ExecStart=/bin/sh -c 'for f in /sys/devices/system/cpu/cpu*/cpufreq/scaling_governor; "
           "do [ -w \"$$f\" ] && echo " +
           governor +
           " > \"$$f\"; done; true'\n\n"
           "[Install]\nWantedBy=multi-user.target\n";
}

std::string render_irq_tune_unit(const std::string& profile_name, const std::string& command) {
    return header(profile_name, "the sound path's interrupts, the others, and the unbound "
                                "workqueues, at boot and for each sound card that appears") +
           "[Unit]\nDescription=rtprov: IRQ thread priorities and CPUs (%i)\n"
           "Documentation=man:rtprov(1)\nAfter=sound.target\n\n"
           "[Service]\nType=oneshot\nExecStart=" +
           command +
           "\n\n"
           "[Install]\nDefaultInstance=boot\nWantedBy=multi-user.target\n";
}

std::string render_sound_udev_rule(const std::string& profile_name) {
    return header(profile_name, "the sound path's interrupts again for a sound card that "
                                "appears after boot") +
           "ACTION==\"add\", SUBSYSTEM==\"sound\", KERNEL==\"card[0-9]*\", TAG+=\"systemd\", "
           "ENV{SYSTEMD_WANTS}+=\"rtprov-irq-tune@%k.service\"\n";
}

std::string render_irqbalance_dropin(const std::string& profile_name,
                                     const core::CpuList& reserved) {
    return header(profile_name, "irqbalance never moves an interrupt to the reserved cores") +
           "[Service]\nEnvironment=IRQBALANCE_BANNED_CPULIST=" + reserved.to_string() + "\n";
}

std::string render_partition_unit(const std::string& profile_name, const std::string& rtprov_path) {
    return header(profile_name, "makes rtprov.slice an isolated cpuset partition") +
           "[Unit]\nDescription=rtprov: isolated cpuset partition for rtprov.slice\n"
           "Documentation=man:rtprov(1)\n"
           "Wants=" +
           std::string(k_audio_slice) + "\nAfter=" + k_audio_slice +
           "\n\n"
           "[Service]\nType=oneshot\nRemainAfterExit=yes\nExecStart=" +
           rtprov_path + " cpuset-partition " + k_audio_slice +
           " isolated\n\n"
           "[Install]\nWantedBy=multi-user.target\n";
}

std::string render_trial_unit(const std::string& profile_name, const std::string& rtprov_path) {
    return header(profile_name, "checks a trial boot, then commits it or falls back") +
           "[Unit]\nDescription=rtprov: check a trial boot (self-test and audit), then commit "
           "it or fall back\nDocumentation=man:rtprov(1)\n"
           "After=multi-user.target\nConditionPathExists=" +
           std::string(core::k_trial_record_path) +
           "\n\n"
           "[Service]\nType=oneshot\nExecStart=" +
           rtprov_path + " trial check" +
           "\n\n"
           "[Install]\nWantedBy=multi-user.target\n";
}

std::string render_trial_deadline_target(const std::string& profile_name) {
    return header(profile_name, "the deadline of a trial boot") +
           "[Unit]\nDescription=rtprov: deadline of a trial boot (reboots into the previous "
           "boot configuration when the check has not finished)\nDocumentation=man:rtprov(1)\n"
           "Wants=" +
           std::string(core::k_trial_unit) + "\nAfter=" + core::k_trial_unit +
           "\n# A job that has not finished in time: the boot never reached the check "
           "(systemd.unit(5), JobTimeoutSec=).\nJobTimeoutSec=" +
           std::to_string(core::k_trial_deadline_s) + "\nJobTimeoutAction=reboot-force\n";
}

std::string render_trial_watchdog(const std::string& profile_name) {
    return header(profile_name, "the hardware watchdog while a trial is applied") +
           "# PID 1 pets the hardware watchdog; a hung kernel or PID 1 is reset after this "
           "long\n# (systemd-system.conf(5)). Without a watchdog device it does nothing.\n"
           "[Manager]\nRuntimeWatchdogSec=" +
           std::to_string(k_trial_watchdog_s) + "s\n";
}

std::string render_health_unit(const std::string& profile_name, const std::string& rtprov_path,
                               const core::SelftestThresholds& limits) {
    const unsigned gate_s = core::health_timeout_s(limits);
    // The order of a boot check (docs/AUTOMATIC_BOOT_ASSESSMENT.md in systemd's source,
    // "How to adapt this scheme"): before boot-complete.target, which requires it; the
    // target pulls in the check, never the other way. After multi-user.target, as systemd's
    // own systemd-boot-check-no-failures.service is, so that the player is up, and after
    // first boot and the trial's check, whose verdicts come first. No cycle: the target
    // has no order against multi-user.target (systemd.special(7)), and a target does not
    // add After= on a unit it wants that is ordered after it (systemd.target(5)).
    // A oneshot has no start timeout by default (systemd.service(5), TimeoutStartSec=).
    return header(profile_name, "the health gate: boot-complete.target, and all that waits for "
                                "it, waits for rtprov's verdict") +
           "[Unit]\n"
           "Description=rtprov: health gate of the boot (self-test and audit against the "
           "applied profile)\n"
           "Documentation=man:rtprov(1) file:/usr/share/doc/rtprov/update-gate.md\n"
           "After=multi-user.target " +
           core::k_firstboot_unit + " " + core::k_trial_unit +
           "\nBefore=boot-complete.target\n\n"
           "[Service]\n"
           "Type=oneshot\n"
           "RemainAfterExit=yes\n"
           "ExecStart=" +
           rtprov_path + " health --boot --timeout " + std::to_string(gate_s) +
           "\nTimeoutStartSec=" + std::to_string(gate_s + core::k_health_unit_slack_s) +
           "s\n\n"
           "[Install]\n"
           "RequiredBy=boot-complete.target\n"
           "WantedBy=multi-user.target\n";
}

} // namespace rtprov::systemd
