// SPDX-License-Identifier: Apache-2.0
#include "provisioner/audit/system_view.hpp"

#include "provisioner/audit/filesystem_checks.hpp"

#include "provisioner/boot/kernel_config.hpp"
#include "provisioner/core/error.hpp"
#include "provisioner/core/text.hpp"
#include "provisioner/fs/root.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <sstream>

namespace rtprov::audit {

namespace stdfs = std::filesystem;

namespace {

using RootReader = system::SysRoot;

std::optional<Thread> read_thread(const RootReader& r, const std::string& dir) {
    Fact<std::string> stat_text = r.text(dir + "/stat");
    if (!stat_text)
        return std::nullopt;
    std::optional<TaskStat> stat = parse_stat(*stat_text);
    if (!stat)
        return std::nullopt;
    Thread t;
    t.tid = stat->pid;
    t.comm = stat->comm;
    t.policy = stat->policy;
    t.rt_priority = stat->rt_priority;
    t.last_cpu = stat->processor;
    t.flags = stat->flags;
    if (Fact<std::string> status = r.text(dir + "/status"))
        t.allowed = parse_cpus_allowed(*status);
    return t;
}

std::optional<Process> read_process(const RootReader& r, int pid) {
    const std::string dir = "/proc/" + std::to_string(pid);
    Fact<std::string> stat_text = r.text(dir + "/stat");
    if (!stat_text)
        return std::nullopt; // ended meanwhile
    std::optional<TaskStat> stat = parse_stat(*stat_text);
    if (!stat)
        return std::nullopt;
    Process p;
    p.pid = pid;
    p.ppid = stat->ppid;
    p.comm = stat->comm;
    p.kernel_thread = (stat->flags & k_pf_kthread) != 0 || p.ppid == 2 || pid == 2;
    if (Fact<std::string> cgroup = r.text(dir + "/cgroup"))
        p.cgroup = systemd_cgroup(*cgroup);
    if (Fact<std::string> status = r.text(dir + "/status")) {
        p.uid = parse_status_uid(*status);
        p.cap_sys_nice = parse_status_has_cap(*status, k_cap_sys_nice).value_or(false);
    }
    Fact<std::string> limits = r.text(dir + "/limits");
    if (limits)
        p.limits.value = parse_limits(*limits);
    else
        p.limits.problem = limits.problem;
    if (auto tids = r.numbered(dir + "/task")) {
        for (int tid : *tids)
            if (auto t = read_thread(r, dir + "/task/" + std::to_string(tid)))
                p.threads.push_back(std::move(*t));
    } else if (auto t = read_thread(r, dir)) {
        p.threads.push_back(std::move(*t)); // no task/ folder: the process is its one thread
    }
    return p;
}

Fact<std::vector<Process>> read_processes(const RootReader& r) {
    Fact<std::vector<Process>> fact;
    auto pids = r.numbered("/proc");
    if (!pids)
        return Fact<std::vector<Process>>::failed(pids.problem, pids.absent);
    fact.value.emplace();
    for (int pid : *pids)
        if (auto p = read_process(r, pid))
            fact.value->push_back(std::move(*p));
    // A running system has at least init and the reader itself: none read is not "no
    // task on the reserved CPUs" but "could not see".
    if (fact.value->empty()) {
        fact.value.reset();
        fact.problem = "no process could be read in '/proc'";
    }
    return fact;
}

// Rules for which IRQs cannot be moved live with the check (reserved_cpu_checks.cpp);
// this only gathers what /proc/irq and /proc/interrupts show.
Fact<std::vector<Irq>> read_irqs(const RootReader& r) {
    Fact<std::vector<Irq>> fact;
    auto numbers = r.numbered("/proc/irq");
    if (!numbers)
        return Fact<std::vector<Irq>>::failed(numbers.problem, numbers.absent);
    std::vector<InterruptLine> lines;
    if (Fact<std::string> interrupts = r.text("/proc/interrupts"))
        lines = parse_interrupts(*interrupts);
    fact.value.emplace();
    for (int number : *numbers) {
        Irq irq;
        irq.number = static_cast<unsigned>(number);
        for (const InterruptLine& line : lines)
            if (line.irq == irq.number) {
                irq.name = line.name;
                irq.chip = line.chip;
                irq.hwirq = line.hwirq;
                irq.counts = line.counts;
            }
        const std::string dir = "/proc/irq/" + std::to_string(number);
        if (Fact<core::CpuList> affinity = r.cpu_list(dir + "/smp_affinity_list"))
            irq.affinity = *affinity;
        if (Fact<core::CpuList> effective = r.cpu_list(dir + "/effective_affinity_list"))
            irq.effective = *effective;
        irq.affinity_writable = r.has_write_bit(dir + "/smp_affinity_list");
        fact.value->push_back(std::move(irq));
    }
    return fact;
}

Fact<std::map<unsigned, std::string>> read_governors(const RootReader& r,
                                                     const Fact<core::CpuList>& online) {
    Fact<std::map<unsigned, std::string>> fact;
    if (!online) {
        fact.problem = online.problem;
        return fact;
    }
    fact.value.emplace();
    for (unsigned cpu : online->cpus()) {
        const std::string cpu_dir = "/sys/devices/system/cpu/cpu" + std::to_string(cpu);
        if (!r.exists(cpu_dir)) {
            // Every online CPU has its folder: without it, nothing here can be seen.
            fact.value.reset();
            fact.problem = "cannot read '" + cpu_dir + "', the folder of an online CPU";
            return fact;
        }
        const std::string dir = cpu_dir + "/cpufreq";
        if (!r.exists(dir))
            continue; // no cpufreq driver for this CPU: nothing scales its frequency
        Fact<std::string> governor = r.value(dir + "/scaling_governor");
        if (!governor) {
            fact.value.reset();
            fact.problem = governor.problem;
            return fact;
        }
        (*fact.value)[cpu] = *governor;
    }
    return fact;
}

// The config Debian's and Raspberry Pi OS's kernel packages install beside the image,
// /boot/config-<uname -r>, read as boot::parse_kernel_config reads every other.
Fact<std::map<std::string, std::string>> read_kernel_config(const RootReader& r,
                                                            const Fact<std::string>& release) {
    Fact<std::map<std::string, std::string>> fact;
    if (!release) {
        fact.problem = release.problem + ", so the running kernel's config is not known";
        return fact;
    }
    if (release->empty() || release->find('/') != std::string::npos) {
        fact.problem = "'/proc/sys/kernel/osrelease' holds '" + *release +
                       "', not a kernel release, so the running kernel's config is not known";
        return fact;
    }
    Fact<std::string> text = r.text("/boot/config-" + *release);
    if (!text)
        fact.problem = text.problem;
    else
        fact.value = boot::parse_kernel_config(*text);
    return fact;
}

// limits.conf(5) lines: '#' starts a comment, fields are separated by blanks.
// False, with the problem, when the file is there but cannot be read: the rules would
// be incomplete.
bool add_limits_rules(const RootReader& r, const std::string& path, std::vector<LimitsRule>& rules,
                      std::string& problem) {
    Fact<std::string> text = r.text(path, fs::caps::k_config);
    if (!text) {
        if (text.absent)
            return true;
        problem = text.problem;
        return false;
    }
    std::istringstream in(*text);
    std::string line;
    for (int number = 1; std::getline(in, line); ++number) {
        line = line.substr(0, line.find('#'));
        std::vector<std::string> fields = core::words(line);
        if (fields.size() == 4)
            rules.push_back({path, number, fields[0], fields[1], fields[2], fields[3]});
    }
    return true;
}

// How many rules the audit reads: it judges each user who runs audio against each rule,
// and a limits.conf holds a few; more is not this system's file, or not one to judge by.
constexpr std::size_t k_most_limits_rules = 4096;

Fact<std::vector<LimitsRule>> read_limits_rules(const RootReader& r) {
    std::vector<LimitsRule> rules;
    std::string problem;
    if (!add_limits_rules(r, "/etc/security/limits.conf", rules, problem))
        return Fact<std::vector<LimitsRule>>::failed(problem);
    auto too_many = [&] {
        return Fact<std::vector<LimitsRule>>::failed(
            "/etc/security/limits.conf and limits.d hold more than " +
            std::to_string(k_most_limits_rules) +
            " rules, more than the audit judges users by; is it this system's?");
    };
    if (rules.size() > k_most_limits_rules)
        return too_many();
    Fact<std::vector<std::string>> names = r.names("/etc/security/limits.d");
    if (!names && !names.absent)
        return Fact<std::vector<LimitsRule>>::failed(names.problem);
    if (names)
        for (const std::string& name : *names) // pam_limits' glob: *.conf, no dot files
            if (name.size() > 5 && name[0] != '.' && name.ends_with(".conf")) {
                if (!add_limits_rules(r, "/etc/security/limits.d/" + name, rules, problem))
                    return Fact<std::vector<LimitsRule>>::failed(problem);
                if (rules.size() > k_most_limits_rules)
                    return too_many();
            }
    Fact<std::vector<LimitsRule>> fact;
    fact.value = std::move(rules);
    return fact;
}

Fact<DeviceNode> read_device(const RootReader& r, const std::string& path) {
    Fact<DeviceNode> fact;
    Fact<std::filesystem::path> host = r.host(path);
    struct stat st {};
    if (!host) {
        fact = Fact<DeviceNode>::failed(host.problem, host.absent);
    } else if (::stat(host->c_str(), &st) != 0) {
        fact = Fact<DeviceNode>::failed("cannot see '" + path + "': " + std::strerror(errno),
                                        errno == ENOENT);
    } else if (!S_ISCHR(st.st_mode)) {
        fact = Fact<DeviceNode>::failed("'" + path + "' is not a character device");
    } else {
        fact.value =
            DeviceNode{unsigned(st.st_mode & 07777), unsigned(st.st_gid), unsigned(st.st_uid)};
    }
    return fact;
}

Fact<std::map<std::string, std::string>> read_vulnerabilities(const RootReader& r) {
    const std::string dir = "/sys/devices/system/cpu/vulnerabilities";
    Fact<std::map<std::string, std::string>> fact;
    Fact<std::vector<std::string>> names = r.names(dir);
    if (!names)
        return Fact<std::map<std::string, std::string>>::failed(names.problem, names.absent);
    fact.value.emplace();
    std::vector<std::string> unread;
    for (const std::string& name : *names) {
        if (Fact<std::string> line = r.value(dir + "/" + name))
            (*fact.value)[name] = *line;
        else
            unread.push_back(name);
    }
    // none read is not "nothing mitigated"
    if (fact.value->empty())
        return Fact<std::map<std::string, std::string>>::failed(
            "'" + dir + "' holds no readable file" +
            (unread.empty() ? std::string() : " (" + core::join(unread, ", ") + ")"));
    return fact;
}

} // namespace

SystemView read_kernel_view(const std::string& root) {
    const RootReader r(root);
    SystemView v;
    v.cmdline = r.value("/proc/cmdline");
    v.kernel_version = r.value("/proc/sys/kernel/version");
    v.kernel_release = r.value("/proc/sys/kernel/osrelease");
    v.kernel_config = read_kernel_config(r, v.kernel_release);
    v.sched_features = r.text("/sys/kernel/debug/sched/features");
    v.sched_preempt = r.value("/sys/kernel/debug/sched/preempt");
    v.rt_runtime_us = r.integer("/proc/sys/kernel/sched_rt_runtime_us");
    v.rt_period_us = r.integer("/proc/sys/kernel/sched_rt_period_us");
    v.cpus = system::read_cpus(r);
    return v;
}

SystemView read_system_view(const std::string& root, const std::vector<std::string>& units) {
    const RootReader r(root);
    SystemView v = read_kernel_view(root);
    v.governors = read_governors(r, v.cpus.online);
    v.irqs = read_irqs(r);
    v.processes = read_processes(r);
    v.irq_lines = system::read_irq_lines(r);
    if (v.irq_lines)
        v.sound_cards = system::read_sound_cards(r, *v.irq_lines);
    else
        v.sound_cards.problem = v.irq_lines.problem;
    v.smt_control = r.value("/sys/devices/system/cpu/smt/control");
    v.cpu0_siblings = r.cpu_list("/sys/devices/system/cpu/cpu0/topology/thread_siblings_list");
    v.vulnerabilities = read_vulnerabilities(r);
    v.swappiness = r.integer("/proc/sys/vm/swappiness");
    v.swaps = r.text("/proc/swaps");
    v.groups = r.text("/etc/group", fs::caps::k_config);
    v.limits_rules = read_limits_rules(r);
    v.cpu_dma_latency = read_device(r, "/dev/cpu_dma_latency");
    v.passwd = r.text("/etc/passwd", fs::caps::k_config);
    if (Fact<std::string> text = r.text("/proc/timer_list")) {
        if (std::optional<TimerList> timers = parse_timer_list(*text))
            v.timer_list.value = *timers;
        else
            v.timer_list.problem = "'/proc/timer_list' shows no CPU";
    } else {
        v.timer_list = Fact<TimerList>::failed(text.problem, text.absent);
    }
    if (Fact<std::string> text = r.text("/proc/mounts"))
        v.mounts.value = parse_mounts(*text);
    else
        v.mounts = Fact<std::vector<Mount>>::failed(text.problem, text.absent);
    v.mpd_conf = r.text("/etc/mpd.conf", fs::caps::k_config);
    for (const MusicFolder& folder : music_folders(v).folders)
        if (folder.path.starts_with('/'))
            if (Fact<std::string> real = r.resolve(folder.path))
                v.present_folders.emplace(folder.path, *real);
    if (Fact<std::string> mask = r.value("/sys/devices/virtual/workqueue/cpumask")) {
        v.workqueue_cpumask = core::parse_cpu_mask(*mask);
        if (!v.workqueue_cpumask)
            v.workqueue_cpumask.problem = "'/sys/devices/virtual/workqueue/cpumask' holds '" +
                                          *mask + "': " + v.workqueue_cpumask.problem;
    } else {
        v.workqueue_cpumask = Fact<core::CpuList>::failed(mask.problem, mask.absent);
    }
    if (v.irq_lines)
        v.usb_hosts = system::read_usb_hosts(r, *v.irq_lines);
    for (const std::string& unit : units)
        v.units.emplace(unit, system::read_unit_file(r, unit));
    // the rtkit package's D-Bus activation file (rtkit-daemon is started on demand)
    v.rtkit = r.exists("/usr/share/dbus-1/system-services/org.freedesktop.RealtimeKit1.service");
    return v;
}

std::set<unsigned> SystemView::sound_irqs(const std::vector<std::string>& globs,
                                          std::vector<std::string>* unmatched) const {
    if (!irq_lines)
        return {};
    // no ALSA: the profile's names still name IRQs, as rtprov irq-tune applies them
    static const std::vector<system::SoundCard> k_none;
    return system::sound_path_irqs(sound_cards ? *sound_cards : k_none, *irq_lines, globs,
                                   unmatched);
}

} // namespace rtprov::audit
