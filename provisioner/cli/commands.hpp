// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/cli/render.hpp"
#include "provisioner/fs/root.hpp"
#include "provisioner/fs/root_lock.hpp"

#include <CLI/CLI.hpp>

#include <ctime>
#include <optional>
#include <string>
#include <vector>

// Commands that live in their own files; main.cpp registers and dispatches them.
namespace rtprov::cli {

inline constexpr int k_exit_ok = 0;
inline constexpr int k_exit_failed = 1;
inline constexpr int k_exit_usage = 2;
inline constexpr int k_exit_not_passed = 3; // selftest, audit: ran, and did not pass

// The environment variable that hands the root lock's descriptor to a child rtprov.
inline constexpr const char* k_lock_fd_variable = "RTPROV_ROOT_LOCK_FD";

// Where selftest keeps its reports and history (--history); report and status read them.
inline constexpr const char* k_selftest_history = "/var/lib/rtprov/selftest";
// The newest self-test report kept in ROOT's history folder as 'selftest --prometheus'
// writes it (for 'status --prometheus'); "" when there is no such folder or no report in
// it. Throws rtprov::Error naming the folder or file it cannot read.
std::string newest_selftest_prometheus(const fs::Root& root);

// 'rtprov selftest': latency run and PI-boost probe on this machine.
struct SelftestCommand {
    CLI::App* app = nullptr;
    std::string cpus;
    unsigned duration_s = 10;
    unsigned interval_us = 100;
    int priority = 99;
    std::string idle = "default"; // default | held | both
    bool load = false;
    unsigned pi_probe_s = 5;
    unsigned stop_above_us = 0; // 0: not given
    unsigned summary_s = 0;     // --summary; given or not: app->count("--summary")
    bool trace = false;         // --trace: the kernel's timerlat tracer measures
    std::string json_file;
    std::string prometheus_file;
    std::string html_file;
    bool compare = false;
    std::string history_dir = "/var/lib/rtprov/selftest";
    std::string sysroot = "/";
};
void add_selftest_command(CLI::App& parent, SelftestCommand& c);
int run_selftest(const SelftestCommand& c);

// 'rtprov report': a kept self-test report shown again, and as an HTML page.
struct ReportCommand {
    CLI::App* app = nullptr;
    std::string history_dir = k_selftest_history;
    std::string from; // a report file; "" for the newest in history_dir
    std::string html_file;
};
void add_report_command(CLI::App& parent, ReportCommand& c);
int run_report(const ReportCommand& c);

// Refuses, before work that would end in it, a file whose folder does not exist or that
// is there but not a regular file (a folder, a symlink, a device).
void check_output_file(const std::string& path);
// The check of an option naming a file a command writes (--prometheus, --html): a name,
// and not '-', which is standard output for --json only. "" when it is one.
std::string output_file_name_problem(const std::string& value);

// 'rtprov audit': checks the running system against the applied profile.
struct AuditCommand {
    CLI::App* app = nullptr;
    bool json = false;
    std::string prometheus_file; // --prometheus FILE
    std::string sysroot = "/";
};
void add_audit_command(CLI::App& parent, AuditCommand& c);
int run_audit(const AuditCommand& c);

// 'rtprov status': what is applied to a root and what changed since. main.cpp opens the
// root (--root, --live, --image) and passes it.
struct StatusCommand {
    bool json = false;
    bool diff = false;           // --diff: what changed, as unified diffs
    std::string prometheus_file; // --prometheus FILE
    bool live = false;
};
void add_status_options(CLI::App& status, StatusCommand& c);
// Prints the status of 'root' ('name': how to call it). Returns 0 when a profile is
// applied and every file is as rtprov wrote it (or nothing is applied), 3 when a managed
// file changed or went missing or an apply or rollback was interrupted, 1 for a state
// that is not this root's; a damaged state throws rtprov::Error.
int run_status(const fs::Root& root, const std::string& name, const StatusCommand& c);

// 'rtprov firstboot': the first-boot flow of rtprov-firstboot.service.
struct FirstbootCommand {
    CLI::App* app = nullptr;
};
void add_firstboot_command(CLI::App& parent, FirstbootCommand& c);
int run_firstboot(const FirstbootCommand& c);

// 'rtprov trial status|check|commit|abort': the trial of a boot configuration.
struct TrialCommand {
    CLI::App* app = nullptr;
    CLI::App* status = nullptr;
    CLI::App* check = nullptr;
    CLI::App* commit = nullptr;
    CLI::App* abort = nullptr;
    bool json = false;
    std::string prometheus_file; // status, check: the outcome as a Prometheus textfile
    std::string root = "/";
    std::string sysroot = "/";
};
void add_trial_command(CLI::App& parent, TrialCommand& c);
// The trial under 'root' and what this boot is to it: from 'sysroot's /proc when
// 'running', else (an image) an armed trial is its next boot.
TrialView trial_view(const fs::Root& root, const std::string& sysroot, bool running);
int run_trial(const TrialCommand& c);
// First boot armed a trial ('apply --live --trial') and does not reboot into it ('why'):
// the trial is disarmed (GRUB's next_entry, systemd-boot's one-shot), recorded as aborted
// with 'why', and its boot configuration made the default by a plain apply of the applied
// profile, as a commit does (tryboot.txt and the trial's other files retired), so that no
// later reboot boots it. Nothing when no trial is armed. Throws rtprov::Error when that
// apply fails.
void take_back_trial(fs::Root& root, const fs::RootLock& lock, const std::string& why);

// 'rtprov irq-tune': what rtprov-irq-tune@.service runs (live::tune_irqs), or with
// --restore what 'rollback --live' puts back (live::restore_irqs).
struct IrqTuneCommand {
    CLI::App* app = nullptr;
    int sound_priority = 0;
    std::string sound_cpus;
    std::vector<std::string> sound_names;
    std::optional<int> other_priority;
    std::optional<int> timer_priority;
    std::string workqueue_cpus;
    bool restore = false;
    std::string state = "/run/rtprov/irq-tune.state";
};
void add_irq_tune_command(CLI::App& parent, IrqTuneCommand& c);
int run_irq_tune(const IrqTuneCommand& c);

// Writes 'content' to 'path' atomically (readers of a Prometheus textfile or a JSON
// report never see half a file), as check_output_file() allows; a file that is there
// keeps its mode and owner.
void write_file(const std::string& path, const std::string& content);

// Runs this rtprov binary with 'args'; its stdout goes to 'stdout_path' when given. The
// child gets the root lock the caller holds ('lock_fd', kept open across exec and named
// in RTPROV_ROOT_LOCK_FD), so its apply runs under that lock instead of finding the root
// locked. Returns its exit code (128+N for a signal).
int run_rtprov(int lock_fd, const std::vector<std::string>& args,
               const std::string& stdout_path = "");

} // namespace rtprov::cli

#include "provisioner/core/profile.hpp"

#include <optional>
#include <vector>

namespace rtprov::cli {

// Now, by this machine's clock, for what measures or judges this machine (self-test
// reports, first boot's and the trial's records), never SOURCE_DATE_EPOCH: a report
// dated by it would sort as the newest for ever. (What apply and rollback write into an
// image takes SOURCE_DATE_EPOCH's time: main.cpp, write_time.)
std::time_t now_unix();
// SOURCE_DATE_EPOCH when it is set; rtprov::Error when it is not a time.
std::optional<std::time_t> source_date_epoch();
// ISO 8601, UTC; the default is the extended format (2026-12-03T14:26:38Z)
std::string utc_text(std::time_t t, const char* format = "%Y-%m-%dT%H:%M:%SZ");
std::string utc_now(); // now_unix() in utc_text's format

// rtprov's built-in data folder 'sub' (profiles, apps): share/rtprov/ beside bin/.
std::string data_dir(const char* sub);

// The crash tests' hook (RTPROV_TEST_KILL_AT_STEP, docs/ARCHITECTURE.md) on 'root', for
// every command that writes through it.
void set_test_kill_hook(fs::Root& root);

// Throws rtprov::Error unless every file of 'needed' (paths below the root, such as
// "proc/cmdline") can be read under the --sysroot 'sysroot': a folder without them is not
// the root of a running system, and reading it would show nothing wrong. 'without' says
// what leaving --sysroot out does ("audit this machine").
void check_sysroot(const std::string& sysroot, const std::vector<std::string>& needed,
                   const std::string& without);

// The CPUs online under 'sysroot' (/sys/devices/system/cpu/online). Throws rtprov::Error
// when the file cannot be read.
core::CpuList online_cpus(const std::string& sysroot);

// The number of CPUs present under 'sysroot', as 'apply --live' resolves 'auto' core
// lists (target::probe), so the roles and checks match what apply wrote.
unsigned present_cpu_count(const std::string& sysroot);

} // namespace rtprov::cli
