// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/core/plan.hpp"

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

// The boot loaders rtprov writes for, as one table: a row per loader (boot/*_loader.cpp),
// and what each knows — which files its probe reads, its plan and its trial, its
// regeneration command, how a trial is armed, told and disarmed, how its PREEMPT_RT kernel
// becomes the default. Every other folder asks this table and switches on no loader; the
// names of the loaders are core::words(BootLoader)'s, the profile's table. Pure: what needs
// I/O (reading the target, running bootctl, writing GRUB's environment block) is done by
// the caller, which asks the row what to do.
//
// A new loader is a file, boot/NAME_loader.cpp, that defines its row (the shared steps of
// its plan are in boot/plan_steps.hpp), a line in loaders() (boot/loader.cpp), its word in
// core::BootLoader and core/profile.cpp's table, and its source in provisioner/CMakeLists.txt.
namespace rtprov::boot {

struct PlanContext; // boot/plan_steps.hpp: what a loader's plan works on

// The size caps of what a probe reads (fs::caps, which the reader applies).
enum class ReadCap { config, cmdline, grub_defaults };

// What a loader's probe may do with the target root, whose paths are in-root ('/etc/fstab').
// target::probe gives it over fs::Root; tests may give their own.
class TargetReader {
  public:
    virtual ~TargetReader() = default;
    // The file at 'path', links followed inside the root; nullopt when there is none.
    // Throws rtprov::Error as fs::Root::read does (larger than 'cap', not a regular file).
    virtual std::optional<core::FileState> read(const std::string& path, ReadCap cap) const = 0;
    // 'path' itself: a symbolic link is returned as one (FileState::symlink), not followed.
    virtual std::optional<core::FileState> read_entry(const std::string& path,
                                                      ReadCap cap) const = 0;
    virtual bool exists(const std::string& path) const = 0;
    virtual bool is_directory(const std::string& path) const = 0;
    // The names in folder 'dir' (none when it is missing).
    virtual std::vector<std::string> list(const std::string& dir) const = 0;
    // How 'path' shows in messages (fs::Root::shown: the image's name, or the root's path).
    virtual std::string shown(const std::string& path) const = 0;
    // The source of the target's /etc/fstab entry that mounts on 'dir', if any.
    virtual std::optional<std::string> fstab_source(const std::string& dir) const = 0;
    // Whether something is mounted on 'dir' now, and the mount holding 'dir' (the running
    // system's mount table).
    virtual bool is_mount_point(const std::string& dir) const = 0;
    virtual std::optional<core::MountFact> mount_of(const std::string& dir) const = 0;
};

// A file the trial arms and the loader itself rewrites at boot (GRUB's environment block,
// whose next_entry GRUB clears as it boots it): its state line says others change it, and
// rollback puts back the original with what others set since kept.
struct RuntimeFile {
    std::string path{};
    // The block to write back: 'original' with the variables others set since 'current' was
    // armed kept; 'kept' says which ("" when it is 'original' itself).
    std::string (*rolled_back)(const std::string& original, const std::string& current,
                               std::string& kept) = nullptr;
    std::string kept_note{}; // follows 'kept' in rollback's report
};

// How a trial that ended, or is taken back before its boot, is disarmed: a file edited back,
// or a command run on the running machine. 'done' is what was done, for the user.
struct TrialDisarm {
    // The file the trial armed; 'disarmed' gives its content without the trial, nullopt when
    // it holds none. A missing file or a link is left alone. 'done' is followed by the
    // file's host path.
    std::string file{};
    std::optional<std::string> (*disarmed)(const std::string& content) = nullptr;
    // Or the command, run only when the root is '/' (the trial is armed in the firmware's
    // variables); 'failed' is the error when it fails. 'executable' is in the root wherever
    // such a trial can have been armed: a damaged record's trial is disarmed for every
    // loader that may have armed it.
    std::vector<std::string> argv{};
    std::string executable{};
    std::string failed{};
    std::string done{};
};

// The firmware's own word on whether this boot is the trial: a device-tree property of
// 'node' (a 32-bit cell, non-zero on the trial boot), and what to say when it cannot be
// read or says this boot is not the trial.
struct TrialBootFlag {
    std::string node{};     // '/proc/device-tree/chosen/bootloader'
    std::string property{}; // 'tryboot'
    std::string unreadable_hint{};
    std::string not_trial_hint{};
};

// One boot loader: a row of the table.
struct Loader {
    core::BootLoader id{};
    // A flavour of another loader, found in the target rather than named by the profile:
    // where a profile names 'flavour_of', this row reads and writes the target instead when
    // 'detect' finds it there (Debian's raspi-firmware package on a root whose profile
    // names rpi-firmware). A profile may also name this row itself.
    std::optional<core::BootLoader> flavour_of{};
    bool (*detect)(const TargetReader& reader) = nullptr;
    // Reads into 'facts' what plan() reads of this loader's files (TargetFacts::record for
    // each path, there or not) and which of the executables plan() asks about are there;
    // 'trial': also what apply --trial needs. Throws rtprov::Error for what no real system
    // has (65 drop-ins).
    void (*probe)(const TargetReader& reader, const core::Profile& profile,
                  core::TargetFacts& facts, bool trial) = nullptr;
    // The loader's part of plan_boot(): the command line into its files, the PREEMPT_RT
    // kernel choice, the regeneration; with options.trial, the trial instead. Adds changes,
    // commands and findings to the context's plan.
    void (*plan)(PlanContext& context) = nullptr;

    // The command that makes the boot configuration from the files rtprov writes, as
    // plan() makes it ('update-grub', 'kernel-install add RELEASE ...'); nullptr for none.
    bool (*regenerates)(const std::vector<std::string>& argv) = nullptr;
    // The files that command rewrites (/boot/grub/grub.cfg), which rollback puts back, and
    // the files whose presence says an installed loader reads them (GRUB's modules): rollback
    // makes such a file again instead of removing it when rtprov's command created it.
    std::vector<std::string> regenerated{};
    std::vector<std::string> regenerated_readers{};

    // The trial. How it is armed for the next boot: a command plan() adds, which a state may
    // list as pending (systemd-boot's one-shot), and the argument of the reboot into it
    // ("0 tryboot": the Pi firmware's one-shot flag), or neither (the next boot is the trial).
    std::vector<std::string> trial_arming_command{};
    std::string trial_reboot_argument{};
    std::optional<TrialBootFlag> trial_boot_flag{}; // how the trial boot is told, beyond its marker
    std::optional<RuntimeFile> runtime_file{};
    std::optional<TrialDisarm> disarm{}; // nullopt: nothing stays armed past the trial boot

    // PREEMPT_RT: how an installed RT kernel becomes the one that boots, for the audit's fix
    // ("boot the installed PREEMPT_RT kernel 'V': " and this); and, when rtprov's apply does
    // not make it the default (a reboot would not start it), what the user does ("" when it
    // does).
    std::string rt_default_fix{};
    std::string rt_default_by_hand{};

    std::string name() const { return core::to_string(id); }
};

// The table: every loader, in core::BootLoader's order.
std::span<const Loader* const> loaders();
// The row of 'id'. Throws std::logic_error when it has none (a bug: loader_test.cpp
// checks every word of the profile's table).
const Loader& loader(core::BootLoader id);
// The row named 'name' ("grub"), nullptr for none.
const Loader* find_loader(std::string_view name);
// The row that reads and writes the target: a flavour of the profile's loader that its
// detect() finds there, else the profile's own (target::probe records it in the facts).
const Loader& loader_for(const core::Profile& profile, const TargetReader& reader);
// The row the facts were probed with (TargetFacts::boot_loader), else the profile's.
const Loader& loader_for(const core::Profile& profile, const core::TargetFacts& facts);

} // namespace rtprov::boot
