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

// Sends the actions to the system manager. Throws rtprov::Error with systemd's answer.
// Returns what was done, one line each, for the user.
std::vector<std::string> apply_online(const OnlineActions& actions);

// Asks the system manager to reboot, as 'systemctl reboot' does (StartUnit
// reboot.target, replace-irreversibly). Returns at once; the caller should exit soon.
// Throws rtprov::Error with systemd's answer.
void request_reboot();

} // namespace rtprov::systemd
