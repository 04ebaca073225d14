// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/cli/environment.hpp"
#include "provisioner/cli/render.hpp"
#include "provisioner/core/plan.hpp"
#include "provisioner/fs/root.hpp"
#include "provisioner/fs/root_lock.hpp"
#include "provisioner/selftest/report.hpp"

#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <vector>

// The commands, one file each (or one for the three service commands): the options of
// each, what adds them to its CLI11 subcommand, and what runs it. command_table.cpp lists
// them; main.cpp parses and runs the one asked for.
namespace rtprov::cli {

inline constexpr int k_exit_ok = 0;
inline constexpr int k_exit_failed = 1;
inline constexpr int k_exit_usage = 2;
inline constexpr int k_exit_not_passed = 3; // selftest, audit: ran, and did not pass

// --root DIR, --image FILE, --live: the target of profiles, plan, apply, status and
// rollback (target_options.cpp).
struct TargetOptions {
    std::string root;
    std::string image; // --image FILE: a disk image, opened for the command (target::ImageSession)
    bool live = false;
};

// 'rtprov profiles [show NAME]'
struct ProfilesCommand {
    CLI::App* show = nullptr;
    std::vector<std::string> profile_dirs;
    std::vector<std::string> sets;
    bool json = false;
    std::string show_name;
};
void add_profiles_options(CLI::App& command, TargetOptions& target, ProfilesCommand& c);
int run_profiles(const TargetOptions& target, const ProfilesCommand& c);

// What plan and apply share: the profile and how it is planned (plan_options.hpp).
struct PlanOptions {
    std::string profile;
    std::vector<std::string> profile_dirs;
    std::vector<std::string> sets;
    std::string regenerate; // now | first-boot | never; "" = the mode's default
    bool install_packages = false;
    bool force_priority = false;
    bool trial = false;                      // --trial
    bool firstboot = false;                  // --firstboot
    std::vector<std::string> firstboot_sets; // --firstboot-set KEY=VALUE
};

// 'rtprov plan'
struct PlanCommand {
    PlanOptions plan;
    bool json = false;
    bool packages = false; // --packages
};
void add_plan_command_options(CLI::App& command, TargetOptions& target, PlanCommand& c);
int run_plan(const TargetOptions& target, const PlanCommand& c);

// 'rtprov apply'
struct ApplyCommand {
    PlanOptions plan;
    bool runtime = false; // --live --runtime
};
void add_apply_options(CLI::App& command, TargetOptions& target, ApplyCommand& c);
int run_apply(const TargetOptions& target, const ApplyCommand& c);

// 'rtprov status': what is applied to a root and what changed since.
struct StatusCommand {
    bool json = false;
    bool diff = false;           // --diff: what changed, as unified diffs
    std::string prometheus_file; // --prometheus FILE
};
void add_status_options(CLI::App& command, TargetOptions& target, StatusCommand& c);
// Prints the status of the target. Returns 0 when a profile is applied and every file is
// as rtprov wrote it (or nothing is applied), 3 when a managed file changed or went
// missing or an apply or rollback was interrupted, 1 for a state that is not this root's;
// a damaged state throws rtprov::Error.
int run_status(const TargetOptions& target, const StatusCommand& c);

// 'rtprov rollback'
struct RollbackCommand {
    bool force = false;
    std::string regenerate; // now (default) | never
};
void add_rollback_options(CLI::App& command, TargetOptions& target, RollbackCommand& c);
int run_rollback(const TargetOptions& target, const RollbackCommand& c);

// 'rtprov sched-features', 'hold-cpu-dma-latency' and 'cpuset-partition': what rtprov's
// units run at boot (service_cmds.cpp).
struct CpusetPartitionCommand {
    std::string slice;
    std::string mode;
};
void add_cpuset_partition_options(CLI::App& command, CpusetPartitionCommand& c);
int run_sched_features();
int run_hold_cpu_dma_latency();
int run_cpuset_partition(const CpusetPartitionCommand& c);

// Where selftest keeps its reports and history (--history); report and status read them.
inline constexpr const char* k_selftest_history = core::k_selftest_history_dir;
// The newest self-test report kept in ROOT's history folder as 'selftest --prometheus'
// writes it (for 'status --prometheus'); "" when there is no such folder or no report in
// it. Throws rtprov::Error naming the folder or file it cannot read.
std::string newest_selftest_prometheus(const fs::Root& root);
// The newest report of the self-test history under 'root'; nullopt when there is none
// (a history that is not a folder is warned about on stderr).
std::optional<selftest::SelftestReport> newest_selftest(const fs::Root& root);

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
    // --audio[=DEVICE] (given or not: app->count("--audio")), --tone, --period, --buffer,
    // --stop-player: the underrun test
    std::string audio;
    bool tone = false;
    std::string period;
    std::string buffer;
    bool stop_player = false;
};
void add_selftest_options(CLI::App& command, SelftestCommand& c);
int run_selftest(const SelftestCommand& c);

// 'rtprov report': a kept self-test report shown again, and as an HTML page.
struct ReportCommand {
    CLI::App* app = nullptr;
    std::string history_dir = k_selftest_history;
    std::string from; // a report file; "" for the newest in history_dir
    std::string html_file;
};
void add_report_options(CLI::App& command, ReportCommand& c);
int run_report(const ReportCommand& c);

// Refuses, before work that would end in it, a file whose folder does not exist or that
// is there but not a regular file (a folder, a symlink, a device).
void check_output_file(const std::string& path);
// The check of an option naming a file a command writes (--prometheus, --html): a name,
// and not '-', which is standard output for --json only, nor another option. "" when it is one.
std::string output_file_name_problem(const std::string& value);

// Throws rtprov::Error unless every file of 'needed' (paths below the root, such as
// "proc/cmdline") can be read under the --sysroot 'sysroot': a folder without them is not
// the root of a running system, and reading it would show nothing wrong. 'without' says
// what leaving --sysroot out does ("audit this machine").
void check_sysroot(const std::string& sysroot, const std::vector<std::string>& needed,
                   const std::string& without);

// 'rtprov audit': checks the running system against the applied profile.
struct AuditCommand {
    CLI::App* app = nullptr;
    bool json = false;
    std::string prometheus_file; // --prometheus FILE
    std::string sysroot = "/";
};
void add_audit_options(CLI::App& command, AuditCommand& c);
int run_audit(const AuditCommand& c);

// 'rtprov firstboot': the first-boot flow of rtprov-firstboot.service.
struct FirstbootCommand {
    CLI::App* app = nullptr;
};
void add_firstboot_options(CLI::App& command, FirstbootCommand& c);
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
void add_trial_options(CLI::App& command, TrialCommand& c);
int run_trial(const TrialCommand& c);

// 'rtprov health': the verdict on the running system that update frameworks read
// (pipeline::run_health); its exit code is pipeline::health_exit_code's.
struct HealthCommand {
    CLI::App* app = nullptr;
    std::string sysroot = "/";
    bool json = false;
    std::string prometheus_file; // --prometheus FILE
    unsigned timeout_s = 0;      // --timeout; given or not: app->count("--timeout")
    bool boot = false;           // --boot: as rtprov-health.service runs it
};
void add_health_options(CLI::App& command, HealthCommand& c);
int run_health(const HealthCommand& c);

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
void add_irq_tune_options(CLI::App& command, IrqTuneCommand& c);
int run_irq_tune(const IrqTuneCommand& c);

// Writes 'content' to 'path' atomically (readers of a Prometheus textfile or a JSON
// report never see half a file), as check_output_file() allows; a file that is there
// keeps its mode and owner.
void write_file(const std::string& path, const std::string& content);

} // namespace rtprov::cli
