// SPDX-License-Identifier: Apache-2.0
#include "provisioner/boot/boot_plan.hpp"

#include "provisioner/boot/cmdline.hpp"
#include "provisioner/boot/grub.hpp"
#include "provisioner/boot/kernel_params.hpp"
#include "provisioner/boot/rpi_firmware.hpp"
#include "provisioner/core/grammar.hpp"
#include "provisioner/core/text.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <sstream>

namespace rtprov::boot {

using namespace rtprov::core;

namespace {

struct Context {
    Plan& plan;
    const Profile& profile;
    const TargetFacts& facts;
    const PlanOptions& options;
    std::vector<KernelParam> params;
    std::vector<std::string> keys;
};

void error(Plan& plan, const std::string& code, const std::string& message) {
    plan.findings.push_back({Severity::error, code, message});
}
void warning(Plan& plan, const std::string& code, const std::string& message) {
    plan.findings.push_back({Severity::warning, code, message});
}
void info(Plan& plan, const std::string& code, const std::string& message) {
    plan.findings.push_back({Severity::info, code, message});
}

std::string content_of(const TargetFacts& facts, const std::string& path) {
    const FileState* file = facts.file(path);
    return file ? file->content : std::string();
}

bool changes(const Plan& plan, const std::string& path) {
    return std::any_of(plan.changes.begin(), plan.changes.end(),
                       [&](const FileChange& c) { return c.path == path; });
}

// Merges the parameters into a command-line file's text, keeping every other byte,
// reports values that were there before rtprov for keys it sets, and records the edit
// for rollback and drift.
std::string merge_into(Context& c, const std::string& path, CmdlineScope scope) {
    CmdlineText current = parse_cmdline_text(content_of(c.facts, path), scope);
    auto original = parse_cmdline_text(c.facts.original_content(path).value_or(""), scope).tokens;
    MergedCmdline merged = merge_cmdline(current, original, c.params, c.keys);
    for (const ForeignValue& f : merged.foreign)
        warning(c.plan, "foreign-value",
                path + " had '" + f.foreign + "' before rtprov; rtprov's '" + f.ours +
                    "' replaces it (rollback brings it back)");
    c.plan.cmdline_edits[path] = CmdlineEdit{scope == CmdlineScope::first_line, c.keys,
                                             owned_part(merged.text.tokens, c.keys)};
    return render(merged.text);
}

// A command line rtprov cannot add to: a NUL byte ends the text for the firmware and for
// kernel-install alike (both read it as a C string), and after an unclosed quote every
// added token is part of the quoted value. Returns true, with a refusal, for either.
bool refuse_unreadable(Context& c, const std::string& path, CmdlineScope scope) {
    const std::string& text = content_of(c.facts, path);
    std::size_t nul = text.find('\0');
    if (nul != std::string::npos) {
        error(c.plan, "cmdline-nul",
              path + " has a NUL byte at byte " + std::to_string(nul + 1) +
                  ": the kernel command line ends there, so what follows it — rtprov's "
                  "parameters included — would never reach the kernel; remove it (nothing was "
                  "written)");
        return true;
    }
    if (parse_cmdline_text(text, scope).unclosed_quote) {
        error(c.plan, "cmdline-quote",
              path + " has a '\"' that is never closed: the kernel reads everything after it "
                     "as one quoted value (lib/cmdline.c), so rtprov's parameters would become "
                     "part of it; close the quote (nothing was written)");
        return true;
    }
    return false;
}

// The boot loader's regeneration commands an earlier apply planned and did not finish
// (it failed, or rtprov was killed while it ran): rtprov's state lists them as pending.
std::vector<std::vector<std::string>> unfinished_regeneration(const Context& c) {
    std::vector<std::vector<std::string>> out;
    for (const auto& argv : c.facts.pending_commands)
        if (loader_of(argv) == to_string(c.profile.board.boot.loader))
            out.push_back(argv);
    return out;
}

// An earlier apply left the regeneration for first boot and it has not happened yet, or
// did not finish it: the boot configuration may lack what the files rtprov wrote say.
bool regeneration_pending(const Context& c) {
    return c.facts.file(k_pending_regeneration_path) != nullptr ||
           !unfinished_regeneration(c).empty();
}

// What only the trial boot's command line carries: the marker rtprov-trial.service
// looks for, a panic that reboots instead of hanging (unless the profile sets panic=),
// and the deadline target, whose job timeout reboots a boot that never reaches the check.
std::vector<KernelParam> trial_params(const Context& c) {
    std::vector<KernelParam> out = {{k_trial_param, c.options.trial_id}};
    if (std::none_of(c.params.begin(), c.params.end(),
                     [](const KernelParam& p) { return p.key == "panic"; }))
        out.push_back({"panic", std::to_string(k_trial_panic_s)});
    out.push_back({"systemd.wants", k_trial_deadline_target});
    return out;
}

// Keeps a file as it is when it is there: a trial leaves the default boot alone, and
// the default may be an earlier apply's.
void keep_as_is(Context& c, const std::string& path, const std::string& reason) {
    if (const FileState* file = c.facts.file(path))
        add_file_change(c.plan, c.facts, path, *file, reason);
}

// Regeneration of the boot loader's configuration after its input changed.
void regenerate(Context& c, std::vector<std::vector<std::string>> argvs,
                const std::string& needs_executable, const std::string& what,
                const std::string& input, const std::vector<std::string>& produces) {
    const std::vector<std::vector<std::string>> unfinished = unfinished_regeneration(c);
    std::string unfinished_text;
    for (const auto& argv : unfinished)
        unfinished_text += (unfinished_text.empty() ? "'" : ", '") + shell_command(argv) + "'";
    switch (c.options.regenerate) {
    case Regenerate::now:
        if (!c.facts.has_executable(needs_executable)) {
            warning(c.plan, "regenerate-missing",
                    what + " not regenerated: " + needs_executable +
                        " is not installed in the target; it picks the change up when it is");
            return;
        }
        for (auto& argv : argvs)
            c.plan.commands.push_back(
                {std::move(argv),
                 "regenerate " + what +
                     (unfinished.empty() ? "" : "; the last apply's did not finish"),
                 true, produces});
        return;
    case Regenerate::first_boot: {
        FileState marker;
        marker.content = owned_file_header(c.profile.name);
        for (const auto& argv : argvs) {
            std::string line;
            for (const std::string& word : argv)
                line += (line.empty() ? "" : " ") + word;
            marker.content += line + "\n";
        }
        add_file_change(c.plan, c.facts, k_pending_regeneration_path, std::move(marker),
                        "commands the first-boot flow runs to regenerate " + what);
        // The marker goes before the file that needs it: an apply killed in between
        // leaves the marker, never a changed file without it.
        auto marker_change =
            std::find_if(c.plan.changes.begin(), c.plan.changes.end(),
                         [](const FileChange& f) { return f.path == k_pending_regeneration_path; });
        auto input_change = std::find_if(c.plan.changes.begin(), c.plan.changes.end(),
                                         [&](const FileChange& f) { return f.path == input; });
        if (marker_change != c.plan.changes.end() && input_change < marker_change)
            std::rotate(input_change, marker_change, marker_change + 1);
        info(c.plan, "regenerate-first-boot",
             what + " is regenerated at first boot (recorded in " + k_pending_regeneration_path +
                 "; --regenerate-boot=now does it now)");
        // What the last apply did not finish is first boot's now, recorded with the rest;
        // it leaves the state's pending list when the marker is written.
        if (!unfinished.empty()) {
            c.plan.recorded_for_first_boot = unfinished;
            warning(c.plan, "command-pending",
                    unfinished_text + " did not finish in the last apply, so " + what +
                        " may lack what rtprov wrote; it is recorded for first boot (" +
                        k_pending_regeneration_path +
                        "), or 'rtprov apply --regenerate-boot=now' runs it now");
        }
        return;
    }
    case Regenerate::never:
        warning(c.plan, "regenerate-never",
                what + " not regenerated (--regenerate-boot=never): regenerate it before the "
                       "next boot");
        return;
    }
}

// What no trial may have, whatever the boot loader: the trial's own parameters in the
// profile, a panic that hangs instead of rebooting, a self-test longer than its deadline.
// Returns true, with the refusal, for any of them.
bool refuse_trial(Context& c) {
    for (const KernelParam& p : c.params) {
        const bool ours = p.key == k_trial_param ||
                          (p.key == "systemd.wants" && p.value.rfind("rtprov-", 0) == 0);
        // The kernel reads panic= with kstrtoint(base 0): '0x0', '00' and '-0' are 0 too,
        // and a value it cannot read leaves the built-in timeout (0 on Debian).
        // sysctl.kernel.panic= (kernels from 5.8 apply sysctl.* boot parameters) sets the
        // same timeout, after panic= is read.
        bool hangs = false;
        if (p.key == "panic" || p.key == "sysctl.kernel.panic" || p.key == "sysctl.kernel/panic") {
            char* end = nullptr;
            errno = 0;
            long long seconds = std::strtoll(p.value.c_str(), &end, 0);
            hangs = p.value.empty() || *end != '\0' || errno != 0 || seconds == 0 ||
                    seconds < INT_MIN || seconds > INT_MAX ||
                    std::isspace(static_cast<unsigned char>(p.value.front()));
        }
        if (ours || hangs) {
            error(c.plan, "trial-param-reserved",
                  "tuning.kernel.extra has '" + p.token() + "', which " +
                      (ours ? std::string("is the trial's own")
                            : std::string("makes a panicking trial kernel hang instead of "
                                          "rebooting (panic= must be a number of seconds "
                                          "other than 0)")) +
                      "; take it out of the profile for a trial (nothing was written)");
            return true;
        }
    }
    if (c.profile.tuning.selftest.duration_s > k_trial_selftest_max_s) {
        error(c.plan, "trial-selftest-too-long",
              "tuning.selftest.duration_s is " +
                  std::to_string(c.profile.tuning.selftest.duration_s) +
                  " s; a trial's check must finish within its deadline (" +
                  std::to_string(k_trial_deadline_s) +
                  " s, rtprov-trial-deadline.target), so its self-test may take at most " +
                  std::to_string(k_trial_selftest_max_s) +
                  " s: lower it for the trial and run the long self-test after the commit "
                  "(nothing was written)");
        return true;
    }
    return false;
}

// The page size of the PREEMPT_RT kernel beside the board's own, read from their configs
// in /boot: a Pi 5's kernel (kernel_2712.img, bcm2712_defconfig) has 16 KB pages, and
// Raspberry Pi OS's RT kernel kernel8_rt.img is built from bcm2711_rt_defconfig with the
// default 4 KB (raspberrypi/linux, arch/arm64/configs/): software tuned to one page size
// then runs with the other. Kernels are told apart by the flavour their packages name
// (linux-image-rpi-2712 -> '-rpi-2712'). Says nothing when the sizes agree or cannot be
// read.
void rt_page_size_note(Context& c, const std::string& rt_image) {
    auto flavour_of = [](const std::vector<std::string>& packages) -> std::string {
        const std::string prefix = "linux-image-";
        return packages.empty() || packages.front().rfind(prefix, 0) != 0
                   ? std::string()
                   : "-" + packages.front().substr(prefix.size());
    };
    auto pages_of = [](const InstalledKernel& k) -> std::string {
        if (k.config)
            for (const char* size : {"4K", "16K", "64K"})
                if (auto it = k.config->find(std::string("CONFIG_ARM64_") + size + "_PAGES");
                    it != k.config->end() && it->second == "y")
                    return size;
        return "";
    };
    const std::string standard = flavour_of(c.profile.board.kernel.packages);
    const std::string rt = flavour_of(c.profile.board.kernel.rt_packages);
    const InstalledKernel* board = nullptr;
    const InstalledKernel* rt_kernel = nullptr;
    for (const InstalledKernel& k : c.facts.kernels) {
        if (!standard.empty() && k.version.ends_with(standard) && !pages_of(k).empty())
            board = &k;
        if (!rt.empty() && k.version.ends_with(rt) && !pages_of(k).empty())
            rt_kernel = &k;
    }
    if (!board)
        return;
    if (rt_kernel && pages_of(*rt_kernel) != pages_of(*board))
        info(c.plan, "rt-page-size",
             rt_image + " (" + rt_kernel->version + ") has " + pages_of(*rt_kernel) +
                 "B pages, the board's own kernel (" + board->version + ") " + pages_of(*board) +
                 "B: software built for one page size runs with the other while the RT kernel "
                 "boots (read from their /boot/config-*)");
    else if (!rt_kernel && pages_of(*board) != "4K")
        info(c.plan, "rt-page-size",
             "the board's own kernel (" + board->version + ") has " + pages_of(*board) +
                 "B pages; the RT kernel " + rt_image +
                 " is not installed yet, so its page size cannot be read: Raspberry Pi OS builds "
                 "kernel8_rt.img from bcm2711_rt_defconfig with 4 KB pages "
                 "(raspberrypi/linux, arch/arm64/configs/)");
}

// Raspberry Pi trial: config.txt and cmdline.txt stay; tryboot.txt is config.txt as the
// plain apply would make it, plus cmdline= naming the trial's command line (the merged
// one with the trial's own parameters). Committing is a plain apply.
void plan_rpi_trial(Context& c, const std::string& dir, const std::string& config_path,
                    FirmwareSettings settings, const std::string& merged_first_line,
                    const std::optional<std::string>& rt_image) {
    if (c.facts.mode != TargetMode::live) {
        error(c.plan, "rpi-trial-offline",
              "a Raspberry Pi trial is the boot after 'reboot \"0 tryboot\"', and an image's "
              "first boot is a plain one: apply the trial with --live on the running Pi, or "
              "leave it to first boot (/etc/rtprov/firstboot.yaml, trial: true, the default) "
              "(nothing was written)");
        return;
    }
    if (c.facts.tryboot_supported && !*c.facts.tryboot_supported) {
        error(c.plan, "rpi-no-tryboot",
              "this Pi's bootloader reports no tryboot flag (/proc/device-tree/chosen/"
              "bootloader has properties, but no 'tryboot'): it is older than tryboot, so "
              "'reboot \"0 tryboot\"' would boot config.txt as always; update it "
              "('rpi-eeprom-update -a', then reboot) or apply without --trial (nothing was "
              "written)");
        return;
    }
    keep_as_is(c, config_path, "the default config.txt, kept during the trial");
    std::string tokens;
    for (const KernelParam& p : trial_params(c))
        tokens += " " + p.token();
    settings.cmdline_file = k_rpi_trial_cmdline;
    FileState line;
    // The firmware reads the first line only; rtprov's mark is the second.
    line.content = merged_first_line + tokens + "\n" + owned_file_header(c.profile.name);
    add_file_change(c.plan, c.facts, cmdline_txt_path(dir, settings), std::move(line),
                    "the trial's kernel command line (tryboot.txt's cmdline=)");
    std::string config = edit_config_txt(content_of(c.facts, config_path), rt_image, c.profile.name,
                                         c.profile.board.boot.config_filter);
    if (!config.empty() && config.back() != '\n')
        config += "\n";
    FileState tryboot;
    tryboot.content =
        owned_file_header(c.profile.name) +
        "# The trial's config.txt: the firmware reads it instead of config.txt for "
        "one boot,\n# after 'reboot \"0 tryboot\"' (Raspberry Pi documentation, "
        "\"TRYBOOT\").\n" +
        config + "# rtprov trial: the trial's command line\n[all]\ncmdline=" + k_rpi_trial_cmdline +
        "\n";
    add_file_change(c.plan, c.facts, dir + "/" + k_rpi_tryboot, std::move(tryboot),
                    "the trial's config.txt (tryboot)");
    if (c.facts.tryboot_supported)
        info(c.plan, "rpi-tryboot",
             "reboot into the trial with 'systemctl reboot \"0 tryboot\"' (first boot does); "
             "the bootloader reports tryboot, so that boot reads tryboot.txt");
    else
        warning(c.plan, "rpi-tryboot-unknown",
                "reboot into the trial with 'systemctl reboot \"0 tryboot\"' (first boot "
                "does); this boot's bootloader reports nothing in /proc/device-tree/chosen/"
                "bootloader, so rtprov cannot see whether it supports tryboot (the Raspberry Pi "
                "4 bootloader from 2021 on, every Pi 5): without it that reboot boots "
                "config.txt as always, the trial never comes up, and rtprov-trial.service "
                "records that");
}

void plan_rpi(Context& c) {
    const std::optional<FirmwarePartition>& fw = c.facts.firmware;
    if (!fw) {
        error(c.plan, "rpi-no-facts", "no facts about the Raspberry Pi boot partition");
        return;
    }
    if (!fw->has_boot_files) {
        if (fw->fstab_source && !fw->mounted)
            error(c.plan, "boot-partition-not-mounted",
                  "the boot partition is not mounted: '" + fw->dir +
                      "' holds no cmdline.txt or config.txt, and the target's /etc/fstab mounts '" +
                      *fw->fstab_source + "' there; mount that partition on <root>" + fw->dir +
                      " and run rtprov again (nothing was written)");
        else
            error(c.plan, "no-boot-files",
                  "no Raspberry Pi boot files: '" + fw->dir +
                      "' (and '/boot') hold no cmdline.txt or config.txt; is this a Raspberry "
                      "Pi OS root, with its boot partition mounted?");
        return;
    }
    const std::string config_path = fw->dir + "/config.txt";
    const bool has_config = c.facts.file(config_path) != nullptr;
    const std::string& filter = c.profile.board.boot.config_filter;
    FirmwareSettings settings = parse_config_txt(content_of(c.facts, config_path), filter);
    // The firmware reads cmdline= and os_prefix= on the boot partition; the image's
    // config.txt must not make rtprov edit a file elsewhere (or config.txt itself).
    const std::string relative = settings.os_prefix + settings.cmdline_file;
    bool inside = !relative.empty() && relative.front() != '/' && relative != "config.txt";
    for (std::size_t start = 0; inside && start < relative.size();) {
        std::size_t slash = relative.find('/', start);
        inside = !grammar::file_name(relative.substr(start, slash - start));
        start = slash == std::string::npos ? relative.size() : slash + 1;
    }
    if (!inside) {
        error(c.plan, "cmdline-path-odd",
              config_path + " names the command-line file '" + relative +
                  "' (cmdline= and os_prefix=), which is not a file of the boot partition "
                  "rtprov edits: " +
                  *grammar::file_name("..") +
                  " in each part, not config.txt; fix config.txt "
                  "(nothing was written)");
        return;
    }
    const std::string cmdline_path = cmdline_txt_path(fw->dir, settings);
    if (!c.facts.file(cmdline_path)) {
        error(c.plan, "no-cmdline-txt",
              "'" + cmdline_path + "' does not exist" +
                  (settings.cmdline_file != "cmdline.txt" || !settings.os_prefix.empty()
                       ? " (config.txt names it with cmdline= or os_prefix=)"
                       : "") +
                  "; the firmware reads the kernel command line from it");
        return;
    }
    if (refuse_unreadable(c, cmdline_path, CmdlineScope::first_line))
        return;
    const std::string& current = content_of(c.facts, cmdline_path);
    std::string next = merge_into(c, cmdline_path, CmdlineScope::first_line);
    const std::string first_line = next.substr(0, next.find('\n'));
    if (CmdlineText lines = parse_cmdline_text(current, CmdlineScope::first_line);
        !parse_cmdline(lines.rest).empty())
        warning(c.plan, "cmdline-lines",
                cmdline_path +
                    " has text after its first line: the firmware reads the command line from "
                    "the first line only (Raspberry Pi documentation: \"do not use newlines\"), "
                    "so '" +
                    render_cmdline(parse_cmdline(lines.rest)) +
                    "' never reaches the kernel; rtprov edits the first line and leaves the rest "
                    "as it is: move what belongs there onto the first line");
    if (first_line.find('\r') != std::string::npos)
        info(c.plan, "cmdline-cr",
             cmdline_path + " has a CR (a Windows line end); the kernel reads it as a space "
                            "between parameters, and rtprov keeps it");
    if (first_line.size() > k_cmdline_warn_length)
        warning(c.plan, "cmdline-long",
                cmdline_path + " is " + std::to_string(first_line.size()) +
                    " characters; the firmware takes at most 1024 and prepends its own, so "
                    "parameters at the end may be lost");
    if (c.options.trial) {
        // cmdline.txt stays as it is, and so does what rtprov's part of it is.
        keep_as_is(c, cmdline_path, "the default command line, kept during the trial");
        c.plan.cmdline_edits[cmdline_path] = CmdlineEdit{
            true, c.keys,
            owned_part(parse_cmdline_text(current, CmdlineScope::first_line).tokens, c.keys)};
    } else {
        FileState cmdline;
        cmdline.content = next;
        add_file_change(c.plan, c.facts, cmdline_path, std::move(cmdline),
                        "kernel command line read by the Raspberry Pi firmware");
    }

    std::optional<std::string> rt_image;
    if (c.profile.tuning.kernel.realtime) {
        rt_image = c.profile.board.kernel.rt_image;
        if (rt_image->empty()) {
            error(c.plan, "rt-image-unknown",
                  "tuning.kernel.realtime is true but board.kernel.rt_image is empty; set it "
                  "to the RT kernel's file on the boot partition (kernel8_rt.img on a Pi 4)");
            return;
        }
        bool present = std::find(fw->files.begin(), fw->files.end(), *rt_image) != fw->files.end();
        if (!present && !c.options.install_packages)
            error(
                c.plan, "rt-image-missing",
                *rt_image +
                    " is not on the boot partition yet, and config.txt's kernel= "
                    "would point at nothing: install the RT kernel package first (" +
                    [&] {
                        std::string p;
                        for (const std::string& name : c.profile.board.kernel.rt_packages)
                            p += (p.empty() ? "" : " ") + name;
                        return p;
                    }() +
                    "; 'rtprov plan --packages' lists it) or pass --install-packages");
        for (const std::string& line :
             foreign_kernel_lines(content_of(c.facts, config_path), filter))
            warning(c.plan, "foreign-kernel-line",
                    config_path + " already has '" + line + "'; rtprov's [" + filter +
                        "] block comes after it, so the RT kernel wins");
        rt_page_size_note(c, *rt_image);
    }
    if (c.options.trial) {
        plan_rpi_trial(c, fw->dir, config_path, settings, first_line, rt_image);
        return;
    }
    if (has_config || rt_image) {
        FileState config;
        config.content =
            edit_config_txt(content_of(c.facts, config_path), rt_image, c.profile.name, filter);
        // Without the block, a file that had no final newline before rtprov gets none.
        if (auto original = c.facts.original_content(config_path);
            !rt_image && original && config.content == *original + "\n")
            config.content = *original;
        add_file_change(c.plan, c.facts, config_path, std::move(config),
                        rt_image ? "boots the PREEMPT_RT kernel under [" + filter + "]"
                                 : "no rtprov kernel choice (PREEMPT_RT off)");
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
void plan_grub_trial(Context& c, const std::optional<std::string>& rt_flavour) {
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

// The PREEMPT_RT kernel flavour the profile installs ('rt-amd64' of linux-image-rt-amd64),
// nullopt without PREEMPT_RT; a package not named linux-image-* is refused.
std::optional<std::string> rt_flavour_of(Context& c) {
    if (!c.profile.tuning.kernel.realtime)
        return std::nullopt;
    const auto& rt = c.profile.board.kernel.rt_packages;
    if (rt.empty() || rt.front().rfind("linux-image-", 0) != 0) {
        error(c.plan, "rt-package-unknown",
              "tuning.kernel.realtime is true but board.kernel.rt_packages names no "
              "linux-image-* package (Debian: linux-image-rt-amd64)");
        return std::nullopt;
    }
    return rt.front().substr(std::string("linux-image-").size());
}

void plan_grub(Context& c) {
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

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
        lines.push_back(line);
    return lines;
}

// One line of a Boot Loader Specification type #1 entry: 'key value', '#' comments.
std::pair<std::string, std::string> bls_line(const std::string& line) {
    std::size_t start = line.find_first_not_of(" \t");
    if (start == std::string::npos || line[start] == '#')
        return {};
    std::size_t end = line.find_first_of(" \t", start);
    std::string key = line.substr(start, end - start);
    std::size_t value = end == std::string::npos ? end : line.find_first_not_of(" \t", end);
    return {key, value == std::string::npos ? "" : line.substr(value)};
}

// The entry kernel-install made for kernel 'version' in 'dir' (its 'version' line, or a
// 'linux' path of layout=bls or of a plain /boot), or nullptr.
const std::pair<const std::string, FileState>*
bls_entry_of(const TargetFacts& facts, const std::string& dir, const std::string& version) {
    for (const auto& entry : facts.files) {
        const std::string& path = entry.first;
        if (path.rfind(dir + "/", 0) != 0 || !path.ends_with(".conf") ||
            path == dir + "/" + k_sdboot_trial_entry || entry.second.symlink)
            continue;
        for (const std::string& line : lines_of(entry.second.content)) {
            auto [key, value] = bls_line(line);
            if ((key == "version" && value == version) ||
                (key == "linux" && (value.ends_with("/" + version + "/linux") ||
                                    value.ends_with("/vmlinuz-" + version))))
                return &entry;
        }
    }
    return nullptr;
}

// systemd-boot trial: /etc/kernel/cmdline and the entries stay; rtprov-trial+0.conf is
// the entry of the profile's kernel with the new command line, and LoaderEntryOneShot
// boots it once. Its '+0' counter makes systemd-boot take it for a spent try: sorted
// after every other entry, never picked by itself (Automatic Boot Assessment), while a
// one-shot names it by pattern. Committing is a plain apply, which retires the entry.
void plan_systemd_boot_trial(Context& c, const std::string& cmdline) {
    if (!c.facts.boot_entries_dir) {
        error(c.plan, "sdboot-no-entries",
              "no systemd-boot entries: none of /efi, /boot, /boot/efi has loader/entries; "
              "install systemd-boot ('bootctl install') and its entries ('kernel-install "
              "add'), then try again (nothing was written)");
        return;
    }
    if (!c.facts.has_executable("/usr/bin/bootctl")) {
        error(c.plan, "sdboot-no-bootctl",
              "/usr/bin/bootctl is missing: rtprov arms the trial with 'bootctl set-oneshot'; "
              "install the package that has it (systemd-boot) (nothing was written)");
        return;
    }
    const std::string& dir = *c.facts.boot_entries_dir;
    std::optional<std::string> rt_flavour = rt_flavour_of(c);
    if (c.profile.tuning.kernel.realtime && !rt_flavour)
        return;
    const std::string rt_suffix = rt_flavour ? "-" + *rt_flavour : "";
    const InstalledKernel* kernel = nullptr;
    for (const InstalledKernel& k : c.facts.kernels) {
        const bool rt = k.version.find("-rt-") != std::string::npos;
        if (!k.has_image || (rt_suffix.empty() ? rt : !k.version.ends_with(rt_suffix)))
            continue;
        if (!kernel || ::strverscmp(k.version.c_str(), kernel->version.c_str()) > 0)
            kernel = &k;
    }
    if (!kernel) {
        error(c.plan, "sdboot-trial-no-kernel",
              "no " + std::string(rt_suffix.empty() ? "" : "PREEMPT_RT ") +
                  "kernel in /boot to try" +
                  (rt_suffix.empty() ? std::string()
                                     : ": install " + c.profile.board.kernel.rt_packages.front() +
                                           " first (--install-packages does not run before a "
                                           "trial's entry is made)") +
                  " (nothing was written)");
        return;
    }
    const auto* source = bls_entry_of(c.facts, dir, kernel->version);
    if (!source) {
        error(c.plan, "sdboot-trial-no-entry",
              dir + " has no entry for kernel " + kernel->version +
                  ", whose files the trial's entry would boot: run 'kernel-install add " +
                  kernel->version + " /boot/vmlinuz-" + kernel->version +
                  "' first (nothing was written)");
        return;
    }
    std::string options = cmdline;
    while (!options.empty() && (options.back() == '\n' || options.back() == ' '))
        options.pop_back();
    for (const KernelParam& p : trial_params(c))
        options += " " + p.token();
    std::string title = "Linux " + kernel->version, body;
    for (const std::string& line : lines_of(source->second.content)) {
        auto [key, value] = bls_line(line);
        if (key == "title")
            title = value;
        else if (!key.empty() && key != "options" && key != "sort-key")
            body += line + "\n";
    }
    FileState entry;
    entry.content = owned_file_header(c.profile.name) + "# The trial's entry, from " +
                    source->first +
                    ": booted once through LoaderEntryOneShot. '+0' in its name marks it a\n"
                    "# spent try, so systemd-boot never picks it by itself (Automatic Boot "
                    "Assessment).\ntitle rtprov trial: " +
                    title + "\n" + body + "options " + options + "\n";
    // /etc/kernel/cmdline stays as it is, and so does what rtprov's part of it is.
    const std::string path = "/etc/kernel/cmdline";
    keep_as_is(c, path, "the default entries' command line, kept during the trial");
    c.plan.cmdline_edits[path] = CmdlineEdit{
        false, c.keys,
        owned_part(parse_cmdline_text(content_of(c.facts, path), CmdlineScope::whole_text).tokens,
                   c.keys)};
    add_file_change(c.plan, c.facts, dir + "/" + k_sdboot_trial_entry, std::move(entry),
                    "systemd-boot's trial entry: the trial's kernel and parameters");
    c.plan.commands.push_back({sdboot_oneshot_argv(k_sdboot_trial_entry),
                               "the next boot, and only that one, is the trial "
                               "(LoaderEntryOneShot)",
                               false,
                               {}});
}

void plan_systemd_boot(Context& c) {
    const std::string path = "/etc/kernel/cmdline";
    if (c.options.trial && c.facts.mode != TargetMode::live) {
        error(c.plan, "sdboot-trial-offline",
              "a systemd-boot trial is armed in an EFI variable (LoaderEntryOneShot), which "
              "only the running machine has: apply the trial with --live on the box, or leave "
              "it to first boot (/etc/rtprov/firstboot.yaml, trial: true, the default) "
              "(nothing was written)");
        return;
    }
    if (!c.facts.file(path)) {
        error(c.plan, "no-kernel-cmdline",
              path + " does not exist: it holds the whole command line of systemd-boot's "
                     "entries, root= included, and without it kernel-install takes the build "
                     "host's /proc/cmdline; create it with this system's root= first");
        return;
    }
    if (refuse_unreadable(c, path, CmdlineScope::whole_text))
        return;
    FileState cmdline;
    cmdline.content = merge_into(c, path, CmdlineScope::whole_text);
    if (c.options.trial) {
        plan_systemd_boot_trial(c, cmdline.content);
        return;
    }
    add_file_change(c.plan, c.facts, path, std::move(cmdline),
                    "kernel command line for systemd-boot entries (kernel-install)");
    if (c.profile.tuning.kernel.realtime)
        warning(c.plan, "rt-default-systemd-boot",
                "systemd-boot: rtprov does not choose the default entry; set 'default "
                "*-rt-*.conf' in loader.conf to boot the PREEMPT_RT kernel");
    if (!changes(c.plan, path) && !regeneration_pending(c))
        return;
    std::vector<std::vector<std::string>> argvs;
    for (const InstalledKernel& k : c.facts.kernels) {
        if (!k.has_image)
            continue;
        // The release becomes an argument of kernel-install, and a line of rtprov's state.
        if (auto broken = grammar::kernel_release(k.version)) {
            error(c.plan, "kernel-release-odd",
                  "'/boot/vmlinuz-" + k.version + "' is not named like a kernel: " + *broken +
                      "; remove or rename it (nothing was written)");
            return;
        }
        // Debian keeps kernels in /boot, which 'kernel-install add-all' does not look at
        // (kernel-install(8)): one 'add' per kernel.
        std::vector<std::string> argv = {"kernel-install", "add", k.version,
                                         "/boot/vmlinuz-" + k.version};
        if (k.has_initrd)
            argv.push_back("/boot/initrd.img-" + k.version);
        argvs.push_back(std::move(argv));
    }
    if (argvs.empty())
        warning(c.plan, "no-kernels", "no kernel in /boot to make systemd-boot entries for");
    else
        regenerate(c, argvs, "/usr/bin/kernel-install", "the systemd-boot entries", path, {});
}

void plan_packages(Context& c) {
    if (!c.profile.tuning.kernel.realtime)
        return;
    std::vector<std::string> missing;
    for (const std::string& package : c.profile.board.kernel.rt_packages) {
        c.plan.packages.push_back(package);
        if (!c.facts.installed_packages.count(package))
            missing.push_back(package);
    }
    if (missing.empty())
        return;
    const std::string list = core::join(missing, " ");
    if (c.options.install_packages) {
        // Images are often built with the package lists removed: update them first.
        std::vector<std::string> argv = {"apt-get", "install", "-y", "--no-install-recommends"};
        argv.insert(argv.end(), missing.begin(), missing.end());
        c.plan.commands.insert(c.plan.commands.begin(),
                               {{{"apt-get", "update"}, "package lists for the install", false, {}},
                                {argv, "install the PREEMPT_RT kernel", false, {}}});
    } else {
        warning(c.plan, "packages-missing",
                "the PREEMPT_RT kernel is not installed (" + list +
                    "): install it in the image (rtprov plan --packages lists it) or pass "
                    "--install-packages");
    }
}

} // namespace

std::vector<std::string> produces_of(const std::vector<std::string>& argv) {
    // update-grub is 'grub-mkconfig -o /boot/grub/grub.cfg' (grub2-common).
    if (argv == std::vector<std::string>{"update-grub"})
        return {"/boot/grub/grub.cfg"};
    return {};
}

std::vector<std::string> readers_of(const std::string& path) {
    if (path != "/boot/grub/grub.cfg")
        return {};
    std::vector<std::string> readers;
    for (const char* platform : {"i386-pc", "x86_64-efi", "i386-efi", "arm64-efi"})
        readers.push_back(std::string("/boot/grub/") + platform + "/normal.mod");
    return readers;
}

std::vector<std::string> sdboot_oneshot_argv(const std::string& entry) {
    // A pattern (systemd-boot matches the one-shot with fnmatch against the entry ids):
    // whether an id keeps the '+0' counter is the loader's business.
    return {"bootctl", "set-oneshot", entry.substr(0, entry.find('+')) + "*"};
}

bool is_runtime_path(const std::string& path) {
    return path == k_grub_env;
}

std::string loader_of(const std::vector<std::string>& argv) {
    if (argv == std::vector<std::string>{"update-grub"})
        return to_string(BootLoader::grub);
    if (argv.size() >= 4 && argv.size() <= 5 && argv[0] == "kernel-install" && argv[1] == "add") {
        const std::string& release = argv[2];
        if (!grammar::kernel_release(release) && argv[3] == "/boot/vmlinuz-" + release &&
            (argv.size() == 4 || argv[4] == "/boot/initrd.img-" + release))
            return to_string(BootLoader::systemd_boot);
    }
    return "";
}

bool is_planned_command(const std::vector<std::string>& argv, const std::string& loader,
                        CommandUse use) {
    const std::string regenerates = loader_of(argv);
    if (!regenerates.empty())
        return regenerates == loader;
    if (use != CommandUse::pending)
        return false;
    if (argv == std::vector<std::string>{"apt-get", "update"})
        return true;
    if (loader == to_string(BootLoader::systemd_boot) &&
        argv == sdboot_oneshot_argv(k_sdboot_trial_entry))
        return true;
    if (argv.size() >= 5 && argv[0] == "apt-get" && argv[1] == "install" && argv[2] == "-y" &&
        argv[3] == "--no-install-recommends")
        return std::all_of(argv.begin() + 4, argv.end(), [](const std::string& package) {
            return !grammar::debian_package(package);
        });
    return false;
}

void plan_boot(Plan& plan, const Profile& profile, const std::optional<ResolvedCores>& cores,
               const TargetFacts& facts, const PlanOptions& options) {
    ParamDecision decision = kernel_params(profile, cores, facts.kernels);
    plan.findings.insert(plan.findings.end(), decision.findings.begin(), decision.findings.end());
    // Keys an earlier apply owned stay rtprov's, so one the profile dropped is taken back.
    std::vector<std::string> keys = owned_keys(profile);
    for (const std::string& key : facts.previous_owned_keys)
        if (std::find(keys.begin(), keys.end(), key) == keys.end())
            keys.push_back(key);
    Context c{plan, profile, facts, options, std::move(decision.params), std::move(keys)};
    if (options.trial && refuse_trial(c))
        return;
    switch (profile.board.boot.loader) {
    case BootLoader::rpi_firmware:
        plan_rpi(c);
        break;
    case BootLoader::grub:
        plan_grub(c);
        break;
    case BootLoader::systemd_boot:
        plan_systemd_boot(c);
        break;
    }
    plan_packages(c);
}

} // namespace rtprov::boot
