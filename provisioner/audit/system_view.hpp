// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/audit/proc_text.hpp"
#include "provisioner/core/cpu_list.hpp"
#include "provisioner/system/cpus.hpp"
#include "provisioner/system/sound_cards.hpp"
#include "provisioner/system/unit_files.hpp"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

// What the running system shows in /proc and /sys, gathered once (through system::SysRoot)
// so that every check is a pure function of it.
namespace rtprov::audit {

using system::Fact;

struct Thread {
    int tid = 0;
    std::string comm; // at most 15 characters, as ps shows it
    ThreadPolicy policy = core::SchedPolicy::other;
    int rt_priority = 0;
    int last_cpu = -1;
    unsigned long flags = 0;              // PF_* bits (k_pf_no_setaffinity, ...)
    std::optional<core::CpuList> allowed; // Cpus_allowed_list; nullopt when unreadable
};

struct Process {
    int pid = 0;
    int ppid = 0;
    std::string comm;
    bool kernel_thread = false;  // PF_KTHREAD, or a child of kthreadd (pid 2)
    std::string cgroup;          // the systemd cgroup path, see systemd_cgroup()
    std::optional<unsigned> uid; // its effective uid; nullopt when unreadable
    bool cap_sys_nice = false;   // CAP_SYS_NICE in its effective capabilities
    std::vector<Thread> threads;
    Fact<ProcessLimits> limits;
};

// An interrupt with a folder in /proc/irq.
struct Irq {
    unsigned number = 0;
    std::string name; // its handlers in /proc/interrupts; "" when it has no line there
    std::string chip;
    std::optional<unsigned> hwirq;
    std::map<unsigned, std::uint64_t> counts; // interrupts so far by CPU (/proc/interrupts)
    std::optional<core::CpuList> affinity;    // smp_affinity_list
    std::optional<core::CpuList> effective;   // effective_affinity_list (not on every arch)
    bool affinity_writable = true;            // smp_affinity_list carries a write permission bit
};

// A rule of /etc/security/limits.conf or /etc/security/limits.d/*.conf (limits.conf(5):
// domain, type, item, value), and where it is.
struct LimitsRule {
    std::string file; // as on the running system
    int line = 0;
    std::string domain, type, item, value;
};

// A device node's permission bits, owner and group.
struct DeviceNode {
    unsigned mode = 0;
    unsigned gid = 0;
    unsigned uid = 0;
};

struct SystemView {
    Fact<std::string> cmdline;        // /proc/cmdline
    Fact<std::string> kernel_version; // /proc/sys/kernel/version: what uname -v says
    Fact<std::string> kernel_release; // /proc/sys/kernel/osrelease: what uname -r says
    // The running kernel's build options, /boot/config-<kernel_release> ('CONFIG_X' ->
    // 'y'); the problem says why not when the release or the file cannot be read.
    Fact<std::map<std::string, std::string>> kernel_config;
    Fact<std::string> sched_features; // /sys/kernel/debug/sched/features
    Fact<std::string> sched_preempt;  // /sys/kernel/debug/sched/preempt (PREEMPT_DYNAMIC)
    Fact<long long> rt_runtime_us;    // /proc/sys/kernel/sched_rt_runtime_us
    Fact<long long> rt_period_us;     // /proc/sys/kernel/sched_rt_period_us
    system::Cpus cpus;                // present, online, isolated, nohz_full
    // scaling_governor of each online CPU that has cpufreq; empty without a cpufreq driver
    Fact<std::map<unsigned, std::string>> governors;
    Fact<std::vector<Irq>> irqs;
    Fact<std::vector<Process>> processes;         // by pid, kernel threads included
    Fact<std::vector<system::IrqLine>> irq_lines; // /sys/kernel/irq: handler names, chips
    // The ALSA cards and the IRQs that feed them (system::read_sound_cards)
    Fact<std::vector<system::SoundCard>> sound_cards;
    // The machine as a whole (machine_checks): /sys/devices/system/cpu/smt/control, and
    // CPU 0's topology/thread_siblings_list for kernels without it
    Fact<std::string> smt_control;
    Fact<core::CpuList> cpu0_siblings;
    // /sys/devices/system/cpu/vulnerabilities: each file's name and first line
    Fact<std::map<std::string, std::string>> vulnerabilities;
    Fact<long long> swappiness; // /proc/sys/vm/swappiness
    Fact<std::string> swaps;    // /proc/swaps
    Fact<std::string> groups;   // /etc/group
    // limits.conf, then limits.d/*.conf by name, as pam_limits reads them; absent files
    // add nothing
    Fact<std::vector<LimitsRule>> limits_rules;
    Fact<DeviceNode> cpu_dma_latency; // /dev/cpu_dma_latency
    Fact<std::string> passwd;         // /etc/passwd
    Fact<TimerList> timer_list;       // /proc/timer_list
    Fact<std::vector<Mount>> mounts;  // /proc/mounts
    Fact<std::string> mpd_conf;       // /etc/mpd.conf: MPD's music_directory and user
    // The music folders of music_folders() that exist: each path, and where it is with its
    // symlinks and '..' resolved (as on the running system)
    std::map<std::string, std::string> present_folders;
    // /sys/devices/virtual/workqueue/cpumask: where unbound workqueue workers may run
    Fact<core::CpuList> workqueue_cpumask;
    std::vector<system::UsbHost> usb_hosts;
    // The units read_system_view() was given, as systemd loads them
    std::map<std::string, Fact<system::UnitFile>> units;
    // RTKit's D-Bus service file is there: a desktop session can ask it for real-time
    bool rtkit = false;

    // The IRQs of the sound path: the cards' and those 'globs' name
    // (system::sound_path_irqs); empty when the IRQs could not be read; with no ALSA, the
    // globs' alone. 'unmatched', when given, gets each glob that matches no IRQ.
    std::set<unsigned> sound_irqs(const std::vector<std::string>& globs,
                                  std::vector<std::string>* unmatched = nullptr) const;
};

// Reads the running system under 'root' ("/" normally; tests give a folder holding proc/,
// sys/ and boot/), with the systemd units 'units' (the profile's services). Paths in
// problems are shown as if 'root' were '/'. Read-only, takes well under a second on a
// normal system, and never throws for a missing or unreadable file: the fact says why. A
// process or thread that ends while it is read is left out.
SystemView read_system_view(const std::string& root = "/",
                            const std::vector<std::string>& units = {});

// Only the kernel's part of it (command line, version, config, scheduler, CPUs): no
// governors, IRQs or processes, for a decision that needs no more.
SystemView read_kernel_view(const std::string& root = "/");

} // namespace rtprov::audit
