// SPDX-License-Identifier: Apache-2.0
#include "provisioner/audit/kernel_checks.hpp"

#include "provisioner/boot/loader.hpp"
#include "provisioner/core/text.hpp"
#include "provisioner/live/sched_features.hpp"
#include "provisioner/system/kernel.hpp"

#include <algorithm>

namespace rtprov::audit {

namespace {

constexpr const char* k_features_path = "/sys/kernel/debug/sched/features";

using core::has_word;

constexpr const char* k_preempt_path = "/sys/kernel/debug/sched/preempt";

// The running kernel's preemption model: 'summary' names it ("PREEMPT_DYNAMIC, mode
// 'full'"), 'source' says where a PREEMPT_DYNAMIC mode was learned, 'unseen' why it
// could not be ("" when it was).
struct Model {
    std::string summary;
    std::string source;
    std::string unseen;
};

// The modes preempt= and sched/preempt know (kernel/sched/core.c, sched_dynamic_mode();
// 'lazy' since Linux 6.13). The kernel ignores preempt= with any other value.
bool is_dynamic_mode(const std::string& mode) {
    return mode == "none" || mode == "voluntary" || mode == "full" || mode == "lazy";
}

// A PREEMPT_DYNAMIC kernel runs the mode debugfs shows; else the last valid preempt= of
// its command line (setup_preempt_mode() in kernel/sched/core.c, a __setup handler, runs
// for each one and keeps the mode of the last it accepts); else its build default, the
// Preemption Model chosen in its config (kernel/Kconfig.preempt: with PREEMPT_DYNAMIC the
// model selected at build time is the one it boots with).
Model dynamic_mode(const SystemView& view) {
    const std::string dynamic = "PREEMPT_DYNAMIC";
    const std::string unread = "'" + std::string(k_preempt_path) + "' cannot be read";
    // debugfs sched/preempt marks the mode in use: 'none voluntary (full) lazy'.
    std::string preempt_problem = view.sched_preempt.problem;
    if (view.sched_preempt) {
        const std::string& modes = *view.sched_preempt;
        std::size_t open = modes.find('(');
        std::size_t close = modes.find(')', open);
        if (open != std::string::npos && close != std::string::npos)
            return {dynamic + ", mode '" + modes.substr(open + 1, close - open - 1) + "'",
                    " (read from '" + std::string(k_preempt_path) + "')", ""};
        preempt_problem = "'" + std::string(k_preempt_path) + "' holds '" + modes +
                          "', which marks no mode in use";
    }
    std::string from_cmdline;
    for (const std::string& w : words(view.cmdline ? *view.cmdline : ""))
        if (w.starts_with("preempt=") && is_dynamic_mode(w.substr(8)))
            from_cmdline = w.substr(8);
    if (!from_cmdline.empty())
        return {dynamic + ", mode '" + from_cmdline + "'",
                " (from 'preempt=" + from_cmdline + "' on the kernel command line; " + unread + ")",
                ""};
    const std::string cmdline_problem =
        view.cmdline ? "the kernel command line has no preempt=" : view.cmdline.problem;
    std::string config_problem = view.kernel_config.problem;
    if (view.kernel_config) {
        const std::string config = "/boot/config-" + *view.kernel_release;
        static const std::pair<const char*, const char*> k_models[] = {
            {"CONFIG_PREEMPT_NONE", "none"},
            {"CONFIG_PREEMPT_VOLUNTARY", "voluntary"},
            {"CONFIG_PREEMPT", "full"},
            {"CONFIG_PREEMPT_LAZY", "lazy"}};
        for (const auto& [option, mode] : k_models)
            if (auto it = view.kernel_config->find(option);
                it != view.kernel_config->end() && it->second == "y")
                return {dynamic + ", mode '" + mode + "'",
                        std::string(" (the build default: ") + option + "=y in '" + config + "'; " +
                            cmdline_problem + " and " + unread + ")",
                        ""};
        config_problem = "'" + config +
                         "' sets none of CONFIG_PREEMPT_NONE, CONFIG_PREEMPT_VOLUNTARY, "
                         "CONFIG_PREEMPT and CONFIG_PREEMPT_LAZY";
    }
    return {dynamic, "",
            "but its mode cannot be seen: " + preempt_problem + "; " + cmdline_problem + "; " +
                config_problem};
}

// uname -v names the model built in: PREEMPT_RT, PREEMPT_DYNAMIC, PREEMPT (full) or
// nothing (none or voluntary) (scripts/mkcompile_h).
Model preemption_model(const SystemView& view) {
    const std::string& v = *view.kernel_version;
    if (system::is_preempt_rt(v))
        return {"PREEMPT_RT", "", ""};
    if (has_word(v, "PREEMPT_DYNAMIC"))
        return dynamic_mode(view);
    if (has_word(v, "PREEMPT"))
        return {"PREEMPT (full preemption)", "", ""};
    return {"no forced preemption (PREEMPT_NONE or PREEMPT_VOLUNTARY)", "", ""};
}

// How to get the PREEMPT_RT kernel running: boot one that is installed, else install one.
std::string realtime_fix(const Expectation& e) {
    if (e.rt_kernels.empty()) {
        const std::string package =
            e.rt_packages.empty() ? "the PREEMPT_RT kernel" : "'" + e.rt_packages.front() + "'";
        return "install " + package +
               " ('rtprov apply --install-packages'), reboot and check that the boot loader "
               "starts it by default";
    }
    std::vector<std::string> names;
    for (const std::string& version : e.rt_kernels)
        names.push_back("'" + version + "'");
    std::string fix = (names.size() == 1 ? "boot the installed PREEMPT_RT kernel "
                                         : "boot one of the installed PREEMPT_RT kernels ") +
                      listing(names) + ": ";
    return fix + boot::loader(e.boot_loader).rt_default_fix;
}

// Compares a sysfs CPU list with the reserved CPUs.
Check compare_cpus(Check c, const Fact<core::CpuList>& have, const std::string& path,
                   const Expectation& e, const std::string& param) {
    if (!have)
        return cannot_read(std::move(c), have.problem);
    if (*have == e.cores.reserved) {
        c.reason = "'" + path + "' is '" + have->to_string() + "', the reserved CPUs";
        return c;
    }
    c.status = Status::fail;
    c.reason = "'" + path + "' is '" + have->to_string() + "' but profile '" + e.profile_name +
               "' reserves " + cpus_text(e.cores.reserved) + " with " + param + "=";
    c.fix = "reboot with the command line rtprov wrote (see check 'cmdline')";
    return c;
}

} // namespace

Check check_preemption(const SystemView& view, const Expectation* e) {
    Check c = make_check("kernel-preemption", "kernel preemption model");
    if (!view.kernel_version)
        return cannot_read(std::move(c), view.kernel_version.problem);
    const Model model = preemption_model(view);
    const std::string running = "the running kernel ('" + *view.kernel_version + "') is ";
    if (e && e->realtime && model.summary != "PREEMPT_RT") {
        c.status = Status::fail;
        c.reason = "profile '" + e->profile_name +
                   "' chose a PREEMPT_RT kernel (tuning.kernel.realtime) but " + running +
                   model.summary;
        c.fix = realtime_fix(*e);
        return c;
    }
    if (!model.unseen.empty()) {
        // Not seeing the mode is not a pass: the check warns until it can see.
        c.status = Status::warn;
        c.reason = running + model.summary + ", " + model.unseen;
        c.fix = "mount debugfs ('mount -t debugfs debugfs /sys/kernel/debug') and rerun 'rtprov "
                "audit'";
        return c;
    }
    c.reason = running + model.summary + model.source;
    return c;
}

Check check_rt_push_ipi(const SystemView& view, const Expectation* e) {
    Check c = make_check("rt-push-ipi", "RT_PUSH_IPI on a non-PREEMPT_RT kernel");
    if (!view.kernel_version)
        return cannot_read(std::move(c), view.kernel_version.problem +
                                             "; whether the kernel is PREEMPT_RT is not known");
    const std::string features = view.sched_features ? *view.sched_features : "";
    const live::PushIpiAction action = live::decide_push_ipi(*view.kernel_version, features);
    if (action == live::PushIpiAction::leave_rt_kernel) {
        c.reason = "PREEMPT_RT kernel: it pushes real-time tasks to other CPUs itself; "
                   "RT_PUSH_IPI is left as it is";
        return c;
    }
    if (!view.sched_features) {
        c.status = Status::warn;
        c.reason = view.sched_features.problem + "; RT_PUSH_IPI cannot be checked";
        c.fix = "mount debugfs ('mount -t debugfs debugfs /sys/kernel/debug') and rerun "
                "'rtprov audit'";
        return c;
    }
    switch (action) {
    case live::PushIpiAction::already_on:
        c.reason = "RT_PUSH_IPI is on";
        return c;
    case live::PushIpiAction::unknown:
        // Without CONFIG_IRQ_WORK and CONFIG_SMP the feature is not built
        // (kernel/sched/sched.h HAVE_RT_PUSH_IPI).
        c.reason = "'" + std::string(k_features_path) +
                   "' lists neither RT_PUSH_IPI nor NO_RT_PUSH_IPI: this kernel has no push IPI";
        return c;
    default:
        break;
    }
    // Since dd29c017aed6 non-PREEMPT_RT kernels default to NO_RT_PUSH_IPI; the regression
    // report on LKML (2026-08-14) measured multi-second PI-boost starvation.
    c.status = Status::fail;
    c.reason = "NO_RT_PUSH_IPI on a non-PREEMPT_RT kernel (the default since dd29c017aed6): "
               "real-time audio threads can starve for seconds waiting for a priority boost";
    const std::string now = "echo RT_PUSH_IPI > " + std::string(k_features_path);
    if (!e)
        c.fix = now + " (again at every boot; an rtprov profile's tuning.rt_push_ipi_guard does "
                      "that)";
    else if (!e->rt_push_ipi_guard)
        c.fix = "enable tuning.rt_push_ipi_guard in profile '" + e->profile_name +
                "' and apply it; now: " + now;
    else
        c.fix = "rtprov-sched-features.service sets it at boot: see 'systemctl status "
                "rtprov-sched-features.service'; now: " +
                now;
    return c;
}

Check check_rt_throttling(const SystemView& view) {
    Check c = make_check("rt-throttling", "real-time throttling");
    if (!view.rt_runtime_us)
        return cannot_read(std::move(c), view.rt_runtime_us.problem);
    const long long runtime = *view.rt_runtime_us;
    if (runtime < 0) {
        c.reason = "off (sched_rt_runtime_us is -1): real-time threads are never stopped, so "
                   "a runaway one can hold its CPU for good";
        return c;
    }
    if (!view.rt_period_us)
        return cannot_read(std::move(c), view.rt_period_us.problem);
    const long long period = *view.rt_period_us;
    const std::string budget =
        std::to_string(runtime) + " µs of every " + std::to_string(period) + " µs";
    // The kernel's default is 950000 of 1000000 (Documentation/scheduler/sched-rt-group.rst).
    if (period > 0 && runtime * 100 >= period * 95) {
        c.reason = "real-time threads may use " + budget + "; the rest is kept for ordinary ones";
        return c;
    }
    c.status = Status::warn;
    c.reason = "real-time threads may use only " + budget +
               " (the default is 950000 of 1000000); a busy audio thread is stopped when it "
               "reaches that";
    c.fix = "sysctl -w kernel.sched_rt_runtime_us=950000, and set it in /etc/sysctl.d/";
    return c;
}

Check check_cpu_governor(const SystemView& view, const Expectation* e) {
    Check c = make_check("cpu-governor", "CPU frequency governor");
    if (!view.governors)
        return cannot_read(std::move(c), view.governors.problem);
    const bool profile_sets = e && e->cpu_governor;
    const std::string want = profile_sets ? *e->cpu_governor : "performance";
    if (view.governors->empty()) {
        c.reason = "no CPU has a cpufreq driver, so there is no governor to set";
        if (profile_sets) {
            c.status = Status::warn;
            c.reason += ": tuning.cpu_governor '" + want + "' has no effect";
            c.fix = "remove tuning.cpu_governor from profile '" + e->profile_name + "'";
        }
        return c;
    }
    std::vector<std::string> others;
    for (const auto& [cpu, governor] : *view.governors)
        if (governor != want)
            others.push_back("CPU " + std::to_string(cpu) + " '" + governor + "'");
    if (others.empty()) {
        c.reason = "every CPU with cpufreq uses '" + want + "'";
        return c;
    }
    const std::string now =
        "echo " + want + " | tee /sys/devices/system/cpu/cpu*/cpufreq/scaling_governor";
    if (profile_sets) {
        c.status = Status::fail;
        c.reason = "profile '" + e->profile_name + "' sets '" + want + "' but " + listing(others) +
                   (others.size() == 1 ? " runs another" : " run others");
        c.fix = "rtprov-cpu-governor.service sets it at boot: see 'systemctl status "
                "rtprov-cpu-governor.service'; now: " +
                now;
        return c;
    }
    // rtcqs passes only with 'performance' on every CPU (autostatic/rtcqs rtcqs.py): other
    // governors lower the clock when idle and ramp it up only after the audio thread woke.
    c.status = Status::warn;
    c.reason = listing(others) + (others.size() == 1 ? " is" : " are") +
               " not on 'performance': the clock ramps up only after an audio thread woke";
    c.fix = "set tuning.cpu_governor: performance in the profile, or now: " + now;
    return c;
}

std::vector<ParamGap> params_not_in_effect(const std::string& cmdline, const Expectation& e) {
    const std::vector<boot::CmdlineToken> tokens = boot::parse_cmdline(cmdline);
    std::vector<ParamGap> gaps;
    for (const boot::KernelParam& p : e.kernel_params)
        if (auto why = boot::not_in_effect(tokens, p))
            gaps.push_back({p.token(), *why});
    return gaps;
}

bool runs_preempt_rt(const SystemView& view) {
    return view.kernel_version && preemption_model(view).summary == "PREEMPT_RT";
}

Check check_cmdline(const SystemView& view, const Expectation& e) {
    Check c = make_check("cmdline", "kernel command line");
    if (e.kernel_params.empty()) {
        c.reason = "profile '" + e.profile_name + "' plans no kernel parameters";
        return c;
    }
    if (!view.cmdline)
        return cannot_read(std::move(c), view.cmdline.problem);
    std::vector<std::string> wrong;
    for (const ParamGap& gap : params_not_in_effect(*view.cmdline, e))
        wrong.push_back(gap.why);
    std::string planned;
    for (const boot::KernelParam& p : e.kernel_params)
        planned += (planned.empty() ? "" : " ") + p.token();
    if (wrong.empty()) {
        c.reason = "'/proc/cmdline' has every planned parameter: " + planned;
        return c;
    }
    c.status = Status::fail;
    c.reason = "the running kernel was not booted with the parameters profile '" + e.profile_name +
               "' plans: " + listing(wrong, 10);
    c.fix = "reboot to use the command line rtprov wrote; if they are still missing, see "
            "'rtprov status' (the boot loader may still need regenerating)";
    if (std::any_of(wrong.begin(), wrong.end(), [](const std::string& w) {
            return w.find("is rejected") != std::string::npos;
        }))
        c.fix = "remove the other value from the boot loader's command line (GRUB: "
                "GRUB_CMDLINE_LINUX in /etc/default/grub, which every entry gets before "
                "rtprov's parameters), regenerate it (update-grub) and reboot";
    return c;
}

std::optional<Check> check_isolated(const SystemView& view, const Expectation& e) {
    const boot::KernelParam* isolcpus = e.param("isolcpus");
    if (!isolcpus)
        return std::nullopt;
    // 'isolated' shows the CPUs taken out of the scheduler domains: isolcpus= without
    // flags, or with 'domain' (Documentation/admin-guide/kernel-parameters.txt).
    const auto& flags = e.isolcpus_flags;
    if (!flags.empty() && std::find(flags.begin(), flags.end(), "domain") == flags.end())
        return std::nullopt;
    return compare_cpus(make_check("isolated-cpus", "CPUs isolated by isolcpus="),
                        view.cpus.isolated, "/sys/devices/system/cpu/isolated", e, "isolcpus");
}

std::optional<Check> check_nohz_full(const SystemView& view, const Expectation& e) {
    if (!e.param("nohz_full"))
        return std::nullopt;
    return compare_cpus(make_check("nohz-full", "CPUs without the periodic tick (nohz_full=)"),
                        view.cpus.nohz_full, "/sys/devices/system/cpu/nohz_full", e, "nohz_full");
}

} // namespace rtprov::audit
