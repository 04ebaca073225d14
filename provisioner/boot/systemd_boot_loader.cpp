// SPDX-License-Identifier: Apache-2.0
// systemd-boot: the command line in /etc/kernel/cmdline, which kernel-install copies into
// each kernel's entry (Boot Loader Specification type #1); the trial by an entry of its own
// and the one-shot EFI variable LoaderEntryOneShot (bootctl(1) set-oneshot). rtprov does
// not choose the default entry.
#include "provisioner/boot/loader.hpp"

#include "provisioner/boot/plan_steps.hpp"
#include "provisioner/core/error.hpp"
#include "provisioner/core/grammar.hpp"

#include <cstring>
#include <sstream>

namespace rtprov::boot {

using namespace rtprov::core;

namespace {

// The command line of every entry kernel-install makes (kernel-install(8)).
constexpr const char* k_kernel_cmdline = "/etc/kernel/cmdline";

// The trial's entry in TargetFacts::boot_entries_dir, and the command that makes the next
// boot, and only that one, boot it (LoaderEntryOneShot, bootctl(1) set-oneshot;
// systemd-boot reads and deletes the variable at boot).
constexpr const char* k_sdboot_trial_entry = "rtprov-trial+0.conf";

std::vector<std::string> sdboot_oneshot_argv(const std::string& entry) {
    // A pattern (systemd-boot matches the one-shot with fnmatch against the entry ids):
    // whether an id keeps the '+0' counter is the loader's business.
    return {"bootctl", "set-oneshot", entry.substr(0, entry.find('+')) + "*"};
}

void probe(const TargetReader& reader, const Profile&, TargetFacts& facts, bool trial) {
    for (const char* exe : {"/usr/bin/kernel-install", "/usr/bin/bootctl"})
        if (reader.exists(exe))
            facts.executables.push_back(exe);
    facts.record(k_kernel_cmdline, reader.read(k_kernel_cmdline, ReadCap::cmdline));
    // The entries only for a trial, which copies one: a plain apply leaves them to
    // kernel-install, and must not fail on an odd file among them.
    for (const char* boot : {"/efi", "/boot", "/boot/efi"}) {
        if (!trial)
            break;
        const std::string dir = std::string(boot) + "/loader/entries";
        if (!reader.is_directory(dir))
            continue;
        facts.boot_entries_dir = dir;
        std::vector<std::string> names;
        for (const std::string& name : reader.list(dir))
            if (name.ends_with(".conf"))
                names.push_back(name);
        if (names.size() > 64)
            throw Error(quoted(reader.shown(dir)) + " holds " + std::to_string(names.size()) +
                        " entries, more than the 64 rtprov reads for a trial; remove "
                        "old kernels' entries ('kernel-install remove VERSION'), or apply "
                        "without --trial");
        for (const std::string& name : names)
            facts.record(dir + "/" + name, reader.read(dir + "/" + name, ReadCap::config));
        const std::string entry = dir + "/" + k_sdboot_trial_entry;
        facts.record(entry, reader.read(entry, ReadCap::config));
        break;
    }
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
void plan_systemd_boot_trial(PlanContext& c, const std::string& cmdline) {
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
    const std::string path = k_kernel_cmdline;
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

void plan_systemd_boot(PlanContext& c) {
    const std::string path = k_kernel_cmdline;
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

// Debian keeps kernels in /boot, which 'kernel-install add-all' does not look at: plan()
// makes 'kernel-install add RELEASE /boot/vmlinuz-RELEASE [/boot/initrd.img-RELEASE]'.
bool regenerates(const std::vector<std::string>& argv) {
    if (argv.size() < 4 || argv.size() > 5 || argv[0] != "kernel-install" || argv[1] != "add")
        return false;
    const std::string& release = argv[2];
    return !grammar::kernel_release(release) && argv[3] == "/boot/vmlinuz-" + release &&
           (argv.size() == 4 || argv[4] == "/boot/initrd.img-" + release);
}

} // namespace

const Loader& systemd_boot_loader() {
    static const Loader row{
        .id = BootLoader::systemd_boot,
        .probe = probe,
        .plan = plan_systemd_boot,
        .regenerates = regenerates,
        .trial_arming_command = sdboot_oneshot_argv(k_sdboot_trial_entry),
        // 'bootctl set-oneshot ""' removes the one-shot entry.
        .disarm =
            TrialDisarm{
                .argv = {"bootctl", "set-oneshot", ""},
                .executable = "/usr/bin/bootctl",
                .failed = "'bootctl set-oneshot \"\"' failed: the one-shot entry may still be "
                          "set; run it by hand before the next reboot",
                .done = "removed systemd-boot's one-shot entry (LoaderEntryOneShot)",
            },
        // rtprov does not choose systemd-boot's default entry; bootctl(1) set-default does.
        .rt_default_fix = "make its entry systemd-boot's default ('bootctl set-default ENTRY'), "
                          "then reboot",
        .rt_default_by_hand = "choose it as systemd-boot's default entry",
    };
    return row;
}

} // namespace rtprov::boot
