// SPDX-License-Identifier: Apache-2.0
#include "provisioner/systemd/online.hpp"

#include "provisioner/core/error.hpp"
#include "provisioner/core/text.hpp"
#include "provisioner/fs/kernel_file.hpp"
#include "provisioner/systemd/libsystemd.hpp"
#include "provisioner/systemd/units.hpp"

#include <algorithm>
#include <cstring>
#include <memory>

namespace rtprov::systemd {

OnlineActions rollback_actions(const std::vector<std::string>& paths) {
    OnlineActions actions;
    const std::string dir = std::string(k_unit_dir) + "/";
    const std::string dropin = std::string(".d/") + k_dropin_name;
    for (const std::string& path : paths) {
        if (path.rfind(dir, 0) != 0)
            continue;
        actions.reload = true;
        std::string rest = path.substr(dir.size());
        if (rest.ends_with(dropin)) {
            std::string unit = rest.substr(0, rest.size() - dropin.size());
            if (unit.ends_with(".service"))
                actions.try_restart.push_back(unit);
            // A runtime AllowedCPUs= set by 'apply --runtime' outlives the drop-in until
            // reboot (it lives in /run/systemd/system.control/); an empty mask resets it,
            // so the slice gets every CPU again now.
            for (const char* slice : {"init.scope", "system.slice", "user.slice"})
                if (unit == slice)
                    actions.runtime_allowed_cpus.push_back({unit, core::CpuList{}});
        }
        for (const char* unit :
             {k_sched_features_unit, k_dma_latency_unit, k_governor_unit, k_partition_unit})
            if (rest == unit)
                actions.stop.push_back(unit);
        // Stopping the slice after its services were restarted elsewhere removes its
        // cgroup, which gives the CPUs of an isolated partition back to the others.
        if (rest == k_audio_slice)
            actions.stop.push_back(k_audio_slice);
    }
    return actions;
}

OnlineActions online_actions(const core::Plan& plan, const core::Profile& profile,
                             const std::optional<core::ResolvedCores>& cores, bool runtime,
                             const std::vector<std::string>& retired) {
    OnlineActions actions = rollback_actions(retired);
    const std::string dir = std::string(k_unit_dir) + "/";
    for (const core::FileChange& change : plan.changes) {
        if (change.path.rfind(dir, 0) != 0)
            continue;
        actions.reload = true;
        for (const core::ServiceTuning& s : profile.tuning.services)
            if (change.path == dropin_path(s.unit))
                actions.try_restart.push_back(s.unit);
        for (const char* unit :
             {k_sched_features_unit, k_dma_latency_unit, k_governor_unit, k_partition_unit})
            if (change.path == dir + unit)
                actions.restart.push_back(unit);
        // the template's boot instance runs the new layout now; irqbalance reads its
        // banned CPUs only when it starts
        if (change.path == dir + k_irq_tune_unit)
            actions.restart.push_back(k_irq_tune_boot);
        if (change.path == dropin_path(k_irqbalance_unit))
            actions.try_restart.push_back(k_irqbalance_unit);
    }
    if (runtime && cores && !cores->reserved.empty() &&
        profile.tuning.reserve_method == core::ReserveMethod::cpuset) {
        for (const char* unit : {"init.scope", "system.slice", "user.slice"})
            actions.runtime_allowed_cpus.push_back({unit, cores->housekeeping});
        actions.runtime_allowed_cpus.push_back({k_audio_slice, cores->reserved});
    }
    return actions;
}

std::vector<std::uint8_t> cpu_mask_bytes(const core::CpuList& cpus) {
    std::vector<std::uint8_t> bytes;
    for (unsigned cpu : cpus.cpus()) {
        if (bytes.size() <= cpu / 8)
            bytes.resize(cpu / 8 + 1, 0);
        bytes[cpu / 8] = static_cast<std::uint8_t>(bytes[cpu / 8] | (1u << (cpu % 8)));
    }
    return bytes;
}

namespace {

constexpr const char* k_service = "org.freedesktop.systemd1";
constexpr const char* k_path = "/org/freedesktop/systemd1";
constexpr const char* k_manager = "org.freedesktop.systemd1.Manager";

using Bus = std::unique_ptr<sd_bus, sd_bus* (*)(sd_bus*)>;

struct Reply {
    sd_bus_error error{}; // SD_BUS_ERROR_NULL, without its C compound literal
    sd_bus_message* message = nullptr;
    ~Reply() { // made only once libsystemd is loaded
        const LibSystemd& sd = libsystemd();
        sd.sd_bus_error_free(&error);
        sd.sd_bus_message_unref(message);
    }
};

[[noreturn]] void fail(const std::string& what, int r, const sd_bus_error& error) {
    throw Error("systemd: " + what + " failed: " +
                (error.message ? std::string(error.message) : std::string(std::strerror(-r))));
}

} // namespace

std::string OnlineStep::text() const {
    switch (kind) {
    case Kind::reload:
        return "daemon-reload";
    case Kind::set_allowed_cpus:
        return (cpus.empty() ? "AllowedCPUs reset to every CPU on " + unit
                             : "AllowedCPUs=" + cpus.to_string() + " on " + unit) +
               " (runtime)";
    case Kind::try_restart:
        return "try-restart " + unit;
    case Kind::restart:
        return "restart " + unit;
    case Kind::stop:
        break;
    }
    return "stop " + unit;
}

namespace {

// The systemctl verb of a job step; "" for the others.
std::string job_verb(OnlineStep::Kind kind) {
    switch (kind) {
    case OnlineStep::Kind::try_restart:
        return "try-restart";
    case OnlineStep::Kind::restart:
        return "restart";
    case OnlineStep::Kind::stop:
        return "stop";
    case OnlineStep::Kind::reload:
    case OnlineStep::Kind::set_allowed_cpus:
        break;
    }
    return "";
}

} // namespace

std::string OnlineStep::command() const {
    // As a shell reads it back: a unit name may hold a '\\' (systemd-escape).
    if (kind == Kind::reload)
        return "systemctl daemon-reload";
    // An empty AllowedCPUs= resets it (systemd.resource-control(5)).
    if (kind == Kind::set_allowed_cpus)
        return core::shell_command(
            {"systemctl", "set-property", "--runtime", unit, "AllowedCPUs=" + cpus.to_string()});
    return core::shell_command({"systemctl", job_verb(kind), unit});
}

std::vector<OnlineStep> online_steps(const OnlineActions& actions) {
    using Kind = OnlineStep::Kind;
    std::vector<OnlineStep> steps;
    if (actions.reload)
        steps.push_back({Kind::reload, "", {}});
    for (const auto& [unit, cpus] : actions.runtime_allowed_cpus)
        steps.push_back({Kind::set_allowed_cpus, unit, cpus});
    for (const std::string& unit : actions.try_restart)
        steps.push_back({Kind::try_restart, unit, {}});
    for (const std::string& unit : actions.restart)
        steps.push_back({Kind::restart, unit, {}});
    for (const std::string& unit : actions.stop)
        steps.push_back({Kind::stop, unit, {}});
    return steps;
}

std::string systemctl_commands(const std::vector<OnlineStep>& steps) {
    std::string out;
    for (std::size_t i = 0; i < steps.size(); ++i) {
        std::string command = steps[i].command();
        if (const std::string verb = job_verb(steps[i].kind); !verb.empty())
            for (; i + 1 < steps.size() && steps[i + 1].kind == steps[i].kind; ++i)
                command += " " + core::shell_command({steps[i + 1].unit});
        out += (out.empty() ? "" : " && ") + command;
    }
    return out;
}

namespace {

// Sends one step; returns systemd's answer when it fails, "" when it was done.
std::string send(sd_bus* bus, const OnlineStep& step) {
    const LibSystemd& sd = libsystemd();
    using Kind = OnlineStep::Kind;
    Reply reply;
    int r = 0;
    if (step.kind == Kind::reload) {
        r = sd.sd_bus_call_method(bus, k_service, k_path, k_manager, "Reload", &reply.error,
                                  &reply.message, "");
    } else if (step.kind == Kind::set_allowed_cpus) {
        sd_bus_message* request = nullptr;
        r = sd.sd_bus_message_new_method_call(bus, &request, k_service, k_path, k_manager,
                                              "SetUnitProperties");
        std::unique_ptr<sd_bus_message, sd_bus_message* (*)(sd_bus_message*)> owned(
            request, sd.sd_bus_message_unref);
        std::vector<std::uint8_t> mask = cpu_mask_bytes(step.cpus);
        if (r >= 0)
            r = sd.sd_bus_message_append(request, "sb", step.unit.c_str(), 1);
        if (r >= 0)
            r = sd.sd_bus_message_open_container(request, 'a', "(sv)");
        if (r >= 0)
            r = sd.sd_bus_message_open_container(request, 'r', "sv");
        if (r >= 0)
            r = sd.sd_bus_message_append(request, "s", "AllowedCPUs");
        if (r >= 0)
            r = sd.sd_bus_message_open_container(request, 'v', "ay");
        if (r >= 0)
            r = sd.sd_bus_message_append_array(request, 'y', mask.data(), mask.size());
        for (int i = 0; r >= 0 && i < 3; ++i)
            r = sd.sd_bus_message_close_container(request);
        if (r >= 0)
            r = sd.sd_bus_call(bus, request, 0, &reply.error, &reply.message);
    } else {
        const char* method = step.kind == Kind::try_restart ? "TryRestartUnit"
                             : step.kind == Kind::restart   ? "RestartUnit"
                                                            : "StopUnit";
        r = sd.sd_bus_call_method(bus, k_service, k_path, k_manager, method, &reply.error,
                                  &reply.message, "ss", step.unit.c_str(), "replace");
    }
    if (r >= 0)
        return "";
    return "systemd: " + step.text() + " failed: " +
           (reply.error.message ? std::string(reply.error.message)
                                : std::string(std::strerror(-r)));
}

} // namespace

OnlineResult apply_online(const OnlineActions& actions) {
    OnlineResult result;
    const std::vector<OnlineStep> steps = online_steps(actions);
    if (steps.empty())
        return result;
    const LibSystemd* loaded = nullptr;
    try {
        loaded = &libsystemd();
    } catch (const Error& e) {
        result.failure = e.what();
        result.not_done = steps;
        return result;
    }
    const LibSystemd& sd = *loaded;
    sd_bus* raw = nullptr;
    int r = sd.sd_bus_open_system(&raw);
    if (r < 0) {
        result.failure = std::string("cannot reach systemd on the system bus: ") +
                         std::strerror(-r) +
                         "; is this a running systemd system? (offline images: use --root)";
        result.not_done = steps;
        return result;
    }
    Bus bus(raw, sd.sd_bus_flush_close_unref);
    for (std::size_t i = 0; i < steps.size(); ++i) {
        result.failure = send(bus.get(), steps[i]);
        if (!result.complete()) {
            result.not_done.assign(steps.begin() + std::ptrdiff_t(i), steps.end());
            return result;
        }
        result.done.push_back(steps[i]);
    }
    return result;
}

void request_reboot(const std::string& argument) {
    const LibSystemd& sd = libsystemd();
    if (!argument.empty()) {
        // systemd reads it at shutdown (systemd-shutdown, as 'systemctl reboot ARG' writes it)
        if (!fs::write_kernel_file("/run/systemd/reboot-param", argument + "\n",
                                   fs::KernelFileOpen::create))
            throw Error("cannot write /run/systemd/reboot-param (for the reboot argument '" +
                        argument + "'); reboot by hand: systemctl reboot '" + argument + "'");
    }
    sd_bus* raw = nullptr;
    int r = sd.sd_bus_open_system(&raw);
    if (r < 0)
        throw Error(std::string("cannot reach systemd on the system bus to reboot: ") +
                    std::strerror(-r));
    Bus bus(raw, sd.sd_bus_flush_close_unref);
    Reply reply;
    r = sd.sd_bus_call_method(bus.get(), k_service, k_path, k_manager, "StartUnit", &reply.error,
                              &reply.message, "ss", "reboot.target", "replace-irreversibly");
    if (r < 0)
        fail("reboot", r, reply.error);
}

} // namespace rtprov::systemd
