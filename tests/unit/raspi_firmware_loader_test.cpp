// SPDX-License-Identifier: Apache-2.0
// Debian's raspi-firmware (boot/raspi_firmware_loader.cpp): rtprov writes the hook's source,
// /etc/default/raspi-extra-cmdline, and runs the hook, which rewrites cmdline.txt and
// config.txt; the hook's kernel choice (the newest by version) against the profile's.
#include "tests/unit/boot_plan_fixtures.hpp"
#include "tests/unit/catch.hpp"

#include <algorithm>

using namespace rtprov;
using namespace rtprov::core;
using namespace rtprov::boot_test;

namespace {

const std::string k_hook = "/etc/kernel/postinst.d/z50-raspi-firmware";
const std::string k_rerun = "/etc/initramfs/post-update.d/z50-raspi-firmware";
const std::string k_extra = "/etc/default/raspi-extra-cmdline";
const std::string k_cmdline = "/boot/firmware/cmdline.txt";
const std::string k_config = "/boot/firmware/config.txt";
// What the hook of raspi-firmware 1.20240424+ds-6 writes, as far as rtprov reads it.
const std::string k_hook_text = "#!/bin/sh\ncat >/boot/firmware/cmdline.txt <<EOF\n"
                                "${pre_cmdline} root=$ROOTPART rw rootwait ${post_cmdline}\nEOF\n";
const std::string k_made = "console=tty0 console=ttyS1,115200 root=LABEL=RASPIROOT rw "
                           "fsck.repair=yes net.ifnames=0  rootwait \n";

InstalledKernel kernel(const std::string& version, bool rt) {
    InstalledKernel k;
    k.version = version;
    k.has_image = true;
    k.config = std::map<std::string, std::string>{};
    if (rt)
        (*k.config)["CONFIG_PREEMPT_RT"] = "y";
    return k;
}

// A Debian Pi root as its hook left it: cmdline.txt and config.txt made, no extra
// parameters yet, Debian's arm64 kernel.
TargetFacts debian_pi(const std::string& extra = "") {
    TargetFacts facts = pi_image(k_made);
    facts.boot_loader = BootLoader::raspi_firmware;
    facts.files[k_hook].content = k_hook_text;
    facts.files[k_config].content = "# Do not modify this file!\narm_64bit=1\n"
                                    "kernel=vmlinuz-6.12.57+deb13-arm64\n";
    if (!extra.empty())
        facts.files[k_extra].content = extra;
    facts.executables.push_back(k_rerun);
    facts.kernels.push_back(kernel("6.12.57+deb13-arm64", false));
    return facts;
}

Plan plan_of(const Profile& profile, const TargetFacts& facts, PlanOptions options = {}) {
    Plan plan;
    boot::plan_boot(plan, profile, resolve_cores(profile, std::nullopt), facts, options);
    return plan;
}

const FileChange* change(const Plan& plan, const std::string& path) {
    auto it = std::find_if(plan.changes.begin(), plan.changes.end(),
                           [&](const FileChange& c) { return c.path == path; });
    return it == plan.changes.end() ? nullptr : &*it;
}

PlanOptions now() {
    PlanOptions options;
    options.regenerate = Regenerate::now;
    return options;
}

} // namespace

TEST_CASE("on Debian's raspi-firmware rtprov writes the hook's source and runs the hook") {
    const Plan plan = plan_of(pi4(), debian_pi(), now());
    CHECK(plan.boot_loader == BootLoader::raspi_firmware);
    CHECK_FALSE(plan.refused());
    // Not cmdline.txt, which the next kernel update would write again without rtprov's part.
    CHECK_FALSE(change(plan, k_cmdline));
    CHECK_FALSE(change(plan, k_config));
    REQUIRE(change(plan, k_extra));
    // Created (Debian's images have none): rtprov's mark on the second line, after the
    // parameters, so that rollback can remove it.
    CHECK(change(plan, k_extra)->next.content ==
          "isolcpus=managed_irq,domain,3 irqaffinity=0-2\n" + owned_file_header("pi4"));
    CHECK(plan.cmdline_edits.at(k_extra).part ==
          std::vector<std::string>{"isolcpus=managed_irq,domain,3", "irqaffinity=0-2"});
    REQUIRE(plan.commands.size() == 1);
    CHECK(plan.commands[0].argv == std::vector<std::string>{k_rerun});
    CHECK(plan.commands[0].produces == std::vector<std::string>{k_cmdline, k_config});
    CHECK(boot::loader_of({k_rerun}) == "raspi-firmware");
    CHECK(boot::produces_of({k_rerun}) == std::vector<std::string>{k_cmdline, k_config});
}

TEST_CASE("the hook's source keeps what others put there, and its first line only is read") {
    Plan plan = plan_of(pi4(), debian_pi("quiet isolcpus=1\n"), now());
    REQUIRE(change(plan, k_extra));
    CHECK(change(plan, k_extra)->next.content == "quiet isolcpus=managed_irq,domain,3 "
                                                 "irqaffinity=0-2\n");
    REQUIRE(finding(plan, "foreign-value"));

    plan = plan_of(pi4(), debian_pi("quiet\nsplash\n"), now());
    REQUIRE(finding(plan, "raspi-extra-cmdline-lines"));
    CHECK(finding(plan, "raspi-extra-cmdline-lines")->message.find("'splash'") !=
          std::string::npos);

    plan = plan_of(pi4(), debian_pi("quiet \"x\n"), now());
    CHECK(finding(plan, "cmdline-quote"));
    CHECK(plan.changes.empty());
}

TEST_CASE("the hook runs when its source changed or what it made lacks a parameter") {
    const std::string ours = "isolcpus=managed_irq,domain,3 irqaffinity=0-2";
    TargetFacts facts = debian_pi(ours);
    facts.files[k_cmdline].content = k_made.substr(0, k_made.size() - 1) + ours + "\n";
    Plan plan = plan_of(pi4(), facts, now());
    CHECK(plan.commands.empty()); // as the hook made it after the last apply
    CHECK_FALSE(change(plan, k_extra));

    facts.files[k_cmdline].content = k_made; // the source holds them, the hook never ran
    plan = plan_of(pi4(), facts, now());
    REQUIRE(plan.commands.size() == 1);
    CHECK(plan.commands[0].argv == std::vector<std::string>{k_rerun});

    // Offline by default: recorded for first boot, the marker before the source.
    plan = plan_of(pi4(), debian_pi());
    CHECK(plan.commands.empty());
    REQUIRE(finding(plan, "regenerate-first-boot"));
    REQUIRE(plan.changes.size() == 2);
    CHECK(plan.changes[0].path == k_pending_regeneration_path);
    CHECK(plan.changes[0].next.content.find(k_rerun + "\n") != std::string::npos);
    CHECK(plan.changes[1].path == k_extra);
}

TEST_CASE("a profile that names raspi-firmware on a root without Debian's hook is refused") {
    Profile profile = pi4();
    profile.board.boot.loader = BootLoader::raspi_firmware;
    TargetFacts facts = debian_pi();
    facts.files.erase(k_hook);
    Plan plan = plan_of(profile, facts, now());
    REQUIRE(finding(plan, "raspi-firmware-missing"));
    CHECK(plan.refused());
    CHECK(plan.changes.empty());
    // A hook of that name that leaves cmdline.txt alone is not Debian's.
    facts.files[k_hook].content = "#!/bin/sh\ncp /boot/vmlinuz-* /boot/firmware/\n";
    plan = plan_of(profile, facts, now());
    CHECK(finding(plan, "raspi-firmware-missing"));
}

TEST_CASE("the hook boots the newest kernel by version, and rtprov says what that means") {
    // realtime off, but the RT kernel is installed: it sorts after the generic one of the
    // same version ('rt-arm64' > 'arm64'), so it is what boots.
    TargetFacts facts = debian_pi();
    facts.kernels.push_back(kernel("6.12.57+deb13-rt-arm64", true));
    Plan plan = plan_of(pi4(), facts, now());
    REQUIRE(finding(plan, "raspi-rt-kernel-wins"));
    CHECK(finding(plan, "raspi-rt-kernel-wins")->message.find("6.12.57+deb13-rt-arm64") !=
          std::string::npos);

    Profile rt = pi4();
    rt.tuning.kernel.realtime = true;
    rt.board.kernel.rt_packages = {"linux-image-rpi-v8-rt"}; // Raspberry Pi OS's
    plan = plan_of(rt, facts, now());
    CHECK(finding(plan, "raspi-rt-package"));
    CHECK(plan.refused());

    rt.board.kernel.rt_packages = {"linux-image-rt-arm64"};
    plan = plan_of(rt, facts, now());
    CHECK(finding(plan, "raspi-rt-kernel"));
    CHECK_FALSE(plan.refused());
    CHECK_FALSE(finding(plan, "raspi-rt-kernel-wins"));

    // A newer generic kernel wins over the RT one.
    facts.kernels.push_back(kernel("6.12.63+deb13-arm64", false));
    plan = plan_of(rt, facts, now());
    REQUIRE(finding(plan, "raspi-rt-not-newest"));
    CHECK(finding(plan, "raspi-rt-not-newest")
              ->message.find("6.12.63+deb13-arm64, not the "
                             "PREEMPT_RT kernel "
                             "6.12.57+deb13-rt-arm64") != std::string::npos);
    CHECK(plan.refused());
    // And then realtime off says nothing: the generic kernel boots.
    plan = plan_of(pi4(), facts, now());
    CHECK_FALSE(finding(plan, "raspi-rt-kernel-wins"));

    // None installed: refused, unless rtprov installs it.
    plan = plan_of(rt, debian_pi(), now());
    CHECK(finding(plan, "raspi-rt-missing"));
    PlanOptions install = now();
    install.install_packages = true;
    plan = plan_of(rt, debian_pi(), install);
    CHECK_FALSE(plan.refused());
    CHECK(finding(plan, "raspi-rt-kernel"));

    // KERNEL= pinned in the hook's defaults: rtprov cannot tell.
    facts = debian_pi();
    facts.files["/etc/default/raspi-firmware"].content = "#KERNEL=auto\n  KERNEL=\"u-boot.bin\"\n";
    plan = plan_of(rt, facts, now());
    CHECK(finding(plan, "raspi-kernel-pinned"));
    facts.files["/etc/default/raspi-firmware"].content = "KERNEL=\"auto\"\n";
    plan = plan_of(rt, facts, now());
    CHECK_FALSE(finding(plan, "raspi-kernel-pinned"));
}

TEST_CASE("a trial on Debian's raspi-firmware leaves the hook's files and source alone") {
    TargetFacts facts = debian_pi("quiet\n");
    PlanOptions trial = now();
    trial.trial = true;
    trial.trial_id = "abc";
    Plan plan = plan_of(pi4(), facts, trial);
    CHECK(finding(plan, "rpi-trial-offline")); // an image's first boot is no tryboot
    facts.mode = TargetMode::live;
    plan = plan_of(pi4(), facts, trial);
    CHECK_FALSE(plan.refused());
    CHECK(plan.commands.empty());
    // Kept as they are: not changed, still rtprov's to keep.
    CHECK_FALSE(change(plan, k_extra));
    CHECK_FALSE(change(plan, k_cmdline));
    CHECK(std::count(plan.unchanged.begin(), plan.unchanged.end(), k_extra) == 1);
    CHECK(std::count(plan.unchanged.begin(), plan.unchanged.end(), k_cmdline) == 1);
    REQUIRE(change(plan, "/boot/firmware/rtprov-trial-cmdline.txt"));
    const std::string& line = change(plan, "/boot/firmware/rtprov-trial-cmdline.txt")->next.content;
    INFO(line);
    CHECK(line.rfind("console=tty0 console=ttyS1,115200 root=LABEL=RASPIROOT rw fsck.repair=yes "
                     "net.ifnames=0  rootwait isolcpus=managed_irq,domain,3 irqaffinity=0-2",
                     0) == 0);
    CHECK(line.find(" rtprov.trial=abc ") != std::string::npos);
    REQUIRE(change(plan, "/boot/firmware/tryboot.txt"));
    CHECK(change(plan, "/boot/firmware/tryboot.txt")->next.content.find("kernel=vmlinuz-6.12.57") !=
          std::string::npos);
    CHECK_FALSE(plan.cmdline_edits.count(k_cmdline));
}

TEST_CASE("KERNEL= in the hook's defaults is read as the shell that sources it reads it") {
    Profile rt = pi4();
    rt.tuning.kernel.realtime = true;
    rt.board.kernel.rt_packages = {"linux-image-rt-arm64"};
    TargetFacts facts = debian_pi();
    facts.kernels.push_back(kernel("6.12.57+deb13-rt-arm64", true));
    const auto pinned = [&](const std::string& defaults) {
        facts.files["/etc/default/raspi-firmware"].content = defaults;
        const Plan plan = plan_of(rt, facts, now());
        const Finding* f = finding(plan, "raspi-kernel-pinned");
        return f ? f->message : std::string();
    };
    // The hook's own default, and the comments of the file Debian ships.
    CHECK(pinned("#KERNEL=\"auto\"\n# KERNEL=vmlinuz-6.1.0-31-arm64\n").empty());
    CHECK(pinned("KERNEL=\"auto\" # the default\n").empty());
    CHECK(pinned("KERNEL='auto'\n").empty());
    // Set, however it is written: the last one wins, as in sh.
    CHECK(pinned("export KERNEL=u-boot.bin\n").find("KERNEL='u-boot.bin'") != std::string::npos);
    CHECK(pinned("  KERNEL=\"u-boot.bin\"\n").find("KERNEL='u-boot.bin'") != std::string::npos);
    CHECK(pinned("KERNEL=u-boot.bin\nKERNEL=auto\n").empty());
    CHECK(pinned("KERNEL=auto\nKERNEL=u-boot.bin\n").find("KERNEL='u-boot.bin'") !=
          std::string::npos);
    CHECK(pinned("KERNEL=\"\"\n").find("KERNEL=''") != std::string::npos); // not "auto"
    // What only the shell can tell is not guessed.
    CHECK(pinned("KERNEL=$(ls /boot/vmlinuz-* | head -1)\n").find("only running the shell") !=
          std::string::npos);
    // Not KERNEL: KERNEL_ARCH and a name that ends in KERNEL.
    CHECK(pinned("KERNEL_ARCH=arm64\nMY_KERNEL=x\n").empty());
}

TEST_CASE("a hook is Debian's only where it redirects into cmdline.txt outside a comment") {
    Profile profile = pi4();
    profile.board.boot.loader = BootLoader::raspi_firmware;
    TargetFacts facts = debian_pi();
    const auto found = [&](const std::string& hook) {
        facts.files[k_hook].content = hook;
        return !finding(plan_of(profile, facts, now()), "raspi-firmware-missing");
    };
    CHECK(found(k_hook_text));
    CHECK(found("#!/bin/sh\ncat > \"/boot/firmware/cmdline.txt\" <<EOF\nrootwait\nEOF\n"));
    CHECK(found("#!/bin/sh\necho '#' >/boot/firmware/cmdline.txt\n"));
    // Mentioned, not written: in a comment, or a backup beside it.
    CHECK_FALSE(found("#!/bin/sh\n# Debian's: cat >/boot/firmware/cmdline.txt <<EOF\n"
                      "cp \"$latest_kernel\" /boot/firmware/\n"));
    CHECK_FALSE(found("#!/bin/sh\ncp /x/a /boot/firmware/ # then >/boot/firmware/cmdline.txt\n"));
    CHECK_FALSE(
        found("#!/bin/sh\ncat /boot/firmware/cmdline.txt >/boot/firmware/cmdline.txt.bak\n"));
}

TEST_CASE("the hook's source rtprov created is read back as it was written") {
    Plan plan = plan_of(pi4(), debian_pi(), now());
    REQUIRE(change(plan, k_extra));
    const std::string written = change(plan, k_extra)->next.content;
    CHECK(written.rfind("isolcpus=managed_irq,domain,3 irqaffinity=0-2\n# Written by rtprov from "
                        "profile 'pi4'",
                        0) == 0);
    // Applied, and the hook ran: '$(cat)' drops the final newline, and the firmware reads
    // the first line of what it made.
    TargetFacts facts = debian_pi(written);
    facts.files[k_cmdline].content =
        k_made.substr(0, k_made.size() - 1) + written.substr(0, written.size() - 1) + "\n";
    plan = plan_of(pi4(), facts, now());
    CHECK_FALSE(change(plan, k_extra));
    CHECK(plan.commands.empty());
    CHECK_FALSE(finding(plan, "raspi-extra-cmdline-lines")); // the mark is no parameter
    // A comment of the user's after the first line is none either; a parameter is.
    plan = plan_of(pi4(), debian_pi("quiet\n  # splash is for the desktop\n"), now());
    CHECK_FALSE(finding(plan, "raspi-extra-cmdline-lines"));
    plan = plan_of(pi4(), debian_pi("quiet\n# x\nsplash\n"), now());
    REQUIRE(finding(plan, "raspi-extra-cmdline-lines"));
    CHECK(finding(plan, "raspi-extra-cmdline-lines")->message.find("so 'splash' never") !=
          std::string::npos);
}

TEST_CASE("an RT kernel's backup the hook skips is no RT kernel it could boot") {
    Profile rt = pi4();
    rt.tuning.kernel.realtime = true;
    rt.board.kernel.rt_packages = {"linux-image-rt-arm64"};
    TargetFacts facts = debian_pi();
    InstalledKernel backup = kernel("6.12.57+deb13-rt-arm64.dpkg-bak", false);
    backup.config.reset(); // only the image: RT by its name
    facts.kernels.push_back(backup);
    const Plan plan = plan_of(rt, facts, now());
    // Not 'remove the newer generic kernel': there is no RT kernel to boot.
    CHECK_FALSE(finding(plan, "raspi-rt-not-newest"));
    CHECK(finding(plan, "raspi-rt-missing"));
}

TEST_CASE(
    "a trial after an apply takes the hook's cmdline.txt with rtprov's old values as rtprov's") {
    // Applied with isolcpus 3 before: the source and the hook's cmdline.txt hold it.
    const std::string ours = "isolcpus=managed_irq,domain,3 irqaffinity=0-2";
    TargetFacts facts = debian_pi(ours + "\n" + owned_file_header("pi4"));
    facts.files[k_cmdline].content = k_made.substr(0, k_made.size() - 1) + ours + "\n";
    facts.originals[k_cmdline] = k_made; // the hook's, before rtprov
    facts.previous_owned_keys = {"isolcpus", "irqaffinity"};
    facts.mode = TargetMode::live;
    Profile two = pi4();
    two.tuning.cores.housekeeping = CpuList::range(0, 1);
    two.tuning.cores.reserved = CpuList::range(2, 3);
    PlanOptions trial = now();
    trial.trial = true;
    trial.trial_id = "abc";
    const Plan plan = plan_of(two, facts, trial);
    INFO(plan.findings.size());
    CHECK_FALSE(finding(plan, "foreign-value"));
    REQUIRE(change(plan, "/boot/firmware/rtprov-trial-cmdline.txt"));
    const std::string& line = change(plan, "/boot/firmware/rtprov-trial-cmdline.txt")->next.content;
    CHECK(line.find("isolcpus=managed_irq,domain,3 ") == std::string::npos);
}

TEST_CASE("a command line the hook would make too long for the firmware is warned of") {
    Plan plan = plan_of(pi4(), debian_pi("quiet\n"), now());
    CHECK_FALSE(finding(plan, "cmdline-long"));
    // 98 characters of the hook's own, 850 of the source's, 46 of rtprov's parameters.
    plan = plan_of(pi4(), debian_pi("x.y=" + std::string(846, 'a') + "\n"), now());
    REQUIRE(finding(plan, "cmdline-long"));
    INFO(finding(plan, "cmdline-long")->message);
    CHECK(finding(plan, "cmdline-long")->message.find("will be 994 characters") !=
          std::string::npos);
}
