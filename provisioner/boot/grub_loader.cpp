// SPDX-License-Identifier: Apache-2.0
// Debian's GRUB: the command line in rtprov's drop-in /etc/default/grub.d/90-rtprov.cfg,
// the PREEMPT_RT kernel by GRUB_TOP_LEVEL, grub.cfg made by update-grub, the trial by an
// entry of its own and next_entry in GRUB's environment block (grub-reboot(8)).
#include "provisioner/boot/loader.hpp"

#include "provisioner/boot/boot_plan.hpp"
#include "provisioner/boot/grub.hpp"
#include "provisioner/boot/kernel_config.hpp"
#include "provisioner/boot/plan_steps.hpp"
#include "provisioner/core/error.hpp"

#include <algorithm>

namespace rtprov::boot {

using namespace rtprov::core;

namespace {

void probe(const TargetReader& reader, const Profile&, TargetFacts& facts, bool trial) {
    if (reader.exists("/usr/sbin/update-grub"))
        facts.executables.push_back("/usr/sbin/update-grub");
    facts.record(k_grub_defaults, reader.read(k_grub_defaults, ReadCap::grub_defaults));
    // Every drop-in: a value they give GRUB_CMDLINE_LINUX can beat rtprov's. A few small
    // files on any real system, so the count and size are bounded.
    std::vector<std::string> names;
    for (const std::string& name : reader.list(k_grub_dropin_dir))
        if (name.ends_with(".cfg"))
            names.push_back(name);
    if (names.size() > 64)
        throw Error(quoted(reader.shown(k_grub_dropin_dir)) + " holds " +
                    std::to_string(names.size()) +
                    " drop-ins, more than the 64 rtprov reads; is this the right root?");
    for (const std::string& name : names) {
        const std::string path = std::string(k_grub_dropin_dir) + "/" + name;
        facts.record(path, reader.read(path, ReadCap::grub_defaults));
    }
    facts.record(k_grub_dropin, reader.read(k_grub_dropin, ReadCap::config));
    facts.record(k_grub_trial_script, reader.read(k_grub_trial_script, ReadCap::config));
    // As an entry: a link is refused by the plan, not followed.
    facts.record(k_grub_env, reader.read_entry(k_grub_env, ReadCap::config));
    if (trial) {
        const std::string env = k_grub_env;
        facts.grub_env_mount = reader.mount_of(env.substr(0, env.rfind('/')));
    }
}

// GRUB's defaults files in the order grub-mkconfig sources them: /etc/default/grub,
// then /etc/default/grub.d/*.cfg sorted (rtprov's own is one of them).
std::vector<std::string> grub_defaults_files(const TargetFacts& facts) {
    std::vector<std::string> files = {k_grub_defaults};
    const std::string dir = std::string(k_grub_dropin_dir) + "/";
    for (const auto& [path, state] : facts.files)
        if (path.rfind(dir, 0) == 0 && path.ends_with(".cfg") && path != k_grub_dropin)
            files.push_back(path);
    std::sort(files.begin() + 1, files.end());
    return files;
}

// GRUB trial: the drop-in stays as it is (the default entries keep their parameters and
// kernel), a grub.d script adds the entry 'rtprov-trial' with the new ones, and the
// environment block's next_entry boots it once. Committing is a plain apply, which
// retires the script and puts the environment block back.
void plan_grub_trial(PlanContext& c, const std::optional<std::string>& rt_flavour) {
    if (c.options.regenerate != Regenerate::now) {
        error(c.plan, "trial-needs-regeneration",
              "a GRUB trial needs grub.cfg made now: the trial entry exists only after "
              "update-grub, and GRUB looks for it at the very next boot; pass "
              "--regenerate-boot=now (offline: with the image's /dev and /boot in place), or "
              "leave the trial to first boot (/etc/rtprov/firstboot.yaml, trial: true, the "
              "default) (nothing was written)");
        return;
    }
    if (const auto& mount = c.facts.grub_env_mount) {
        const bool layered = mount->source.rfind("/dev/mapper/", 0) == 0 ||
                             mount->source.rfind("/dev/md", 0) == 0 ||
                             mount->source.rfind("/dev/dm-", 0) == 0;
        if (mount->fstype == "btrfs" || mount->fstype == "zfs" || layered) {
            error(c.plan, "grub-env-unwritable",
                  std::string(k_grub_env) + " is on " + mount->fstype + " (" + mount->source +
                      "), where GRUB cannot write its environment block at boot (LVM, RAID, "
                      "ZFS, btrfs: grub-reboot(8) and the GRUB manual, \"Environment "
                      "block\"), so the trial entry would stay the default after its one try; "
                      "check with 'grub-probe --target=fs,abstraction /boot/grub', and apply "
                      "without --trial or keep /boot/grub on a plain partition (nothing was "
                      "written)");
            return;
        }
    } else {
        warning(c.plan, "grub-env-unknown",
                std::string("cannot tell which file system ") + k_grub_env +
                    " is on (the mount table does not say): GRUB writes it at boot only on a "
                    "plain disk (not LVM, RAID, ZFS or btrfs); check with 'grub-probe "
                    "--target=fs,abstraction /boot/grub'");
    }
    GrubEnv env;
    if (const FileState* file = c.facts.file(k_grub_env)) {
        if (file->symlink) {
            error(c.plan, "grub-env-link",
                  std::string(k_grub_env) + " is a symbolic link (to '" + file->content +
                      "'); GRUB writes the block it finds on disk at boot, and rtprov does not "
                      "arm a trial through a link: make it a plain file ('grub-editenv " +
                      k_grub_env + " create' after moving the link away) (nothing was written)");
            return;
        }
        env = parse_grub_env(file->content);
        if (!env.valid) {
            error(c.plan, "grub-env-damaged",
                  std::string(k_grub_env) +
                      " is not a GRUB environment block (1024 bytes starting '# GRUB "
                      "Environment Block'), so GRUB would not read the trial's next_entry; "
                      "make a new one with 'grub-editenv " +
                      k_grub_env + " create' (nothing was written)");
            return;
        }
    }
    // GRUB's load_env applies every line in turn, so the last next_entry wins; one another
    // tool set (a pending grub-reboot) is its boot, not rtprov's to replace.
    auto next_entries = std::count_if(env.entries.begin(), env.entries.end(),
                                      [](const auto& e) { return e.first == "next_entry"; });
    std::optional<std::string> pending = env.get("next_entry");
    if (next_entries > 1 ||
        (pending && !pending->empty() && *pending != std::string(k_grub_trial_entry))) {
        error(c.plan, "grub-env-next-entry",
              std::string(k_grub_env) +
                  (next_entries > 1
                       ? " sets next_entry " + std::to_string(next_entries) +
                             " times (GRUB takes the last)"
                       : " already has next_entry=" + *pending + " (a pending 'grub-reboot')") +
                  ": the trial's one boot would not be the trial's; boot that first, or take it "
                  "out with 'grub-editenv " +
                  k_grub_env + " unset next_entry' (nothing was written)");
        return;
    }
    env.valid = true;
    env.set("next_entry", k_grub_trial_entry);
    FileState block;
    block.content = render_grub_env(env);
    if (block.content.size() != k_grub_env_size) {
        error(c.plan, "grub-env-full",
              std::string(k_grub_env) +
                  " has no room for next_entry (its variables fill the 1024 bytes); remove "
                  "what is not needed with 'grub-editenv " +
                  k_grub_env + " unset NAME' (nothing was written)");
        return;
    }
    keep_as_is(c, k_grub_dropin, "the default entries' parameters, kept during the trial");
    FileState script;
    script.content =
        render_grub_trial_script(c.profile.name, c.params, rt_flavour, trial_params(c));
    script.mode = 0755;
    add_file_change(c.plan, c.facts, k_grub_trial_script, std::move(script),
                    "GRUB's 'rtprov-trial' entry: the trial's kernel and parameters");
    add_file_change(c.plan, c.facts, k_grub_env, std::move(block),
                    "next_entry=rtprov-trial: the next boot, and only that one, is the trial");
    c.plan.runtime.insert(k_grub_env);
    if (changes(c.plan, k_grub_trial_script) || regeneration_pending(c))
        regenerate(c, {{"update-grub"}}, "/usr/sbin/update-grub", "/boot/grub/grub.cfg",
                   k_grub_trial_script, produces_of({"update-grub"}));
}

// Without PREEMPT_RT in the profile rtprov sets no GRUB_TOP_LEVEL, so the default entry is
// grub-mkconfig's first: the newest /boot/vmlinuz-* by version (10_linux: version_sort -r,
// *.dpkg-* files left out), and an RT kernel of the same version sorts after the generic
// one ('6.12.117+deb13-rt-amd64' after '6.12.117+deb13-amd64'). Says so when that is an
// RT kernel: installed by hand, or left by an earlier profile.
void warn_rt_kernel_first(PlanContext& c) {
    const InstalledKernel* first = newest_kernel(c.facts.kernels, [](const InstalledKernel& k) {
        return k.version.find(".dpkg-") == std::string::npos;
    });
    if (first && is_preempt_rt(*first))
        warning(c.plan, "grub-rt-kernel-first",
                "tuning.kernel.realtime is false, but GRUB's default entry is the newest "
                "kernel by version (grub-mkconfig, 10_linux), and that is the PREEMPT_RT "
                "kernel " +
                    first->version +
                    ": to boot the generic kernel, remove the RT one (apt purge "
                    "linux-image-" +
                    first->version + "), or choose the entry with GRUB_DEFAULT");
}

void plan_grub(PlanContext& c) {
    // grub-mkconfig's 10_linux gives every entry "${GRUB_CMDLINE_LINUX}
    // ${GRUB_CMDLINE_LINUX_DEFAULT}" (recovery: GRUB_CMDLINE_LINUX only): a value there
    // comes before rtprov's, which its drop-in appends to GRUB_CMDLINE_LINUX_DEFAULT.
    for (const std::string& file : grub_defaults_files(c.facts)) {
        const std::string text = content_of(c.facts, file);
        const bool after_ours = file > std::string(k_grub_dropin);
        for (const char* variable : {"GRUB_CMDLINE_LINUX", "GRUB_CMDLINE_LINUX_DEFAULT"}) {
            const bool every_entry = std::string(variable) == "GRUB_CMDLINE_LINUX";
            for (const ShellAssignment& assignment : shell_assignments(text, variable)) {
                const std::string where = file + ":" + std::to_string(assignment.line);
                auto owned_in = [&](const std::string& value) {
                    for (const CmdlineToken& token : parse_cmdline(value))
                        if (std::any_of(c.params.begin(), c.params.end(),
                                        [&](const KernelParam& p) { return p.key == token.key(); }))
                            return true;
                    return false;
                };
                if (!every_entry && after_ours &&
                    (!assignment.appends || assignment.opaque || owned_in(assignment.value))) {
                    warning(c.plan, "grub-default-after-rtprov",
                            where + " sets GRUB_CMDLINE_LINUX_DEFAULT and is read after rtprov's " +
                                k_grub_dropin +
                                ": it may replace rtprov's parameters; append to it there "
                                "('GRUB_CMDLINE_LINUX_DEFAULT=\"$GRUB_CMDLINE_LINUX_DEFAULT "
                                "...\"') or move it before");
                    continue;
                }
                if (!every_entry && after_ours)
                    continue; // an append after rtprov's: rtprov's parameters stay
                if (every_entry && assignment.opaque) {
                    // rtprov does not run the target's shell: what it cannot read might
                    // hold an isolcpus= that beats rtprov's.
                    error(c.plan, "grub-cmdline-opaque",
                          where +
                              " gives GRUB_CMDLINE_LINUX a value only running the shell can "
                              "tell ('" +
                              assignment.value +
                              "'), which every entry gets before rtprov's parameters; write it "
                              "as plain text so rtprov can check it (nothing was written)");
                    continue;
                }
                for (const CmdlineToken& token : parse_cmdline(assignment.value)) {
                    if (token.ends_parameters()) {
                        // rtprov's parameters follow this variable on every normal entry.
                        error(c.plan, "grub-cmdline-end-of-parameters",
                              where + " has '" + token.text + "' in " +
                                  (every_entry ? "GRUB_CMDLINE_LINUX"
                                               : "GRUB_CMDLINE_LINUX_DEFAULT") +
                                  ": the kernel hands everything after it to init "
                                  "(kernel/params.c parse_args), and rtprov's parameters come "
                                  "after it; move '--' and init's arguments to the end of "
                                  "GRUB_CMDLINE_LINUX_DEFAULT in rtprov's place, or drop them "
                                  "(nothing was written)");
                        break; // what follows is init's, not the kernel's
                    }
                    auto ours =
                        std::find_if(c.params.begin(), c.params.end(),
                                     [&](const KernelParam& p) { return p.key == token.key(); });
                    if (ours == c.params.end() ||
                        (token.value() && same_value(ours->key, *token.value(), ours->value)))
                        continue;
                    if (!every_entry) {
                        info(c.plan, "foreign-value",
                             where + " has '" + token.text +
                                 "' in GRUB_CMDLINE_LINUX_DEFAULT; rtprov's drop-in takes it out "
                                 "and puts '" +
                                 ours->token() + "' in for the normal entries");
                    } else if (repeat_rule(ours->key) == RepeatRule::first_counts) {
                        error(c.plan, "foreign-value-first-counts",
                              where + " has '" + token.text +
                                  "' in GRUB_CMDLINE_LINUX, which every entry gets before "
                                  "rtprov's '" +
                                  ours->token() + "'; the kernel keeps the first " + ours->key +
                                  "= and rejects later ones (kernel/sched/isolation.c), so the "
                                  "box would not be isolated as planned: remove it from "
                                  "GRUB_CMDLINE_LINUX (nothing was written)");
                    } else {
                        info(c.plan, "foreign-value-last-counts",
                             where + " has '" + token.text +
                                 "' in GRUB_CMDLINE_LINUX, which every entry gets before "
                                 "rtprov's '" +
                                 ours->token() + "'; for " + ours->key +
                                 "= the kernel takes the last, so rtprov's counts");
                    }
                }
            }
        }
    }
    std::optional<std::string> rt_flavour = rt_flavour_of(c);
    if (!c.profile.tuning.kernel.realtime)
        warn_rt_kernel_first(c);
    if (c.options.trial) {
        plan_grub_trial(c, rt_flavour);
        return;
    }
    FileState dropin;
    dropin.content = render_grub_dropin(c.profile.name, c.params, rt_flavour);
    add_file_change(c.plan, c.facts, k_grub_dropin, std::move(dropin),
                    "kernel parameters for GRUB's normal entries" +
                        std::string(rt_flavour ? ", PREEMPT_RT kernel first" : ""));
    // A trial's script, which this apply retires, also when the drop-in stays as it is (a
    // trial of what is the default already, or first boot's that needed no reboot): grub.cfg
    // is made again without the trial's entry.
    if (changes(c.plan, k_grub_dropin) || regeneration_pending(c) ||
        c.facts.file(k_grub_trial_script))
        regenerate(c, {{"update-grub"}}, "/usr/sbin/update-grub", "/boot/grub/grub.cfg",
                   k_grub_dropin, produces_of({"update-grub"}));
}

// update-grub is 'grub-mkconfig -o /boot/grub/grub.cfg' (grub2-common).
bool regenerates(const std::vector<std::string>& argv) {
    return argv == std::vector<std::string>{"update-grub"};
}

// The environment block without the trial's next_entry; nullopt when it does not name the
// trial's entry (or is no block GRUB reads).
std::optional<std::string> disarmed(const std::string& block) {
    GrubEnv env = parse_grub_env(block);
    if (!env.valid || env.get("next_entry") != std::string(k_grub_trial_entry))
        return std::nullopt;
    env.unset("next_entry");
    return render_grub_env(env);
}

std::vector<std::string> grub_modules() {
    // grub-install puts its modules in /boot/grub/<platform>/; an environment block alone
    // says nothing, grub-editenv makes one anywhere.
    std::vector<std::string> readers;
    for (const char* platform : {"i386-pc", "x86_64-efi", "i386-efi", "arm64-efi"})
        readers.push_back(std::string("/boot/grub/") + platform + "/normal.mod");
    return readers;
}

} // namespace

const Loader& grub_loader() {
    static const Loader row{
        .id = BootLoader::grub,
        .probe = probe,
        .plan = plan_grub,
        .regenerates = regenerates,
        .regenerated = {"/boot/grub/grub.cfg"},
        .regenerated_readers = grub_modules(),
        // The trial is armed in the environment block, which GRUB clears as it boots the
        // trial (Debian's 00_header): the next boot is the trial, no reboot argument.
        .runtime_file =
            RuntimeFile{
                .path = k_grub_env,
                .rolled_back = grub_env_rolled_back,
                .kept_note = " (next_entry put back as it was)",
            },
        .disarm =
            TrialDisarm{
                .file = k_grub_env,
                .disarmed = disarmed,
                .done = "took next_entry out of ",
            },
        // boot/grub.cpp: the drop-in points GRUB_TOP_LEVEL at the newest -rt- image.
        .rt_default_fix = "make it GRUB's default ('rtprov apply' sets GRUB_TOP_LEVEL to the "
                          "newest -rt- kernel; run 'update-grub' so that /boot/grub/grub.cfg has "
                          "it), then reboot",
    };
    return row;
}

} // namespace rtprov::boot
