// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/core/file_state.hpp"
#include "provisioner/core/profile.hpp"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace rtprov::core {

enum class Severity { info, warning, error };

// Something the plan wants the user to know: a skipped setting and why, a risk, or a
// refusal (error) that stops apply.
struct Finding {
    Severity severity = Severity::info;
    std::string code;    // stable identifier for machines, e.g. "cores-auto"
    std::string message; // the reason and what was done instead, or what to do
    friend bool operator==(const Finding&, const Finding&) = default;
};

// What the target's os-release says (ID, ID_LIKE, VERSION_ID, PRETTY_NAME).
struct OsRelease {
    std::string id;
    std::vector<std::string> id_like;
    std::string version_id;
    std::string pretty_name;
};

enum class TargetMode { offline, live };

// A kernel installed in the target's /boot.
struct InstalledKernel {
    std::string version;     // '6.12.117+deb13-amd64'
    bool has_image = false;  // /boot/vmlinuz-<version>
    bool has_initrd = false; // /boot/initrd.img-<version>
    // CONFIG_* options set in /boot/config-<version> ('y', 'm' or a value); nullopt when
    // that file is missing or unreadable.
    std::optional<std::map<std::string, std::string>> config;
};

// What the target says about the Raspberry Pi boot partition.
struct FirmwarePartition {
    std::string dir;                         // folder holding config.txt and cmdline.txt, in-root
    bool has_boot_files = false;             // config.txt or cmdline.txt is there
    std::vector<std::string> files;          // names in 'dir'
    std::optional<std::string> fstab_source; // the fstab entry mounted on 'dir', if any
    bool mounted = false;                    // something is mounted on it now (mount table)
};

// How boot configuration is regenerated after the command line changes.
enum class Regenerate { now, first_boot, never };

// The file system a path of the target lives on, from the running system's mount table.
struct MountFact {
    std::string source; // the device ('/dev/vda1', '/dev/mapper/vg-root') or '' when unknown
    std::string fstype; // 'ext4', 'btrfs', ...
};

// Everything plan() knows about the target, read beforehand by target::probe().
struct TargetFacts {
    TargetMode mode = TargetMode::offline;
    std::optional<OsRelease> os;
    std::optional<unsigned> cpu_count; // the running machine's, live mode only
    // Current state of every path plan() reads or may write; absent when missing. Read
    // through file(), which holds the planners to what the probe read.
    std::map<std::string, FileState> files;
    // The players' files (target::probe_players) that are there but that rtprov will not
    // read (a folder, a FIFO, over its size limit, a link out of the root), each with why;
    // file() has none of them. The other probes refuse such a file outright.
    std::map<std::string, std::string> unreadable;
    // Every path target::probe looked at, there or not; nullopt for facts made by hand
    // (unit tests), which file() takes as they are.
    std::optional<std::set<std::string>> probed;
    // Content before rtprov's first change, for files rtprov changed (from its backup).
    std::map<std::string, std::string> originals;
    std::vector<InstalledKernel> kernels;
    // The boot loader's row target::probe read the target with (boot::loader_for: the
    // profile's, or a flavour of it found in the target); nullopt for facts made by hand,
    // which plan with the profile's.
    std::optional<BootLoader> boot_loader;
    std::optional<FirmwarePartition> firmware; // rpi-firmware profiles
    std::vector<std::string> executables;      // of those plan() asks about, the ones present
    // The names in the folders plan() lists (the players' drop-in folders), sorted; read
    // through listing(), which holds the planners to what the probe listed.
    std::map<std::string, std::vector<std::string>> listings;
    std::set<std::string> installed_packages; // from /var/lib/dpkg/status
    std::set<std::string> units; // systemd units installed ('mpd.service'), of those asked about
    // Command-line keys the applied profile owned (read from it by the caller): a key a
    // new profile drops is still rtprov's to take back.
    std::vector<std::string> previous_owned_keys;
    // Commands an earlier apply planned but did not finish (rtprov's state).
    std::vector<std::vector<std::string>> pending_commands;
    // GRUB trial only: the file system /boot/grub lives on (GRUB writes its environment
    // block there at boot); nullopt when the mount table does not say.
    std::optional<MountFact> grub_env_mount;
    // systemd-boot trial only: the folder of its entries ($BOOT/loader/entries, the first of
    // /efi, /boot, /boot/efi that has one, as kernel-install(8) looks), whose *.conf files
    // are among 'files'; nullopt when there is none.
    std::optional<std::string> boot_entries_dir;
    // Live only: whether the machine has watchdog0, the device systemd's RuntimeWatchdogSec=
    // drives (systemd-system.conf(5), WatchdogDevice=); nullopt offline.
    std::optional<bool> watchdog;
    // Live trial of a loader whose row has a trial boot flag (boot::Loader::trial_boot_flag)
    // only: whether the bootloader reports it (the Raspberry Pi's tryboot,
    // /proc/device-tree/chosen/bootloader/tryboot); false when it reports other
    // properties there but not that one (a bootloader from before tryboot), nullopt when
    // it reports none.
    std::optional<bool> tryboot_supported;

    bool has_executable(const std::string& path) const;
    // The state of 'path', nullptr when the target has none. Throws std::logic_error when
    // these facts come from target::probe and it never looked at 'path': a planner that
    // reads a path the probe forgot would otherwise take it for a missing file.
    const FileState* file(const std::string& path) const;
    // The names in folder 'dir' (empty when there is none). Throws std::logic_error, as
    // file() does, when these facts come from target::probe and it never listed 'dir'.
    std::vector<std::string> listing(const std::string& dir) const;
    // What the probe saw at 'path' (nullopt: nothing there).
    void record(const std::string& path, std::optional<FileState> state);
    // The content before rtprov of 'path': its original if rtprov changed it, else now.
    std::optional<std::string> original_content(const std::string& path) const;
};

// What the user asked for on the command line, beyond the profile.
struct PlanOptions {
    Regenerate regenerate = Regenerate::first_boot;
    bool install_packages = false; // run the package manager in the target
    bool force_priority = false;   // allow unit-wide priorities that invert an app's own
    // A trial (apply --trial): the boot configuration is written so that the next boot,
    // and only that one, tries it; rtprov-trial.service commits it when the booted system
    // passes the self-test and audit. The default boot stays what it is.
    bool trial = false;
    // The trial's id, the marker on its kernel command line (rtprov.trial=ID): the start
    // of the resolved profile's SHA-256, set by planner::plan.
    std::string trial_id;
    // apply --firstboot, offline: the content of k_firstboot_config_path (written by
    // profile::write_firstboot_config), planned with rtprov-firstboot.service's enable link.
    // nullopt: an offline plan retires the two if an earlier apply wrote them; a live plan
    // keeps them (Plan::kept: first boot itself, or the trial it armed, is what applies
    // the running system before first boot has finished).
    std::optional<std::string> firstboot_config;
};

// A program run in the target after the files are written (inside the root, through
// a chroot offline).
struct Command {
    std::vector<std::string> argv;
    std::string reason;
    // Regenerates boot configuration from files rtprov changes: rollback runs it again
    // after restoring them. (Installing a package is not undone that way.)
    bool rerun_on_rollback = true;
    // Files it (re)writes, which rollback puts back byte for byte when nothing touched
    // them since (/boot/grub/grub.cfg for update-grub).
    std::vector<std::string> produces;
    friend bool operator==(const Command&, const Command&) = default;
};

// One file to create or replace. 'old' is what is there now (nullopt: nothing).
struct FileChange {
    std::string path; // absolute, inside the target root
    std::optional<FileState> old;
    FileState next;
    std::string reason;
};

// How rtprov edits a command-line file it does not own (cmdline.txt, /etc/kernel/cmdline):
// token by token, in its first line or all of it. apply keeps this in its state, so that
// rollback can take out rtprov's own part and keep what others changed since (pi-gen
// rewrites root=ROOTDEV after rtprov ran), and status can tell the two apart.
struct CmdlineEdit {
    bool first_line_only = false;        // cmdline.txt: the firmware reads line 1
    std::vector<std::string> owned_keys; // the keys rtprov owns in this file
    std::vector<std::string> part;       // the tokens of those keys as rtprov left them
    friend bool operator==(const CmdlineEdit&, const CmdlineEdit&) = default;
};

struct Plan {
    std::vector<FileChange> changes;    // in the order apply performs them
    std::vector<std::string> unchanged; // managed paths already as planned
    // Paths this plan leaves as they are, whatever they hold: not written, and, where an
    // earlier apply wrote them, not retired either and still recorded as it wrote them
    // (first boot's files, on the running system: systemd::plan_firstboot).
    std::vector<std::string> kept;
    // Command-line files among the changed and unchanged paths, by path as written.
    std::map<std::string, CmdlineEdit> cmdline_edits;
    std::vector<Finding> findings;
    std::vector<std::string> packages; // what the target needs installed (plan --packages)
    std::vector<Command> commands;     // run by apply after the files, in order
    // The boot loader this plan writes for (TargetFacts::boot_loader, else the profile's).
    BootLoader boot_loader = BootLoader::grub;
    // Commands an earlier apply left pending (TargetFacts::pending_commands) that this
    // plan leaves to first boot instead, in k_pending_regeneration_path: apply takes them
    // off the state's pending list once that file is written.
    std::vector<std::vector<std::string>> recorded_for_first_boot;
    // Changed or unchanged paths that others change after apply, by design: GRUB's
    // environment block, which GRUB itself rewrites at the trial boot. Rollback puts the
    // original back whatever they hold; status does not call that drift.
    std::set<std::string> runtime;

    bool refused() const;
};

// Path of the resolved profile that first boot and audit read.
inline constexpr const char* k_applied_profile_path = "/etc/rtprov/profile.yaml";

// The trial's record: what is on trial, and how it ended (target::TrialRecord).
inline constexpr const char* k_trial_record_path = "/var/lib/rtprov/trial";
// The trial boot's self-test and audit reports.
inline constexpr const char* k_trial_reports_dir = "/var/lib/rtprov/trial-reports";
// The kernel parameter that marks a trial boot: rtprov.trial=<trial id>.
inline constexpr const char* k_trial_param = "rtprov.trial";
// The id of a trial of the resolved profile 'profile_yaml': the start of its SHA-256.
std::string trial_id_of(const std::string& profile_yaml);

// On the trial boot's command line: a panicking trial kernel reboots after this many
// seconds (panic=, Documentation/admin-guide/kernel-parameters.txt), and systemd starts
// the deadline target, whose job timeout reboots a boot that never reaches the check.
inline constexpr unsigned k_trial_panic_s = 10;
inline constexpr const char* k_trial_deadline_target = "rtprov-trial-deadline.target";
inline constexpr const char* k_trial_unit = "rtprov-trial.service";

// First boot (docs/firstboot.md): the unit rtprov's package ships, and its configuration,
// which 'apply --firstboot' writes.
inline constexpr const char* k_firstboot_unit = "rtprov-firstboot.service";
inline constexpr const char* k_firstboot_config_path = "/etc/rtprov/firstboot.yaml";
// The deadline's job timeout, and the longest self-test a trial's check may run inside it
// (the audit, the commit's update-grub and the boot itself need the rest).
inline constexpr unsigned k_trial_deadline_s = 900;
inline constexpr unsigned k_trial_selftest_max_s = 600;

// The health gate (docs/update-gate.md): 'rtprov health', the verdict on the running
// system that update frameworks read, run at boot by rtprov-health.service, which
// boot-complete.target requires; its verdict and reports are kept in k_health_dir.
inline constexpr const char* k_health_unit = "rtprov-health.service";
inline constexpr const char* k_health_dir = "/var/lib/rtprov/health";
// The gate's self-test runs the profile's selftest.duration_s, at most this long (a soak
// run of hours is no gate at boot); the trial's check runs the same gate.
inline constexpr unsigned k_health_selftest_max_s = k_trial_selftest_max_s;
// How long 'rtprov health' may take with these limits before it stops and reports that it
// could not judge in time: the latency run, the underrun test of as long when the profile
// asks for it, and 120 s for the audit, the children's start and the player's stop and
// start. rtprov-health.service's TimeoutStartSec= is k_health_unit_slack_s more, so that
// rtprov tells its own timeout before systemd kills it.
unsigned health_timeout_s(const SelftestThresholds& limits);
inline constexpr unsigned k_health_unit_slack_s = 60;

// Where 'rtprov selftest' keeps every report and its history (--history).
inline constexpr const char* k_selftest_history_dir = "/var/lib/rtprov/selftest";

// Marker for the first-boot flow: the boot configuration still has to be regenerated;
// it holds the commands, one per line.
inline constexpr const char* k_pending_regeneration_path = "/var/lib/rtprov/regenerate-boot";

// The first line of every file rtprov owns, in the comment syntax '#'; it starts with
// k_owned_header_start, which rollback takes as rtprov's mark on a file it created.
std::string owned_file_header(const std::string& profile_name);
inline constexpr const char* k_owned_header_start = "# Written by rtprov from profile '";

// Adds a change making 'path' hold 'next' (keeping the mode and owner of a file that is
// there), or lists it as unchanged.
void add_file_change(Plan& plan, const TargetFacts& facts, const std::string& path, FileState next,
                     std::string reason);

std::string to_string(Severity severity);

} // namespace rtprov::core
