// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/fs/root.hpp"
#include "provisioner/fs/root_lock.hpp"
#include "provisioner/pipeline/apply.hpp"
#include "provisioner/target/journal.hpp"

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

// The seams of the flows rtprov's units run on the booted machine (first boot, a trial's
// check): the rtprov commands they run as children, what they tell as they go, and the
// machine they work on. cli/ gives the real ones; the unit tests give a temporary root,
// fakes and a fixed clock.
namespace rtprov::pipeline {

// When a child must have ended, on the steady clock (CLOCK_MONOTONIC: a wall clock that
// jumps neither ends a run early nor stretches it); none: it runs until it ends.
using Deadline = std::optional<std::chrono::steady_clock::time_point>;

// What RtprovRunner::run returns for a child still running at its deadline, which it
// then stopped: never an exit code (those are 0 to 255, and 128+N for a signal).
inline constexpr int k_child_timed_out = -1;

// Runs rtprov commands as children ('rtprov apply --live', 'selftest', 'audit'), each
// under the lock the flow holds, so that its output reaches the unit's journal as on a
// terminal and each step is one an admin runs by hand.
class RtprovRunner {
  public:
    virtual ~RtprovRunner() = default;
    // Runs 'rtprov ARGS'; its stdout goes to the host file 'stdout_path' when given.
    // Returns its exit code (128+N for a signal), or k_child_timed_out when it was still
    // running at 'deadline': it is then sent SIGTERM (a self-test ends early and starts a
    // player it stopped again), SIGKILL when it has not ended a few seconds later, and is
    // left behind when even that does not end it (stuck in the kernel). Throws
    // rtprov::Error when it cannot run.
    virtual int run(const std::vector<std::string>& args, const std::string& stdout_path = "",
                    const Deadline& deadline = std::nullopt) = 0;
};

// Steps worth finding later, each with its own journal message id (documented in
// rtprov(1), and first boot's in docs/firstboot.md).
enum class FlowEvent {
    firstboot_start,
    firstboot_applied,
    firstboot_reboot,
    firstboot_missing,
    firstboot_done,
    trial_committed,
    trial_fell_back,
    health_healthy, // 'rtprov health': each verdict (pipeline/health.hpp)
    health_not_healthy,
    health_could_not_judge,
    health_reboot, // --boot: a reboot asked for: the boot loader tries again or falls back
};

// The journal's priorities (syslog's numbers).
enum class Priority { error = 3, warning = 4, notice = 5, info = 6 };

// What a flow tells as it goes. Library code never prints: cli/ sends each to the journal
// and the terminal as the unit's output needs.
class FlowLog {
  public:
    virtual ~FlowLog() = default;
    // A step worth finding later, 'message' as the flow words it; 'field' an extra
    // journal field ("NAME=value") or "".
    virtual void event(FlowEvent event, Priority priority, const std::string& message,
                       const std::string& field = "") = 0;
    // What runs now (first boot's status line).
    virtual void progress(const std::string& status) = 0;
    // A line of what was done, for the user.
    virtual void line(const std::string& text) = 0;
    // A problem the flow goes on after.
    virtual void warning(const std::string& message) = 0;
    // First boot failed with 'message' (its state records it). True when that was told
    // where the unit's user reads it, so the error need not be printed again.
    virtual bool failed(const std::string& message) = 0;
};

// The machine a flow works on, and through what it acts there.
struct Machine {
    fs::Root& root;           // the machine's '/' (a test's temporary root)
    const fs::RootLock& lock; // held by the flow throughout; the children run under it
    std::string sysroot;      // where its running system's /proc and /sys are
    // The root was booted, and the sysroot's /proc says which boot this is; false: an
    // image, whose next boot is the trial an apply armed there.
    bool booted = true;
    // The root and the sysroot are this machine's own, as the unit runs the flow: a trial
    // boot is judged (and committed) only then.
    bool running = true;
    // Runs a command on the machine ('bootctl set-oneshot'); empty where none may run (a
    // root that is not the running system's).
    target::CommandRunner run_command;
    RtprovRunner& rtprov;
    ServiceManager& manager; // the reboot
    FlowLog& log;
    std::function<std::string()> utc_now; // "2026-12-03T14:26:38Z", for the records
};

} // namespace rtprov::pipeline
