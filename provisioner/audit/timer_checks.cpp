// SPDX-License-Identifier: Apache-2.0
#include "provisioner/audit/timer_checks.hpp"

#include "provisioner/core/error.hpp"
#include "provisioner/core/text.hpp"

namespace rtprov::audit {

namespace {

constexpr const char* k_timer_list = "/proc/timer_list";

// The last value of 'key=' on the command line ('off' of 'highres=off'); "" when absent.
std::string param(const SystemView& view, const std::string& key) {
    std::string value;
    if (view.cmdline)
        for (const std::string& w : core::words(*view.cmdline))
            if (w.starts_with(key + "="))
                value = w.substr(key.size() + 1);
    return value;
}

// 'CONFIG_X=y in /boot/config-R' when the running kernel's config sets one of 'options'
// to y; "" when it sets none; nullopt when the config cannot be read.
std::optional<std::string> config_has(const SystemView& view,
                                      std::initializer_list<const char*> options) {
    if (!view.kernel_config)
        return std::nullopt;
    for (const char* option : options)
        if (auto it = view.kernel_config->find(option);
            it != view.kernel_config->end() && it->second == "y")
            return std::string(option) + "=y in " + quoted("/boot/config-" + *view.kernel_release);
    return std::string();
}

std::string of_cpus(unsigned some, unsigned all) {
    return std::to_string(some) + " of " + std::to_string(all) + " CPU" + (all == 1 ? "" : "s");
}

} // namespace

// Documentation/timers/highres.rst; highres= (Documentation/admin-guide/kernel-parameters.txt)
// turns the mode off at boot.
Check check_high_res_timers(const SystemView& view) {
    Check c = make_check("high-res-timers", "high-resolution timers");
    const bool off = param(view, "highres") == "off";
    const std::string rebuild =
        "boot a kernel built with CONFIG_HIGH_RES_TIMERS=y (Debian's and Raspberry Pi OS's are)";
    const std::string no_hres =
        ": timers (a player's sleep, a poll timeout) fire only on the tick, up to 1/HZ s late";
    if (view.timer_list) {
        const TimerList& t = *view.timer_list;
        if (t.hres_shown == 0) {
            c.status = Status::warn;
            c.reason =
                "the running kernel has no high-resolution timers ('" + std::string(k_timer_list) +
                "' shows no .hres_active, which only CONFIG_HIGH_RES_TIMERS prints)" + no_hres;
            c.fix = rebuild;
            return c;
        }
        if (t.hres_active == t.hres_shown) {
            c.reason = "high-resolution mode is active on " + of_cpus(t.hres_active, t.cpus) +
                       " ('.hres_active' in '" + k_timer_list + "')";
            return c;
        }
        c.status = Status::warn;
        c.reason = "high-resolution mode is active on only " + of_cpus(t.hres_active, t.cpus) +
                   " ('.hres_active' in '" + k_timer_list + "')" +
                   (off ? ": the command line has highres=off" : "") + no_hres;
        c.fix = off ? "remove highres=off from the kernel command line and reboot"
                    : "check each CPU's 'Clock Event Device' in '" + std::string(k_timer_list) +
                          "': one that cannot fire one-shot keeps its CPU on the tick; "
                          "another clock event device (or board) is the only change";
        return c;
    }
    std::optional<std::string> built = config_has(view, {"CONFIG_HIGH_RES_TIMERS"});
    if (!built)
        return cannot_read(c, view.timer_list.problem + "; " + view.kernel_config.problem);
    const std::string unseen = "; '" + std::string(k_timer_list) +
                               "' could not be read to see them active (" +
                               view.timer_list.problem + ")";
    if (built->empty()) {
        c.status = Status::warn;
        c.reason = "the running kernel's config does not set CONFIG_HIGH_RES_TIMERS" + no_hres;
        c.fix = rebuild;
    } else if (off) {
        c.status = Status::warn;
        c.reason = "built in (" + *built + "), but the command line has highres=off" + no_hres;
        c.fix = "remove highres=off from the kernel command line and reboot";
    } else {
        c.reason = "built in (" + *built + ") and not turned off on the command line" + unseen;
    }
    return c;
}

// Documentation/timers/no_hz.rst: CONFIG_HZ_PERIODIC never stops the tick,
// CONFIG_NO_HZ_IDLE stops it on idle CPUs, CONFIG_NO_HZ_FULL also on CPUs running one
// task; nohz=off (kernel-parameters.txt) keeps it periodic.
Check check_tickless(const SystemView& view) {
    Check c = make_check("tickless", "tickless kernel (the tick stops on idle CPUs)");
    const bool off = param(view, "nohz") == "off";
    const std::string periodic =
        ": the tick interrupts every CPU HZ times a second, idle or not; a tickless kernel "
        "lets idle CPUs sleep through it and, with nohz_full=, spares busy reserved ones";
    const std::string rebuild =
        "boot a kernel built with CONFIG_NO_HZ_IDLE=y or CONFIG_NO_HZ_FULL=y (Debian's and "
        "Raspberry Pi OS's are)";
    const bool full = view.cpus.nohz_full && !view.cpus.nohz_full->empty();
    if (view.timer_list) {
        const TimerList& t = *view.timer_list;
        if (t.nohz_shown == 0) {
            c.status = Status::warn;
            c.reason = "the running kernel only ticks periodically ('" + std::string(k_timer_list) +
                       "' shows no tick state, which only a kernel that can stop the tick "
                       "prints)" +
                       periodic;
            c.fix = rebuild;
            return c;
        }
        if (t.nohz_active == t.nohz_shown) {
            c.reason = "the tick stops on idle CPUs: " + of_cpus(t.nohz_active, t.cpus) +
                       " tickless ('.nohz' in '" + k_timer_list + "')" +
                       (full ? "; nohz_full " + cpus_text(*view.cpus.nohz_full) : "");
            return c;
        }
        c.status = Status::warn;
        c.reason = "the tick stops on only " + of_cpus(t.nohz_active, t.cpus) + " ('.nohz' in '" +
                   k_timer_list + "')" + (off ? ": the command line has nohz=off" : "") + periodic;
        c.fix = off ? "remove nohz=off from the kernel command line and reboot" : rebuild;
        return c;
    }
    std::optional<std::string> built =
        config_has(view, {"CONFIG_NO_HZ_FULL", "CONFIG_NO_HZ_IDLE", "CONFIG_NO_HZ"});
    // /sys/devices/system/cpu/nohz_full exists only with CONFIG_NO_HZ_FULL
    if ((!built || built->empty()) && view.cpus.nohz_full)
        built = "/sys/devices/system/cpu/nohz_full, there only with CONFIG_NO_HZ_FULL";
    if (!built)
        return cannot_read(c, view.timer_list.problem + "; " + view.kernel_config.problem);
    if (built->empty()) {
        c.status = Status::warn;
        c.reason = "the running kernel's config sets none of CONFIG_NO_HZ_IDLE, "
                   "CONFIG_NO_HZ_FULL and CONFIG_NO_HZ" +
                   periodic;
        c.fix = rebuild;
    } else if (off) {
        c.status = Status::warn;
        c.reason = "built in (" + *built + "), but the command line has nohz=off" + periodic;
        c.fix = "remove nohz=off from the kernel command line and reboot";
    } else {
        c.reason = "built in (" + *built + ") and not turned off on the command line; '" +
                   k_timer_list + "' could not be read to see it (" + view.timer_list.problem + ")";
    }
    return c;
}

} // namespace rtprov::audit
