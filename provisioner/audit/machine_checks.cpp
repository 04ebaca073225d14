#include "provisioner/audit/machine_checks.hpp"

#include "provisioner/core/text.hpp"

#include <sstream>

namespace rtprov::audit {

namespace {

Check warn(Check c, std::string reason, std::string fix) {
    c.status = Status::warn;
    c.reason = std::move(reason);
    c.fix = std::move(fix);
    return c;
}

Check ok(Check c, std::string reason) {
    c.reason = std::move(reason);
    return c;
}

std::string where(const LimitsRule& rule) {
    return "'" + rule.domain + " " + rule.type + " " + rule.item + " " + rule.value + "' (" +
           rule.file + ":" + std::to_string(rule.line) + ")";
}

// The gid of group 'name' in /etc/group text, or -1.
long group_id(const std::string& groups, const std::string& name) {
    std::istringstream in(groups);
    std::string line;
    while (std::getline(in, line)) {
        std::vector<std::string> f = core::split(line, ':');
        if (f.size() >= 3 && f[0] == name) {
            try {
                return std::stol(f[2]);
            } catch (const std::exception&) {
                return -1;
            }
        }
    }
    return -1;
}

const char* k_limits_fix =
    "let group audio run real-time and lock its memory, as JACK's documentation asks "
    "(https://jackaudio.org/faq/linux_rt_config.html): a file "
    "/etc/security/limits.d/95-audio.conf with '@audio - rtprio 95' and '@audio - memlock "
    "unlimited' (limits.conf(5)); its members log in again";

} // namespace

// /sys/devices/system/cpu/smt/control: on, off, forceoff, notsupported, notimplemented
// (Documentation/ABI/testing/sysfs-devices-system-cpu in the kernel).
Check check_smt(const SystemView& view) {
    Check c = make_check("smt", "simultaneous multithreading");
    const std::string fix = "boot with nosmt (--set 'tuning.kernel.extra=[nosmt]'), or 'echo "
                            "off > /sys/devices/system/cpu/smt/control' until the next boot; "
                            "or reserve both CPUs of each core";
    if (view.smt_control) {
        const std::string& state = *view.smt_control;
        if (state == "on")
            return warn(c,
                        "SMT is on ('/sys/devices/system/cpu/smt/control': on): two CPUs of a "
                        "core share its execution units, so work on one delays the other, a "
                        "reserved CPU too",
                        fix);
        if (state == "off" || state == "forceoff" || state == "notsupported" ||
            state == "notimplemented")
            return ok(c, "SMT is " + state + " ('/sys/devices/system/cpu/smt/control')");
        return warn(c,
                    "'/sys/devices/system/cpu/smt/control' says '" + state +
                        "', not a state "
                        "this check knows",
                    fix);
    }
    // A kernel without CONFIG_HOTPLUG_SMT: the topology says whether CPU 0 has a sibling.
    if (view.cpu0_siblings) {
        if (view.cpu0_siblings->size() <= 1)
            return ok(c, "no SMT: CPU 0 shares its core with no other CPU "
                         "('/sys/devices/system/cpu/cpu0/topology/thread_siblings_list')");
        return warn(c,
                    "CPU 0 shares its core with " + cpus_text(*view.cpu0_siblings) +
                        " (SMT), and this kernel cannot turn it off at run time",
                    "turn SMT off in the firmware setup, or reserve both CPUs of each core");
    }
    return cannot_read(c, view.smt_control.problem + "; " + view.cpu0_siblings.problem);
}

// Each file of /sys/devices/system/cpu/vulnerabilities says 'Not affected', 'Vulnerable'
// or 'Mitigation: ...' (Documentation/admin-guide/hw-vuln/ in the kernel); mitigations=off
// turns them all off (Documentation/admin-guide/kernel-parameters.txt).
Check check_mitigations(const SystemView& view) {
    Check c = make_check("cpu-mitigations", "CPU vulnerability mitigations");
    if (!view.vulnerabilities)
        return cannot_read(c, view.vulnerabilities.problem);
    std::vector<std::string> mitigated;
    for (const auto& [name, state] : *view.vulnerabilities)
        if (state.rfind("Mitigation", 0) == 0)
            mitigated.push_back(name + " (" + state + ")");
    if (mitigated.empty())
        return ok(c, "the kernel mitigates no CPU vulnerability (" +
                         std::to_string(view.vulnerabilities->size()) +
                         " listed in '/sys/devices/system/cpu/vulnerabilities': not affected "
                         "or left vulnerable)");
    return warn(c,
                "the kernel mitigates " + std::to_string(mitigated.size()) + " CPU vulnerabilit" +
                    (mitigated.size() == 1 ? "y" : "ies") + ": " + listing(mitigated, 4) +
                    "; each adds work at kernel entry and exit or at a context switch, "
                    "which shows as wake-up latency",
                "on a box that runs no untrusted code, boot with mitigations=off (--set "
                "'tuning.kernel.extra=[mitigations=off]') and compare with rtprov selftest "
                "--compare: it trades security for latency, so keep them where others can run "
                "code");
}

// vm.swappiness (Documentation/admin-guide/sysctl/vm.rst): how readily the kernel swaps
// out anonymous memory instead of dropping page cache. /proc/swaps lists the swap in use
// under a header line.
Check check_swappiness(const SystemView& view) {
    Check c = make_check("swappiness", "swap and vm.swappiness");
    if (!view.swaps)
        return cannot_read(c, view.swaps.problem);
    std::size_t areas = 0;
    for (const std::string& line : core::split(*view.swaps, '\n'))
        if (!line.empty() && line.rfind("Filename", 0) != 0)
            ++areas;
    if (areas == 0)
        return ok(c, "no swap is in use ('/proc/swaps'), so nothing of a player is swapped out");
    if (!view.swappiness)
        return cannot_read(c, view.swappiness.problem);
    const std::string seen = std::to_string(areas) + " swap area" + (areas == 1 ? "" : "s") +
                             " in use and vm.swappiness " + std::to_string(*view.swappiness);
    if (*view.swappiness <= 10)
        return ok(c, seen);
    return warn(c,
                seen + ": memory a player did not lock can be swapped out under pressure and "
                       "paged back in at a wake-up",
                "echo 'vm.swappiness = 10' > /etc/sysctl.d/60-rtprov-swappiness.conf && sysctl "
                "--system (or give the services limit_memlock: infinity in the profile, so "
                "they lock their memory)");
}

Fact<std::vector<std::string>> audio_group_members(const SystemView& view) {
    if (!view.groups)
        return Fact<std::vector<std::string>>::failed(view.groups.problem, view.groups.absent);
    std::istringstream in(*view.groups);
    std::string line;
    Fact<std::vector<std::string>> fact;
    fact.value.emplace();
    while (std::getline(in, line)) {
        std::vector<std::string> f = core::split(line, ':');
        if (f.size() == 4 && f[0] == "audio")
            for (const std::string& user : core::split(f[3], ','))
                if (!user.empty())
                    fact.value->push_back(user);
    }
    return fact;
}

const LimitsRule* audio_limit(const std::vector<LimitsRule>& rules, const std::string& item) {
    const LimitsRule* group = nullptr;
    const LimitsRule* all = nullptr;
    for (const LimitsRule& rule : rules) {
        if (rule.item != item || (rule.type != "soft" && rule.type != "-"))
            continue;
        if (rule.domain == "@audio")
            group = &rule;
        else if (rule.domain == "*")
            all = &rule;
    }
    return group ? group : all;
}

std::optional<Check> check_audio_group_limits(const SystemView& view) {
    Check c = make_check("audio-group-limits", "real-time limits of group audio");
    Fact<std::vector<std::string>> members = audio_group_members(view);
    if (!members)
        return cannot_read(c, members.problem);
    if (members->empty())
        return std::nullopt;
    if (!view.limits_rules)
        return cannot_read(c, view.limits_rules.problem);
    const std::string users = "group audio has " + core::quoted_list(*members);
    const LimitsRule* rtprio = audio_limit(*view.limits_rules, "rtprio");
    const LimitsRule* memlock = audio_limit(*view.limits_rules, "memlock");
    std::vector<std::string> missing;
    if (!rtprio)
        missing.push_back("no rule gives it a real-time priority (rtprio), so JACK and "
                          "PipeWire run as its members only get real-time through RTKit");
    else if (rtprio->value == "0")
        missing.push_back("rtprio is 0 by " + where(*rtprio));
    if (!memlock)
        missing.push_back("no rule lifts its locked-memory limit (memlock), so an audio "
                          "server cannot lock all its buffers");
    else if (memlock->value != "unlimited" && memlock->value != "infinity" &&
             memlock->value != "-1")
        missing.push_back("memlock is " + memlock->value + " KiB by " + where(*memlock));
    if (missing.empty())
        return ok(c, users + ": rtprio " + rtprio->value + " by " + where(*rtprio) +
                         ", memlock unlimited by " + where(*memlock));
    return warn(c, users + ", but " + core::join(missing, "; "), k_limits_fix);
}

// /dev/cpu_dma_latency (Documentation/power/pm_qos_interface.rst): a process that holds
// it open with a value keeps the CPUs out of idle states slower to leave than that.
std::optional<Check> check_cpu_dma_latency_access(const SystemView& view) {
    Check c = make_check("cpu-dma-latency", "group audio and /dev/cpu_dma_latency");
    Fact<std::vector<std::string>> members = audio_group_members(view);
    if (!members)
        return cannot_read(c, members.problem);
    if (members->empty())
        return std::nullopt;
    if (!view.cpu_dma_latency)
        return cannot_read(c, view.cpu_dma_latency.problem);
    const DeviceNode& node = *view.cpu_dma_latency;
    const long audio = group_id(*view.groups, "audio");
    const bool group_writes = audio >= 0 && node.gid == unsigned(audio) && (node.mode & 020);
    if (group_writes || (node.mode & 002))
        return ok(c, "group audio may write '/dev/cpu_dma_latency', so its members' audio "
                     "servers can keep the CPUs out of deep idle");
    return warn(c,
                "group audio has " + core::quoted_list(*members) +
                    ", who may not write '/dev/cpu_dma_latency' (group " +
                    std::to_string(node.gid) + ", mode " + core::octal(node.mode) +
                    "), so a desktop audio server run as them cannot keep the CPUs out of deep "
                    "idle",
                "let rtprov hold it for every one (tuning.hold_cpu_dma_latency: true in the "
                "profile), or a udev rule /etc/udev/rules.d/60-cpu-dma-latency.rules with "
                "'KERNEL==\"cpu_dma_latency\", GROUP=\"audio\", MODE=\"0660\"'");
}

} // namespace rtprov::audit
