#include "provisioner/audit/kernel_checks.hpp"

#include "provisioner/live/sched_features.hpp"

#include <algorithm>

namespace rtprov::audit {

namespace {

constexpr const char* k_features_path = "/sys/kernel/debug/sched/features";

Check make(const char* id, const char* title) {
    Check c;
    c.id = id;
    c.title = title;
    return c;
}

bool has_word(const std::string& text, const std::string& word) {
    const std::vector<std::string> w = words(text);
    return std::find(w.begin(), w.end(), word) != w.end();
}

// uname -v names the model built in: PREEMPT_RT, PREEMPT_DYNAMIC, PREEMPT (full) or
// nothing (none or voluntary) (scripts/mkcompile_h).
std::string preemption_model(const SystemView& view) {
    const std::string& v = *view.kernel_version;
    if (has_word(v, "PREEMPT_RT"))
        return "PREEMPT_RT";
    if (has_word(v, "PREEMPT_DYNAMIC")) {
        // debugfs sched/preempt marks the mode in use: 'none voluntary (full) lazy'.
        if (view.sched_preempt) {
            const std::string& modes = *view.sched_preempt;
            std::size_t open = modes.find('(');
            std::size_t close = modes.find(')', open);
            if (open != std::string::npos && close != std::string::npos)
                return "PREEMPT_DYNAMIC, mode '" + modes.substr(open + 1, close - open - 1) + "'";
        }
        for (const std::string& w : words(view.cmdline ? *view.cmdline : ""))
            if (w.starts_with("preempt="))
                return "PREEMPT_DYNAMIC, mode '" + w.substr(8) + "' (preempt= on the command line)";
        return "PREEMPT_DYNAMIC (mode not known: '/sys/kernel/debug/sched/preempt' cannot be read)";
    }
    if (has_word(v, "PREEMPT"))
        return "PREEMPT (full preemption)";
    return "no forced preemption (PREEMPT_NONE or PREEMPT_VOLUNTARY)";
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
    Check c = make("kernel-preemption", "kernel preemption model");
    if (!view.kernel_version)
        return cannot_read(std::move(c), view.kernel_version.problem);
    const std::string model = preemption_model(view);
    c.reason = "the running kernel ('" + *view.kernel_version + "') is " + model;
    if (e && e->realtime && model != "PREEMPT_RT") {
        c.status = Status::fail;
        c.reason = "profile '" + e->profile_name +
                   "' chose a PREEMPT_RT kernel (tuning.kernel.realtime) but the running kernel "
                   "('" +
                   *view.kernel_version + "') is " + model;
        std::string package =
            e->rt_packages.empty() ? "the PREEMPT_RT kernel" : "'" + e->rt_packages.front() + "'";
        c.fix = "install " + package +
                " ('rtprov apply --install-packages'), reboot and check that the boot loader "
                "starts it by default";
    }
    return c;
}

Check check_rt_push_ipi(const SystemView& view, const Expectation* e) {
    Check c = make("rt-push-ipi", "RT_PUSH_IPI on a non-PREEMPT_RT kernel");
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
        // (kernel/sched/sched.h HAVE_RT_PUSH_IPI, reference/anchors.md §4.2).
        c.reason = "'" + std::string(k_features_path) +
                   "' lists neither RT_PUSH_IPI nor NO_RT_PUSH_IPI: this kernel has no push IPI";
        return c;
    default:
        break;
    }
    // Since dd29c017aed6 non-PREEMPT_RT kernels default to NO_RT_PUSH_IPI; the regression
    // report (reference/anchors.md §4.2) measured multi-second PI-boost starvation.
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
    Check c = make("rt-throttling", "real-time throttling");
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
    Check c = make("cpu-governor", "CPU frequency governor");
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
    // rtcqs passes only with 'performance' on every CPU (reference/anchors.md §2): other
    // governors lower the clock when idle and ramp it up only after the audio thread woke.
    c.status = Status::warn;
    c.reason = listing(others) + (others.size() == 1 ? " is" : " are") +
               " not on 'performance': the clock ramps up only after an audio thread woke";
    c.fix = "set tuning.cpu_governor: performance in the profile, or now: " + now;
    return c;
}

Check check_cmdline(const SystemView& view, const Expectation& e) {
    Check c = make("cmdline", "kernel command line");
    if (e.kernel_params.empty()) {
        c.reason = "profile '" + e.profile_name + "' plans no kernel parameters";
        return c;
    }
    if (!view.cmdline)
        return cannot_read(std::move(c), view.cmdline.problem);
    const std::vector<boot::CmdlineToken> tokens = boot::parse_cmdline(*view.cmdline);
    std::vector<std::string> wrong;
    std::string planned;
    for (const boot::KernelParam& p : e.kernel_params) {
        planned += (planned.empty() ? "" : " ") + p.token();
        const boot::CmdlineToken* found = nullptr;
        for (const boot::CmdlineToken& t : tokens)
            if (t.key() == p.key)
                found = &t; // the last one counts
        if (!found)
            wrong.push_back("'" + p.token() + "' is missing");
        else if (!p.flag && !boot::same_value(p.key, found->value().value_or(""), p.value))
            wrong.push_back("'" + found->text + "' instead of '" + p.token() + "'");
    }
    if (wrong.empty()) {
        c.reason = "'/proc/cmdline' has every planned parameter: " + planned;
        return c;
    }
    c.status = Status::fail;
    c.reason = "the running kernel was not booted with the parameters profile '" + e.profile_name +
               "' plans: " + listing(wrong, 10);
    c.fix = "reboot to use the command line rtprov wrote; if they are still missing, see "
            "'rtprov status' (the boot loader may still need regenerating)";
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
    return compare_cpus(make("isolated-cpus", "CPUs isolated by isolcpus="), view.isolated,
                        "/sys/devices/system/cpu/isolated", e, "isolcpus");
}

std::optional<Check> check_nohz_full(const SystemView& view, const Expectation& e) {
    if (!e.param("nohz_full"))
        return std::nullopt;
    return compare_cpus(make("nohz-full", "CPUs without the periodic tick (nohz_full=)"),
                        view.nohz_full, "/sys/devices/system/cpu/nohz_full", e, "nohz_full");
}

} // namespace rtprov::audit
