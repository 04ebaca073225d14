// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/audit/system_view.hpp"

#include "tests/unit/temp_dir.hpp"

#include <sys/stat.h>

#include <string>
#include <vector>

// A /proc and /sys tree shaped like a running 4-CPU machine's, for the audit tests. It
// starts healthy: a generic kernel with RT_PUSH_IPI on and its preemption mode visible in
// debugfs (no /boot/config), high-resolution timers and a tickless idle on every CPU,
// CPUs 2-3 isolated and nohz_full, the unbound workqueues on CPUs 0-1,
// 'performance' everywhere, default RT throttling, no processes and no IRQs, no SMT,
// nothing mitigated, no swap, one ext4 file system, no ALSA, only root in /etc/passwd
// and no user in group audio.
namespace audit_fixture {

inline constexpr int k_other = 0;
inline constexpr int k_fifo = 1;
inline constexpr int k_rr = 2;
inline constexpr int k_idle = 5;
inline constexpr unsigned long k_kthread_flags = 0x00208040; // PF_KTHREAD among others
// A per-CPU kernel thread or a workqueue worker: PF_NO_SETAFFINITY too
inline constexpr unsigned long k_bound_kthread_flags = k_kthread_flags | 0x04000000;
inline constexpr unsigned long k_wq_worker_flags = k_bound_kthread_flags | 0x00000020;

// /proc/timer_list of 'cpus' CPUs as recent kernels print it ('.nohz' a flag), or
// as older ones do ('.nohz_mode' 2: tickless with high-resolution timers); with
// 'hres' false, as a kernel without CONFIG_HIGH_RES_TIMERS (no '.hres_active' line).
inline std::string timer_list_text(unsigned cpus, bool hres = true, bool nohz = true,
                                   bool old_format = false) {
    std::string out = "Timer List Version: v0.10\nHRTIMER_MAX_CLOCK_BASES: 8\nnow at 1 nsecs\n\n";
    for (unsigned cpu = 0; cpu < cpus; ++cpu) {
        out += "cpu: " + std::to_string(cpu) + "\n clock 0:\n  .base:       0\n";
        if (hres)
            out += "  .expires_next   : 1 nsecs\n  .hres_active    : 1\n  .nr_events      : 5\n";
        out += old_format ? std::string("  .nohz_mode      : ") + (nohz ? "2" : "0") + "\n"
                          : std::string("  .nohz           : ") + (nohz ? "1" : "0") +
                                "\n  .highres        : " + (hres ? "1" : "0") + "\n";
        out += "  .tick_stopped   : 0\njiffies: 4295260577\n\n";
    }
    return out + "Tick Device: mode:     1\nBroadcast device\nClock Event Device: <NULL>\n";
}
inline const std::string k_generic = "#1 SMP PREEMPT_DYNAMIC Debian 6.12.117-1 (2025-11-10)";
inline const std::string k_rt = "#1 SMP PREEMPT_RT Debian 6.12.117-1 (2025-11-10)";
inline const std::string k_cmdline =
    "BOOT_IMAGE=/boot/vmlinuz-6.12.117+deb13-amd64 root=UUID=1234 ro quiet "
    "isolcpus=managed_irq,domain,2-3 nohz_full=2-3 rcu_nocbs=2-3 irqaffinity=0-1";

// A limits file as the kernel writes it, with the two lines the audit reads.
inline std::string limits_text(const std::string& rtprio, const std::string& memlock) {
    auto line = [](const std::string& name, const std::string& value, const std::string& unit) {
        std::string out = name;
        out.resize(26, ' ');
        std::string soft = value;
        soft.resize(21, ' ');
        std::string hard = value;
        hard.resize(21, ' ');
        return out + soft + hard + unit + "\n";
    };
    return line("Limit", "Soft Limit", "Units") + line("Max cpu time", "unlimited", "seconds") +
           line("Max locked memory", memlock, "bytes") + line("Max realtime priority", rtprio, "") +
           line("Max realtime timeout", "unlimited", "us");
}

struct FakeThread {
    int tid = 0;
    std::string comm;
    int policy = k_other;
    int priority = 0;
    std::string cpus = "0-3";
};

class FakeSystem {
  public:
    TempDir dir;

    FakeSystem() {
        write("proc/cmdline", k_cmdline + "\n");
        kernel(k_generic);
        write("proc/sys/kernel/osrelease", "6.12.117+deb13-amd64\n");
        write("sys/kernel/debug/sched/features", "GENTLE_FAIR_SLEEPERS RT_PUSH_IPI TTWU_QUEUE\n");
        write("sys/kernel/debug/sched/preempt", "none voluntary (full) lazy\n");
        write("proc/sys/kernel/sched_rt_runtime_us", "950000\n");
        write("proc/sys/kernel/sched_rt_period_us", "1000000\n");
        write("sys/devices/system/cpu/present", "0-3\n");
        write("sys/devices/system/cpu/online", "0-3\n");
        write("sys/devices/system/cpu/isolated", "2-3\n");
        write("sys/devices/system/cpu/nohz_full", "2-3\n");
        for (int cpu = 0; cpu < 4; ++cpu)
            governor(cpu, "performance");
        std::filesystem::create_directories(dir.path() + "/proc/irq");
        std::filesystem::create_directories(dir.path() + "/sys/kernel/irq");
        m_interrupts = "           CPU0       CPU1       CPU2       CPU3\n";
        write("proc/interrupts", m_interrupts);
        // no SMT, nothing mitigated, no swap, no user in group audio
        write("sys/devices/system/cpu/smt/control", "notsupported\n");
        write("sys/devices/system/cpu/vulnerabilities/meltdown", "Not affected\n");
        write("sys/devices/system/cpu/vulnerabilities/spectre_v1", "Vulnerable\n");
        write("proc/sys/vm/swappiness", "60\n");
        write("proc/swaps", "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n");
        write("etc/group", "root:x:0:\naudio:x:29:\n");
        write("etc/passwd", "root:x:0:0:root:/root:/bin/bash\n");
        write("proc/timer_list", timer_list_text(4));
        write("proc/mounts", "/dev/vda / ext4 rw,relatime 0 0\nproc /proc proc rw 0 0\n");
        write("sys/devices/virtual/workqueue/cpumask", "3\n");
    }

    void write(const std::string& path, const std::string& content) const {
        dir.write(path, content);
    }
    void remove(const std::string& path) const {
        std::filesystem::remove_all(dir.path() + "/" + path);
    }
    void kernel(const std::string& version) const {
        write("proc/sys/kernel/version", version + "\n");
    }
    void governor(int cpu, const std::string& name) const {
        write("sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/cpufreq/scaling_governor",
              name + "\n");
    }

    // A user-space process with its threads (the first is the main thread, tid == pid),
    // run by 'uid' with the effective capabilities 'cap_eff' (a hex mask, as in status).
    void process(int pid, const std::string& cgroup, const std::vector<FakeThread>& threads,
                 const std::string& limits = limits_text("0", "8388608"), unsigned uid = 0,
                 const std::string& cap_eff = "0000000000000000") const {
        add(pid, 1, 0, cgroup, threads, limits, uid, cap_eff);
    }

    // A kernel thread: a child of kthreadd with PF_KTHREAD (and 'flags' as given).
    void kthread(int pid, const std::string& comm, const std::string& cpus, int policy = k_other,
                 int priority = 0, unsigned long flags = k_kthread_flags) const {
        add(pid, 2, flags, "/", {{pid, comm, policy, priority, cpus}}, limits_text("0", "8388608"),
            0, "000001ffffffffff");
    }

    // An IRQ with its /proc/irq folder and its line in /proc/interrupts.
    void irq(unsigned number, const std::string& chip_and_name, const std::string& affinity,
             const std::string& effective, bool writable = true) {
        const std::string base = "proc/irq/" + std::to_string(number);
        write(base + "/smp_affinity_list", affinity + "\n");
        if (!effective.empty())
            write(base + "/effective_affinity_list", effective + "\n");
        if (!writable)
            ::chmod((dir.path() + "/" + base + "/smp_affinity_list").c_str(), 0444);
        // /sys/kernel/irq/N: the handlers, the last column of /proc/interrupts
        const std::string sys_irq = "sys/kernel/irq/" + std::to_string(number) + "/";
        write(sys_irq + "actions", chip_and_name.substr(chip_and_name.rfind(' ') + 1) + "\n");
        write(sys_irq + "chip_name", chip_and_name.substr(0, chip_and_name.find(' ')) + "\n");
        m_interrupts += " " + std::to_string(number) +
                        ":          5          0          0"
                        "          0  " +
                        chip_and_name + "\n";
        write("proc/interrupts", m_interrupts);
    }

    rtprov::audit::SystemView view() const { return rtprov::audit::read_system_view(dir.path()); }

  private:
    std::string m_interrupts;

    static std::string stat_line(int tid, const std::string& comm, int ppid, unsigned long flags,
                                 int policy, int priority) {
        // Fields 1-52 of proc(5); the audit reads 1, 2, 4, 9, 39, 40 and 41.
        std::vector<std::string> f(53, "0");
        f[1] = std::to_string(tid);
        f[2] = "(" + comm + ")";
        f[3] = "S";
        f[4] = std::to_string(ppid);
        f[9] = std::to_string(flags);
        f[39] = "2";
        f[40] = std::to_string(priority);
        f[41] = std::to_string(policy);
        std::string out;
        for (std::size_t i = 1; i < f.size(); ++i)
            out += (i == 1 ? "" : " ") + f[i];
        return out + "\n";
    }

    void add(int pid, int ppid, unsigned long flags, const std::string& cgroup,
             const std::vector<FakeThread>& threads, const std::string& limits, unsigned uid,
             const std::string& cap_eff) const {
        const std::string base = "proc/" + std::to_string(pid);
        const FakeThread& main = threads.front();
        const std::string id = std::to_string(uid);
        write(base + "/stat", stat_line(pid, main.comm, ppid, flags, main.policy, main.priority));
        write(base + "/status", "Name:\t" + main.comm + "\nUid:\t" + id + "\t" + id + "\t" + id +
                                    "\t" + id + "\nCapEff:\t" + cap_eff + "\nCpus_allowed_list:\t" +
                                    main.cpus + "\n");
        write(base + "/cgroup", "0::" + cgroup + "\n");
        write(base + "/limits", limits);
        for (const FakeThread& t : threads) {
            const std::string task = base + "/task/" + std::to_string(t.tid);
            write(task + "/stat", stat_line(t.tid, t.comm, ppid, flags, t.policy, t.priority));
            write(task + "/status", "Name:\t" + t.comm + "\nCpus_allowed_list:\t" + t.cpus + "\n");
            write(task + "/comm", t.comm + "\n");
        }
    }
};

} // namespace audit_fixture
