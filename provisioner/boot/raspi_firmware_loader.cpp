// SPDX-License-Identifier: Apache-2.0
// Debian's raspi-firmware package (the Raspberry Pi images of raspi.debian.net, and any
// Debian-based Pi image that installs it): its kernel hook,
// /etc/kernel/postinst.d/z50-raspi-firmware, rewrites /boot/firmware/cmdline.txt and
// config.txt whole on every kernel or initramfs update, the command line as
//   <consoles> root=<ROOTPART> rw fsck.repair=yes net.ifnames=0 <cma> rootwait $(cat
//   /etc/default/raspi-extra-cmdline)
// and config.txt's kernel= as the newest /boot/vmlinuz-* by 'sort -V -r'. An edit of
// cmdline.txt lasts until the next kernel update, so rtprov writes the hook's source,
// /etc/default/raspi-extra-cmdline, and runs the hook (through its initramfs post-update
// wrapper, which calls it as a kernel package's postinst does). The Pi firmware row's
// probe and trial serve here too: the firmware reads the hook's files as any others.
#include "provisioner/boot/loader.hpp"

#include "provisioner/boot/grub.hpp"
#include "provisioner/boot/kernel_config.hpp"
#include "provisioner/boot/plan_steps.hpp"
#include "provisioner/boot/rpi_firmware.hpp"

#include <algorithm>
#include <optional>
#include <string_view>

namespace rtprov::boot {

using namespace rtprov::core;

const Loader& rpi_firmware_loader(); // boot/rpi_firmware_loader.cpp

namespace {

constexpr const char* k_hook = "/etc/kernel/postinst.d/z50-raspi-firmware";
// Runs the hook with DEB_MAINT_PARAMS=configure, as update-initramfs does after it made an
// initramfs: the command rtprov runs, needing no environment of its own.
constexpr const char* k_rerun = "/etc/initramfs/post-update.d/z50-raspi-firmware";
constexpr const char* k_extra_cmdline = "/etc/default/raspi-extra-cmdline";
constexpr const char* k_defaults = "/etc/default/raspi-firmware";
// The hook writes these paths, whatever the profile's board.boot.firmware_dir says.
constexpr const char* k_dir = "/boot/firmware";
constexpr const char* k_cmdline = "/boot/firmware/cmdline.txt";
constexpr const char* k_config = "/boot/firmware/config.txt";

// Whether 'at' in the shell text 'text' is in a comment: a '#' that starts a word earlier
// on its line, outside quotes.
bool in_comment(const std::string& text, std::size_t at) {
    const std::size_t line = text.rfind('\n', at);
    char quote = 0;
    for (std::size_t k = line == std::string::npos ? 0 : line + 1; k < at; ++k) {
        const char ch = text[k];
        if (quote) {
            quote = ch == quote ? 0 : quote;
        } else if (ch == '\'' || ch == '"') {
            quote = ch;
        } else if (ch == '#' && (k == 0 || std::string_view(" \t\n;&|(").find(text[k - 1]) !=
                                               std::string_view::npos)) {
            return true;
        }
    }
    return false;
}

// 'text' without its comment lines ('#' first): what the hook copies after cmdline.txt's
// first line that a reader could take for parameters.
std::string uncommented(const std::string& text) {
    std::string out;
    for (std::size_t start = 0; start < text.size();) {
        std::size_t end = text.find('\n', start);
        end = end == std::string::npos ? text.size() : end + 1;
        const std::size_t first = text.find_first_not_of(" \t", start);
        if (first >= end || text[first] != '#')
            out.append(text, start, end - start);
        start = end;
    }
    return out;
}

// Whether the hook writes cmdline.txt itself ('cat >/boot/firmware/cmdline.txt <<EOF' in
// raspi-firmware 1.20240424+ds-6): a redirection into that file (spaces and a quote
// allowed; not into cmdline.txt.bak), outside comments. A hook of the same name that leaves
// cmdline.txt alone is not this flavour: the firmware row edits cmdline.txt there.
bool rewrites_cmdline(const std::string& hook) {
    const std::string target = "/boot/firmware/cmdline.txt";
    for (std::size_t at = hook.find(target); at != std::string::npos;
         at = hook.find(target, at + 1)) {
        const std::size_t end = at + target.size();
        if (end < hook.size() &&
            std::string_view(" \t\n;&|)'\"").find(hook[end]) == std::string_view::npos)
            continue;
        std::size_t before = at;
        if (before > 0 && (hook[before - 1] == '"' || hook[before - 1] == '\''))
            --before;
        while (before > 0 && (hook[before - 1] == ' ' || hook[before - 1] == '\t'))
            --before;
        if (before > 0 && hook[before - 1] == '>' && !in_comment(hook, before - 1))
            return true;
    }
    return false;
}

bool detect(const TargetReader& reader) {
    auto hook = reader.read(k_hook, ReadCap::config);
    return hook && rewrites_cmdline(hook->content);
}

void probe(const TargetReader& reader, const Profile& profile, TargetFacts& facts, bool trial) {
    Profile at_hook_dir = profile;
    at_hook_dir.board.boot.firmware_dir = k_dir;
    probe_firmware_files(reader, at_hook_dir, facts, trial);
    // The firmware row records cmdline.txt and config.txt only when one of them is there;
    // the hook makes both, and rollback restores them.
    for (const char* path : {k_cmdline, k_config})
        if (!facts.file(path))
            facts.record(path, reader.read(path, ReadCap::config));
    facts.record(k_hook, reader.read(k_hook, ReadCap::config));
    facts.record(k_extra_cmdline, reader.read(k_extra_cmdline, ReadCap::cmdline));
    facts.record(k_defaults, reader.read(k_defaults, ReadCap::config));
    if (reader.exists(k_rerun))
        facts.executables.push_back(k_rerun);
}

// The newest of 'kernels' the hook could boot ('only': those it takes), by 'sort -V' as
// the hook orders /boot/vmlinuz-*, backups left out as it leaves them out
// (grep -E -v '\.(dpkg-bak|old-dkms)$'). With every kernel, the one the hook copies and
// names in config.txt.
const InstalledKernel* newest_for_hook(const std::vector<InstalledKernel>& kernels,
                                       bool (*only)(const InstalledKernel&)) {
    return newest_kernel(kernels, [only](const InstalledKernel& k) {
        return !k.version.ends_with(".dpkg-bak") && !k.version.ends_with(".old-dkms") &&
               (!only || only(k));
    });
}

// KERNEL= in /etc/default/raspi-firmware, which the hook sources ('. /etc/default/raspi-firmware')
// after its own KERNEL="auto": the last assignment as the shell makes it, read as
// /etc/default/grub is (boot/grub.hpp); "auto" when it is not set. Other than "auto" (""
// too), the hook names that image in config.txt instead of the newest kernel. nullopt when
// only running the shell could tell.
std::optional<std::string> kernel_setting(const std::string& defaults) {
    const std::vector<ShellAssignment> found = shell_assignments(defaults, "KERNEL");
    if (found.empty())
        return "auto";
    const ShellAssignment& last = found.back();
    if (last.opaque || last.appends)
        return std::nullopt;
    return last.value;
}

// The PREEMPT_RT kernel as the hook chooses it: the newest kernel wins, whatever the
// profile says.
void plan_kernel_choice(PlanContext& c) {
    const std::optional<std::string> pinned = kernel_setting(content_of(c.facts, k_defaults));
    if (!pinned) {
        warning(c.plan, "raspi-kernel-pinned",
                std::string(k_defaults) +
                    " sets KERNEL= to what only running the shell can tell: Debian's "
                    "raspi-firmware hook sources it, and rtprov cannot tell which kernel boots; "
                    "set KERNEL=\"auto\" to let the hook choose the newest");
        return;
    }
    if (*pinned != "auto") {
        warning(c.plan, "raspi-kernel-pinned",
                std::string(k_defaults) + " sets KERNEL='" + *pinned + "'" +
                    ": Debian's raspi-firmware hook names that image in config.txt instead of "
                    "the newest kernel, and copies no kernel or initramfs, so rtprov cannot "
                    "tell which kernel boots; set KERNEL=\"auto\" to let it choose the newest");
        return;
    }
    const InstalledKernel* chosen = newest_for_hook(c.facts.kernels, nullptr);
    const bool realtime = c.profile.tuning.kernel.realtime;
    const auto& rt_packages = c.profile.board.kernel.rt_packages;
    if (realtime && std::none_of(rt_packages.begin(), rt_packages.end(), [](const std::string& p) {
            return p.rfind("linux-image-rt-", 0) == 0;
        })) {
        error(c.plan, "raspi-rt-package",
              "tuning.kernel.realtime is true, and on Debian's raspi-firmware the PREEMPT_RT "
              "kernel is Debian's own: set board.kernel.rt_packages to [linux-image-rt-arm64] "
              "(the profile names " +
                  (rt_packages.empty() ? std::string("none") : join(rt_packages, " ")) +
                  ", Raspberry Pi OS's) (nothing was written)");
        return;
    }
    const InstalledKernel* rt = newest_for_hook(c.facts.kernels, is_preempt_rt);
    if (realtime) {
        if (chosen && is_preempt_rt(*chosen)) {
            info(c.plan, "raspi-rt-kernel",
                 "Debian's raspi-firmware hook boots the newest kernel by version (sort -V), " +
                     chosen->version + ": the PREEMPT_RT one");
        } else if (rt) {
            error(c.plan, "raspi-rt-not-newest",
                  "Debian's raspi-firmware hook boots the newest /boot/vmlinuz-* by version "
                  "(sort -V), " +
                      chosen->version + ", not the PREEMPT_RT kernel " + rt->version +
                      ": remove the newer kernel's package (apt purge linux-image-" +
                      chosen->version + ") or upgrade " + join(rt_packages, " ") +
                      " so that the RT kernel is the newest, then apply again (nothing was "
                      "written)");
        } else if (c.options.install_packages) {
            info(c.plan, "raspi-rt-kernel",
                 "Debian's raspi-firmware hook boots the newest kernel by version (sort -V): "
                 "after " +
                     join(rt_packages, " ") +
                     " is installed, 'rtprov status' and the audit show whether that is the "
                     "PREEMPT_RT one");
        } else {
            error(c.plan, "raspi-rt-missing",
                  "tuning.kernel.realtime is true and no PREEMPT_RT kernel is installed: "
                  "install " +
                      join(rt_packages, " ") +
                      " (Debian's raspi-firmware hook then boots it as the newest kernel) or "
                      "pass --install-packages (nothing was written)");
        }
        return;
    }
    if (chosen && is_preempt_rt(*chosen))
        warning(c.plan, "raspi-rt-kernel-wins",
                "tuning.kernel.realtime is false, but Debian's raspi-firmware hook boots the "
                "newest /boot/vmlinuz-* by version (sort -V), and that is the PREEMPT_RT "
                "kernel " +
                    chosen->version +
                    ": to boot the generic kernel, remove the RT one (apt purge "
                    "linux-image-rt-arm64 linux-image-" +
                    chosen->version + "), which runs the hook again");
}

// The first line of 'text'.
std::string first_line_of(const std::string& text) {
    return text.substr(0, text.find('\n'));
}

// The command line the hook will write with the source 'next': its own part (cmdline.txt's
// first line, less the source's first line it ends in) and the source's first line. As the
// Pi firmware row warns for cmdline.txt (rpi_firmware.hpp: the firmware takes at most 1024
// characters and prepends its own).
void warn_long_line(PlanContext& c, const std::string& next) {
    const std::string made = first_line_of(content_of(c.facts, k_cmdline));
    if (made.empty())
        return; // no kernel yet: the hook's part is unknown
    const std::string old = first_line_of(content_of(c.facts, k_extra_cmdline));
    const std::size_t own = made.ends_with(old) ? made.size() - old.size() : made.size();
    const std::size_t length = own + first_line_of(next).size();
    if (length > k_cmdline_warn_length)
        warning(c.plan, "cmdline-long",
                "the command line Debian's raspi-firmware hook writes into " +
                    std::string(k_cmdline) + " from " + k_extra_cmdline + " will be " +
                    std::to_string(length) +
                    " characters; the firmware takes at most 1024 and prepends its own, so "
                    "parameters at the end may be lost");
}

void plan_raspi(PlanContext& c) {
    if (!c.facts.file(k_hook) || !rewrites_cmdline(content_of(c.facts, k_hook))) {
        error(c.plan, "raspi-firmware-missing",
              "board.boot.loader is raspi-firmware, but the target has no Debian raspi-firmware "
              "hook that writes cmdline.txt (" +
                  std::string(k_hook) +
                  "): install Debian's raspi-firmware package, or name the loader the image "
                  "has (rpi-firmware for Raspberry Pi OS) (nothing was written)");
        return;
    }
    if (refuse_unreadable(c, k_extra_cmdline, CmdlineScope::first_line))
        return;
    if (const std::vector<CmdlineToken> after = parse_cmdline(uncommented(
            parse_cmdline_text(content_of(c.facts, k_extra_cmdline), CmdlineScope::first_line)
                .rest));
        !after.empty())
        warning(c.plan, "raspi-extra-cmdline-lines",
                std::string(k_extra_cmdline) +
                    " has text after its first line: Debian's raspi-firmware hook copies the "
                    "whole file into cmdline.txt, and the firmware reads the first line only, "
                    "so '" +
                    render_cmdline(after) +
                    "' never reaches the kernel; rtprov edits the first line: move the rest "
                    "onto it");
    plan_kernel_choice(c);
    if (c.options.trial) {
        // The default boot stays as it is: the hook's files and its source. The trial's
        // command line is the hook's cmdline.txt with rtprov's parameters and the trial's.
        if (!c.facts.file(k_cmdline)) {
            error(c.plan, "no-cmdline-txt",
                  std::string(k_cmdline) +
                      " does not exist yet: Debian's raspi-firmware hook makes it when a kernel "
                      "is installed; install one, or apply without --trial (nothing was "
                      "written)");
            return;
        }
        keep_as_is(c, k_extra_cmdline, "the hook's source, kept during the trial");
        c.plan.cmdline_edits[k_extra_cmdline] =
            CmdlineEdit{true, c.keys,
                        owned_part(parse_cmdline_text(content_of(c.facts, k_extra_cmdline),
                                                      CmdlineScope::first_line)
                                       .tokens,
                                   c.keys)};
        const std::string merged = merge_into(c, k_cmdline, CmdlineScope::first_line);
        c.plan.cmdline_edits.erase(k_cmdline);
        keep_as_is(c, k_cmdline, "the default command line, kept during the trial");
        plan_rpi_trial(
            c, k_dir, k_config,
            parse_config_txt(content_of(c.facts, k_config), c.profile.board.boot.config_filter),
            merged.substr(0, merged.find('\n')), std::nullopt);
        return;
    }
    FileState extra;
    extra.content = merge_into(c, k_extra_cmdline, CmdlineScope::first_line);
    // A source rtprov creates (Debian's images have none) carries rtprov's mark on its
    // second line, as the trial's command-line file does: rollback removes only a created
    // file with the mark (target/journal.cpp). The hook copies it into cmdline.txt after
    // the first line, which the firmware does not read.
    if (!c.facts.file(k_extra_cmdline))
        extra.content += "\n" + owned_file_header(c.profile.name);
    warn_long_line(c, extra.content);
    add_file_change(c.plan, c.facts, k_extra_cmdline, std::move(extra),
                    "kernel parameters Debian's raspi-firmware hook appends to " +
                        std::string(k_cmdline));
    // The hook runs when the source changed, and when the command line it made lacks a
    // parameter (the source was written and the hook never ran since).
    const std::vector<CmdlineToken> now =
        parse_cmdline_text(content_of(c.facts, k_cmdline), CmdlineScope::first_line).tokens;
    const bool lacking = std::any_of(c.params.begin(), c.params.end(), [&](const KernelParam& p) {
        return not_in_effect(now, p).has_value();
    });
    if (changes(c.plan, k_extra_cmdline) || lacking || regeneration_pending(c))
        regenerate(c, {{k_rerun}}, k_rerun,
                   std::string(k_cmdline) + " and config.txt (Debian's raspi-firmware hook)",
                   k_extra_cmdline, {k_cmdline, k_config});
}

bool regenerates(const std::vector<std::string>& argv) {
    return argv == std::vector<std::string>{k_rerun};
}

} // namespace

const Loader& raspi_firmware_loader() {
    static const Loader row{
        .id = BootLoader::raspi_firmware,
        .flavour_of = BootLoader::rpi_firmware,
        .detect = detect,
        .probe = probe,
        .plan = plan_raspi,
        .regenerates = regenerates,
        .regenerated = {k_cmdline, k_config},
        // The trial is the Pi firmware's: tryboot.txt for one boot after 'reboot "0
        // tryboot"', a file the hook leaves alone.
        .trial_reboot_argument = rpi_firmware_loader().trial_reboot_argument,
        .trial_boot_flag = rpi_firmware_loader().trial_boot_flag,
        .rt_default_fix = "Debian's raspi-firmware hook boots the newest /boot/vmlinuz-* by "
                          "version: make the RT kernel the newest (remove newer generic "
                          "kernels), run " +
                          std::string(k_rerun) + ", then reboot",
    };
    return row;
}

} // namespace rtprov::boot
