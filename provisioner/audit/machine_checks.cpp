// SPDX-License-Identifier: Apache-2.0
#include "provisioner/audit/machine_checks.hpp"

#include "provisioner/core/error.hpp"
#include "provisioner/core/text.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
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
    return quoted(rule.domain + " " + rule.type + " " + rule.item + " " + rule.value) + " (" +
           core::one_line(rule.file) + ":" + std::to_string(rule.line) + ")";
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
        if (state == "off" || state == "forceoff" || state == "notsupported")
            return ok(c, "SMT is " + state + " ('/sys/devices/system/cpu/smt/control')");
        // 'notimplemented': the kernel cannot switch SMT at run time (no
        // CONFIG_HOTPLUG_SMT), which says nothing about whether the CPU has it
        if (state != "notimplemented")
            return warn(c,
                        "'/sys/devices/system/cpu/smt/control' says '" + state +
                            "', not a state this check knows",
                        fix);
    }
    // A kernel without CONFIG_HOTPLUG_SMT (no control file, or 'notimplemented'): the
    // topology says whether CPU 0 has a sibling.
    if (view.cpu0_siblings) {
        if (view.cpu0_siblings->size() <= 1)
            return ok(c, "no SMT: CPU 0 shares its core with no other CPU "
                         "('/sys/devices/system/cpu/cpu0/topology/thread_siblings_list')");
        return warn(c,
                    "CPU 0 shares its core with " + cpus_text(*view.cpu0_siblings) +
                        " (SMT), and this kernel cannot turn it off at run time",
                    "turn SMT off in the firmware setup, or reserve both CPUs of each core");
    }
    return cannot_read(
        c, (view.smt_control ? "SMT control is 'notimplemented'" : view.smt_control.problem) +
               "; " + view.cpu0_siblings.problem);
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
        if (!line.empty() && line.back() == '\r')
            line.pop_back();
        std::vector<std::string> f = core::split(line, ':');
        if (f.size() == 4 && f[0] == "audio")
            for (const std::string& user : core::split(f[3], ','))
                if (!user.empty())
                    fact.value->push_back(user);
    }
    return fact;
}

namespace {

std::string lower(std::string text) {
    for (char& c : text)
        c = char(std::tolower(static_cast<unsigned char>(c)));
    return text;
}

// A limits.conf value as pam_limits reads it: -1 for unlimited, nullopt for one it drops.
std::optional<long long> limit_value(const std::string& text) {
    const std::string v = lower(text);
    if (v == "unlimited" || v == "infinity" || v == "-1")
        return -1;
    long long n = 0;
    auto [end, error] = std::from_chars(v.data(), v.data() + v.size(), n);
    if (error != std::errc() || end != v.data() + v.size() || n < 0)
        return std::nullopt;
    return n;
}

// The smaller of two limits (-1: unlimited).
long long smaller(long long a, long long b) {
    return a < 0 ? b : b < 0 ? a : std::min(a, b);
}

// The groups 'user' is listed in, in /etc/group text.
std::vector<std::string> groups_of(const std::string& groups, const std::string& user) {
    std::vector<std::string> out;
    for (std::string line : core::split(groups, '\n')) {
        if (!line.empty() && line.back() == '\r')
            line.pop_back();
        std::vector<std::string> f = core::split(line, ':');
        if (f.size() == 4)
            for (const std::string& member : core::split(f[3], ','))
                if (member == user)
                    out.push_back(f[0]);
    }
    return out;
}

} // namespace

EffectiveLimit effective_limit(const std::vector<LimitsRule>& rules, const std::string& user,
                               const std::vector<std::string>& groups, const std::string& item,
                               long long kernel_default) {
    // pam_limits' sources, strongest first: the user, a group of theirs, '*' (the
    // others, uid and gid ranges and %group, are left out); a rule of a source at least as
    // strong as the one that set a limit replaces it (pam_limits.c, process_limit)
    constexpr int k_none = 9;
    EffectiveLimit e;
    e.soft = e.hard = kernel_default;
    int soft_source = k_none, hard_source = k_none;
    for (const LimitsRule& rule : rules) {
        if (lower(rule.item) != item)
            continue;
        int source = k_none;
        if (rule.domain == user)
            source = 0;
        else if (rule.domain.size() > 1 && rule.domain[0] == '@' &&
                 std::find(groups.begin(), groups.end(), rule.domain.substr(1)) != groups.end())
            source = 1;
        else if (rule.domain == "*")
            source = 4;
        std::optional<long long> value = limit_value(rule.value);
        if (source == k_none || !value)
            continue;
        const std::string type = lower(rule.type);
        if ((type == "soft" || type == "-") && source <= soft_source) {
            e.soft = *value;
            e.soft_rule = &rule;
            soft_source = source;
        }
        if ((type == "hard" || type == "-") && source <= hard_source) {
            e.hard = *value;
            e.hard_rule = &rule;
            hard_source = source;
        }
    }
    return e;
}

long long EffectiveLimit::value() const {
    return smaller(soft, hard); // the soft limit cannot exceed the hard one
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
    auto rules_of = [](const EffectiveLimit& e) {
        std::vector<std::string> out;
        if (e.soft_rule)
            out.push_back(where(*e.soft_rule));
        if (e.hard_rule && e.hard_rule != e.soft_rule)
            out.push_back(where(*e.hard_rule));
        return out.empty() ? std::string("no rule (the kernel's default)")
                           : core::join(out, " and ");
    };
    auto shown = [](long long v) { return v < 0 ? std::string("unlimited") : std::to_string(v); };
    std::string seen;
    for (const std::string& user : *members) {
        std::vector<std::string> groups = groups_of(*view.groups, user);
        // rtprio: the kernel's default is 0; memlock: a few MiB at most (8 MiB since Linux
        // 5.16), never unlimited, so any number stands for it here
        const EffectiveLimit rtprio =
            effective_limit(*view.limits_rules, user, groups, "rtprio", 0);
        const EffectiveLimit memlock =
            effective_limit(*view.limits_rules, user, groups, "memlock", 8192);
        std::vector<std::string> missing;
        if (rtprio.value() == 0)
            missing.push_back("rtprio is 0 for '" + user + "' (soft " + shown(rtprio.soft) +
                              ", hard " + shown(rtprio.hard) + ": " + rules_of(rtprio) +
                              "), so JACK or PipeWire run as them get real-time only through "
                              "RTKit");
        if (memlock.value() >= 0)
            missing.push_back("memlock is " +
                              (memlock.soft_rule || memlock.hard_rule
                                   ? shown(memlock.value()) + " KiB"
                                   : std::string("the kernel's default")) +
                              " for '" + user + "' (" + rules_of(memlock) +
                              "), so an audio server cannot lock all its buffers");
        if (!missing.empty())
            return warn(c,
                        "group audio has " + core::quoted_list(*members) + ", but " +
                            core::join(missing, "; "),
                        k_limits_fix);
        if (seen.empty())
            seen = "rtprio " + shown(rtprio.value()) + " by " + rules_of(rtprio) +
                   ", memlock unlimited by " + rules_of(memlock);
    }
    return ok(c, "group audio has " + core::quoted_list(*members) + ", each with " + seen +
                     " (users whose primary group is audio are not counted)");
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
