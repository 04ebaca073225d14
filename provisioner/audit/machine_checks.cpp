// SPDX-License-Identifier: Apache-2.0
#include "provisioner/audit/machine_checks.hpp"

#include "provisioner/core/error.hpp"
#include "provisioner/core/text.hpp"

namespace rtprov::audit {

namespace {} // namespace

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

} // namespace rtprov::audit
