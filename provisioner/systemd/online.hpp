// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/core/cpu_list.hpp"
#include "provisioner/core/plan.hpp"

#include <string>
#include <utility>
#include <vector>

// Applying on the running system (--live): what systemd must be told after the files
// are written, and telling it over D-Bus (libsystemd's sd-bus).
namespace rtprov::systemd {

struct OnlineActions {
    bool reload = false;                  // daemon-reload: unit files changed
    std::vector<std::string> try_restart; // services whose drop-ins changed (if running)
    std::vector<std::string> restart;     // rtprov's own units, to take effect now
    std::vector<std::string> stop;        // rtprov's own units that were removed
    // --runtime: cpuset properties set on the running units without a reboot.
    std::vector<std::pair<std::string, core::CpuList>> runtime_allowed_cpus;

    bool empty() const {
        return !reload && try_restart.empty() && restart.empty() && stop.empty() &&
               runtime_allowed_cpus.empty();
    }
};

// What 'plan' means for the running systemd. 'cores' and 'runtime' (the user's
// --runtime) decide the cpuset properties. Pure.
OnlineActions online_actions(const core::Plan& plan, const core::Profile& profile,
                             const std::optional<core::ResolvedCores>& cores, bool runtime,
                             const std::vector<std::string>& retired = {});

// What systemd must be told after files under /etc/systemd/system were removed or put
// back (rollback, or files an apply retired): reload, restart the services whose
// drop-ins went, stop rtprov's own units that went. Pure.
OnlineActions rollback_actions(const std::vector<std::string>& paths);

// AllowedCPUs= as D-Bus wants it ('ay'): a bit per CPU, CPU 0 in bit 0 of byte 0.
std::vector<std::uint8_t> cpu_mask_bytes(const core::CpuList& cpus);

// One thing to tell the system manager.
struct OnlineStep {
    enum class Kind { reload, set_allowed_cpus, try_restart, restart, stop };
    Kind kind = Kind::reload;
    std::string unit;   // "" for reload
    core::CpuList cpus; // set_allowed_cpus: the runtime AllowedCPUs=, empty to reset

    // For the user: 'daemon-reload', 'try-restart mpd.service',
    // 'AllowedCPUs=0-1 on system.slice (runtime)'.
    std::string text() const;
    // What does the same by hand (systemctl(1)): 'systemctl daemon-reload',
    // 'systemctl set-property --runtime system.slice AllowedCPUs=0-1'.
    std::string command() const;
    friend bool operator==(const OnlineStep&, const OnlineStep&) = default;
};

// The steps of 'actions' in the order apply_online sends them: reload, the runtime
// AllowedCPUs=, try-restarts, restarts, stops. Pure.
std::vector<OnlineStep> online_steps(const OnlineActions& actions);

// The commands that do 'steps' by hand, joined with ' && '; consecutive restarts (or
// try-restarts, stops) share one systemctl. Pure.
std::string systemctl_commands(const std::vector<OnlineStep>& steps);

// What telling systemd came to.
struct OnlineResult {
    std::vector<OnlineStep> done;
    std::vector<OnlineStep> not_done; // the step that failed and those after it
    std::string failure;              // why, with systemd's answer; "" when all were done

    bool complete() const { return failure.empty(); }
};

// Sends the steps of 'actions' to the system manager over D-Bus, in order, stopping at
// the first that fails. Never throws for systemd's refusals or an unreachable bus: the
// result says what was done and what was not, so the caller can tell the user how to
// finish.
OnlineResult apply_online(const OnlineActions& actions);

// Asks the system manager to reboot, as 'systemctl reboot' does (StartUnit
// reboot.target, replace-irreversibly). Returns at once; the caller should exit soon.
// Throws rtprov::Error with systemd's answer.
// 'argument' ("0 tryboot" for the Raspberry Pi firmware's one-shot flag) goes to the
// kernel's reboot call: written to /run/systemd/reboot-param, which systemd-shutdown
// reads, as 'systemctl reboot ARG' does (systemctl(1)).
void request_reboot(const std::string& argument = "");

} // namespace rtprov::systemd
