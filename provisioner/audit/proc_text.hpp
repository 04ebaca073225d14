// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/core/cpu_list.hpp"
#include "provisioner/core/sched_policy.hpp"
#include "provisioner/core/text.hpp"
#include "provisioner/system/proc_stat.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

// Parsers for the text of /proc files the audit reads (layouts from proc(5) and
// Documentation/filesystems/proc.rst). Pure: text in, values out; malformed input gives
// nullopt or skips the line, never throws.
namespace rtprov::audit {

// A thread's scheduling policy and its stat line are read by system/proc_stat.hpp.
using system::parse_stat;
using system::TaskStat;
using system::ThreadPolicy;

// The policy's word ('fifo', as core::to_string), 'unknown' for nullopt.
std::string to_string(const ThreadPolicy& policy);
// What 'ps -o cls' shows: TS, FF, RR, B, IDL, DLN, '?'.
std::string ps_class(const ThreadPolicy& policy);
// core::is_realtime; false for nullopt.
bool is_realtime(const ThreadPolicy& policy);

// Bits of the flags field (include/linux/sched.h): PF_KTHREAD, a kernel thread;
// PF_WQ_WORKER, a workqueue worker (kworker, and a rescuer while it runs); and
// PF_NO_SETAFFINITY, a thread whose CPUs only the kernel sets: sched_setaffinity(2), and so
// taskset(1), fails for it with EINVAL (kthread_bind_mask() sets it on per-CPU threads and
// workqueue workers).
inline constexpr unsigned long k_pf_kthread = 0x00200000;
inline constexpr unsigned long k_pf_wq_worker = 0x00000020;
inline constexpr unsigned long k_pf_no_setaffinity = 0x04000000;

// Cpus_allowed_list from a status file; nullopt when it is missing or malformed.
std::optional<core::CpuList> parse_cpus_allowed(std::string_view status);

// The effective user id on the 'Uid:' line of a status file (real, effective, saved and
// file system uid, proc(5)); nullopt when it is missing or malformed.
std::optional<unsigned> parse_status_uid(std::string_view status);

// CAP_SYS_NICE (include/uapi/linux/capability.h): raise a thread to any real-time priority
// whatever its RLIMIT_RTPRIO (sched(7)).
inline constexpr unsigned k_cap_sys_nice = 23;

// True when the 'CapEff:' mask of a status file holds capability 'cap'; nullopt when the
// line is missing or malformed.
std::optional<bool> parse_status_has_cap(std::string_view status, unsigned cap);

// What /proc/timer_list shows of each CPU (kernel/time/timer_list.c, print_cpu()):
// '.hres_active' is printed only by a kernel with CONFIG_HIGH_RES_TIMERS, the tick's
// state only by one with CONFIG_TICK_ONESHOT: '.nohz_mode' (0 periodic tick, 1 and 2
// tickless idle) on older kernels, the flag '.nohz' on newer ones.
struct TimerList {
    unsigned cpus = 0;        // 'cpu: N' sections
    unsigned hres_shown = 0;  // CPUs with a '.hres_active' line
    unsigned hres_active = 0; // ... that says 1
    unsigned nohz_shown = 0;  // CPUs with a '.nohz' or '.nohz_mode' line
    unsigned nohz_active = 0; // ... that is not 0
};

// Nullopt when the text has no 'cpu: N' section.
std::optional<TimerList> parse_timer_list(std::string_view text);

// One line of /proc/mounts (proc(5); the fields of fstab(5)), with the octal escapes of
// blanks and backslashes ('\040') decoded.
struct Mount {
    std::string source;  // '/dev/sda2', 'server:/music', 'sshfs#me@host:'
    std::string point;   // '/media/usb'
    std::string type;    // 'ext4', 'nfs4', 'fuse.sshfs', 'fuseblk'
    std::string options; // 'rw,relatime'
};

std::vector<Mount> parse_mounts(std::string_view text);

// One resource limit value: a number or 'unlimited'.
struct LimitValue {
    bool unlimited = false;
    std::uint64_t value = 0;
    friend bool operator==(const LimitValue&, const LimitValue&) = default;
};

// True when 'have' is at least 'need'.
bool covers(const LimitValue& have, const LimitValue& need);
// '40', 'unlimited'.
std::string to_string(const LimitValue& limit);
// Bytes the way systemd writes sizes: 'unlimited', '64M', '8388608' -> '8M', '1000'.
std::string bytes_text(const LimitValue& limit);

struct SoftHard {
    LimitValue soft;
    LimitValue hard;
    friend bool operator==(const SoftHard&, const SoftHard&) = default;
};

// The two limits the audit reads from /proc/<pid>/limits.
struct ProcessLimits {
    std::optional<SoftHard> rtprio;  // 'Max realtime priority'
    std::optional<SoftHard> memlock; // 'Max locked memory', bytes
};

ProcessLimits parse_limits(std::string_view text);

// A profile's limit_memlock ('infinity', '512M', '65536'; K, M, G, T are powers of 1024
// as in systemd.exec(5)); nullopt when it is neither.
std::optional<LimitValue> parse_memlock_setting(const std::string& text);

// One numbered line of /proc/interrupts.
struct InterruptLine {
    unsigned irq = 0;
    std::map<unsigned, std::uint64_t> counts; // by CPU, from the header's CPUn columns
    std::string chip;                         // 'IO-APIC', 'GICv2', 'PCI-MSIX-0000:00:01.0'
    std::optional<unsigned> hwirq;            // '30' (GIC) or the number in '2-edge' (x86)
    std::string name;                         // the handlers: 'xhci_hcd', 'ACPI:Ged'
};

// The numbered lines of /proc/interrupts; the named ones (LOC, RES, IPI0, ...) are
// architecture interrupts without an entry in /proc/irq and are left out.
std::vector<InterruptLine> parse_interrupts(std::string_view text);

using system::systemd_cgroup;

// True when cgroup path 'path' is the unit's cgroup or below it
// ('/system.slice/mpd.service', '/rtprov.slice/mpd.service').
bool cgroup_in_unit(std::string_view path, std::string_view unit);

using core::words;

} // namespace rtprov::audit
