// SPDX-License-Identifier: Apache-2.0
// The trial: GRUB's environment block, the trial's plan for GRUB, its record, and what a
// boot is to it.
#include "provisioner/boot/boot_plan.hpp"
#include "provisioner/boot/grub.hpp"
#include "provisioner/core/error.hpp"
#include "provisioner/target/trial_record.hpp"

#include "tests/unit/catch.hpp"

#include <algorithm>

using namespace rtprov;
using namespace rtprov::core;

namespace {

std::string empty_block() {
    std::string block = "# GRUB Environment Block\n";
    return block + std::string(1024 - block.size(), '#');
}

Profile x86() {
    Profile p;
    p.name = "x86";
    p.board.cpus = 4;
    p.board.boot.loader = BootLoader::grub;
    p.tuning.cores.housekeeping = CpuList({0, 1});
    p.tuning.cores.reserved = CpuList({2, 3});
    return p;
}

Plan trial_plan(TargetFacts facts, Regenerate regenerate = Regenerate::now) {
    Plan plan;
    Profile profile = x86();
    PlanOptions options;
    options.trial = true;
    options.trial_id = "0123456789ab";
    options.regenerate = regenerate;
    facts.executables.push_back("/usr/sbin/update-grub");
    boot::plan_boot(plan, profile, resolve_cores(profile, std::nullopt), facts, options);
    return plan;
}

const Finding* finding(const Plan& plan, const std::string& code) {
    auto it = std::find_if(plan.findings.begin(), plan.findings.end(),
                           [&](const Finding& f) { return f.code == code; });
    return it == plan.findings.end() ? nullptr : &*it;
}

const FileChange* change(const Plan& plan, const std::string& path) {
    auto it = std::find_if(plan.changes.begin(), plan.changes.end(),
                           [&](const FileChange& c) { return c.path == path; });
    return it == plan.changes.end() ? nullptr : &*it;
}

// The message of the rtprov::Error 'f' throws, "" when it throws none.
template <class F> std::string thrown(F f) {
    try {
        f();
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}

} // namespace

TEST_CASE("GRUB's environment block is read and written as grub-editenv does") {
    boot::GrubEnv env = boot::parse_grub_env(empty_block());
    REQUIRE(env.valid);
    CHECK(env.entries.empty());
    env.set("saved_entry", "a\\b");
    env.set("next_entry", "rtprov-trial");
    std::string text = boot::render_grub_env(env);
    CHECK(text.size() == 1024);
    CHECK(text.rfind("# GRUB Environment Block\nsaved_entry=a\\\\b\nnext_entry=rtprov-trial\n#",
                     0) == 0);
    boot::GrubEnv again = boot::parse_grub_env(text);
    CHECK(again.get("saved_entry") == "a\\b");
    CHECK(again.get("next_entry") == "rtprov-trial");
    again.unset("next_entry");
    CHECK_FALSE(again.get("next_entry"));
    CHECK_FALSE(boot::parse_grub_env("# GRUB Environment Block\nnext_entry=x\n").valid);
    CHECK_FALSE(boot::parse_grub_env(std::string(1024, '#')).valid);
}

TEST_CASE("a GRUB trial adds its own entry and arms next_entry, and leaves the default alone") {
    TargetFacts facts;
    facts.files["/boot/grub/grubenv"].content = empty_block();
    facts.files["/etc/default/grub.d/90-rtprov.cfg"].content = "# an earlier apply's\n";
    facts.grub_env_mount = MountFact{"/dev/vda1", "ext4"};
    Plan plan = trial_plan(facts);
    CHECK_FALSE(plan.refused());
    CHECK_FALSE(change(plan, "/etc/default/grub.d/90-rtprov.cfg"));
    CHECK(std::count(plan.unchanged.begin(), plan.unchanged.end(),
                     "/etc/default/grub.d/90-rtprov.cfg") == 1);
    const FileChange* script = change(plan, boot::k_grub_trial_script);
    REQUIRE(script);
    CHECK(script->next.mode == 0755);
    CHECK(script->next.content.find("'rtprov.trial=0123456789ab panic=10 "
                                    "systemd.wants=rtprov-trial-deadline.target'") !=
          std::string::npos);
    CHECK(script->next.content.find("isolcpus=") != std::string::npos);
    const FileChange* env = change(plan, boot::k_grub_env);
    REQUIRE(env);
    CHECK(boot::parse_grub_env(env->next.content).get("next_entry") == "rtprov-trial");
    CHECK(plan.runtime.count(boot::k_grub_env) == 1);
    REQUIRE(plan.commands.size() == 1);
    CHECK(plan.commands.front().argv == std::vector<std::string>{"update-grub"});
}

TEST_CASE("a plain apply after a GRUB trial makes grub.cfg again, also when the drop-in stays") {
    // The default is already what the trial tried (first boot that needed no reboot): the
    // drop-in does not change, yet grub.cfg must lose the trial's entry with its script.
    TargetFacts facts;
    facts.executables.push_back("/usr/sbin/update-grub");
    Profile profile = x86();
    PlanOptions options;
    options.regenerate = Regenerate::now;
    Plan first;
    boot::plan_boot(first, profile, resolve_cores(profile, std::nullopt), facts, options);
    const FileChange* dropin = change(first, "/etc/default/grub.d/90-rtprov.cfg");
    REQUIRE(dropin);
    facts.files["/etc/default/grub.d/90-rtprov.cfg"] = dropin->next;
    Plan settled;
    boot::plan_boot(settled, profile, resolve_cores(profile, std::nullopt), facts, options);
    CHECK(settled.changes.empty());
    CHECK(settled.commands.empty());
    facts.files[boot::k_grub_trial_script].content = "#!/bin/sh\n# the trial's\n";
    Plan after_trial;
    boot::plan_boot(after_trial, profile, resolve_cores(profile, std::nullopt), facts, options);
    CHECK(after_trial.changes.empty());
    REQUIRE(after_trial.commands.size() == 1);
    CHECK(after_trial.commands.front().argv == std::vector<std::string>{"update-grub"});
}

TEST_CASE("a GRUB trial is refused where GRUB cannot spend it") {
    TargetFacts facts;
    facts.files["/boot/grub/grubenv"].content = empty_block();
    for (MountFact mount : {MountFact{"/dev/mapper/vg-root", "ext4"}, MountFact{"/dev/md0", "ext4"},
                            MountFact{"/dev/sda2", "btrfs"}, MountFact{"pool/root", "zfs"}}) {
        INFO(mount.source << " " << mount.fstype);
        facts.grub_env_mount = mount;
        Plan plan = trial_plan(facts);
        REQUIRE(finding(plan, "grub-env-unwritable"));
        CHECK(finding(plan, "grub-env-unwritable")->message.find("grub-probe") !=
              std::string::npos);
        CHECK(plan.changes.empty());
    }
    facts.grub_env_mount = MountFact{"/dev/vda1", "ext4"};
    facts.files["/boot/grub/grubenv"].content = "not a block";
    CHECK(finding(trial_plan(facts), "grub-env-damaged"));
    for (const std::string vars :
         {"next_entry=memtest\n", "next_entry=rtprov-trial\nnext_entry=memtest\n"}) {
        std::string block = "# GRUB Environment Block\n" + vars;
        facts.files["/boot/grub/grubenv"].content = block + std::string(1024 - block.size(), '#');
        INFO(vars);
        CHECK(finding(trial_plan(facts), "grub-env-next-entry"));
    }
    std::string spent = "# GRUB Environment Block\nnext_entry=\n"; // GRUB spent one
    facts.files["/boot/grub/grubenv"].content = spent + std::string(1024 - spent.size(), '#');
    CHECK_FALSE(finding(trial_plan(facts), "grub-env-next-entry"));
    facts.files["/boot/grub/grubenv"].content = empty_block();
    CHECK(finding(trial_plan(facts, Regenerate::first_boot), "trial-needs-regeneration"));
    facts.grub_env_mount.reset();
    Plan unknown = trial_plan(facts);
    CHECK(finding(unknown, "grub-env-unknown"));
    CHECK_FALSE(unknown.refused());
}

namespace {

constexpr const char* k_machine = "0123456789abcdef0123456789abcdef";

// A running box with systemd-boot: /etc/kernel/cmdline, a stock and an RT kernel, and the
// entries kernel-install (layout=bls, systemd 257) made for them on the ESP at /efi.
TargetFacts sdboot_facts() {
    TargetFacts facts;
    facts.mode = TargetMode::live;
    facts.executables = {"/usr/bin/kernel-install", "/usr/bin/bootctl"};
    facts.files["/etc/kernel/cmdline"].content = "root=UUID=0b3e ro quiet\n";
    facts.boot_entries_dir = "/efi/loader/entries";
    for (const std::string version : {"6.12.57+deb13-amd64", "6.12.57+deb13-rt-amd64"}) {
        facts.kernels.push_back({version, true, true, std::nullopt});
        const std::string dir = "/" + std::string(k_machine) + "/" + version;
        facts.files["/efi/loader/entries/" + std::string(k_machine) + "-" + version + ".conf"]
            .content = "# Boot Loader Specification type#1 entry\n"
                       "title      Debian GNU/Linux 13 (trixie)\n"
                       "version    " +
                       version + "\nmachine-id " + k_machine +
                       "\nsort-key   debian\noptions    root=UUID=0b3e ro quiet\nlinux      " +
                       dir + "/linux\ninitrd     " + dir + "/initrd.img-" + version + "\n";
    }
    return facts;
}

Plan sdboot_trial_plan(const TargetFacts& facts, bool realtime = false) {
    Plan plan;
    Profile profile = x86();
    profile.board.boot.loader = BootLoader::systemd_boot;
    profile.board.kernel.rt_packages = {"linux-image-rt-amd64"};
    profile.tuning.kernel.realtime = realtime;
    PlanOptions options;
    options.trial = true;
    options.trial_id = "0123456789ab";
    options.regenerate = Regenerate::now;
    boot::plan_boot(plan, profile, resolve_cores(profile, std::nullopt), facts, options);
    return plan;
}

} // namespace

TEST_CASE("a systemd-boot trial is an entry of its own, booted once through the one-shot") {
    const std::string entry_path = "/efi/loader/entries/rtprov-trial+0.conf";
    for (bool realtime : {false, true}) {
        const std::string version = realtime ? "6.12.57+deb13-rt-amd64" : "6.12.57+deb13-amd64";
        Plan plan = sdboot_trial_plan(sdboot_facts(), realtime);
        INFO("realtime " << realtime);
        REQUIRE_FALSE(plan.refused());
        const FileChange* entry = change(plan, entry_path);
        REQUIRE(entry);
        const std::string& text = entry->next.content;
        CHECK(text.rfind(k_owned_header_start, 0) == 0);
        CHECK(text.find("\ntitle rtprov trial: Debian GNU/Linux 13 (trixie)\n") !=
              std::string::npos);
        CHECK(text.find("\nlinux      /" + std::string(k_machine) + "/" + version + "/linux\n") !=
              std::string::npos);
        CHECK(text.find("\ninitrd     /" + std::string(k_machine) + "/" + version + "/initrd.img-" +
                        version + "\n") != std::string::npos);
        CHECK(text.find("\noptions root=UUID=0b3e ro quiet isolcpus=") != std::string::npos);
        CHECK(text.find(" rtprov.trial=0123456789ab panic=10 "
                        "systemd.wants=rtprov-trial-deadline.target\n") != std::string::npos);
        // The stock entries' own sort key would sort it among them: it has none, and '+0'.
        CHECK(text.find("sort-key") == std::string::npos);
        // The default boot stays: /etc/kernel/cmdline as it is, no kernel-install run.
        CHECK_FALSE(change(plan, "/etc/kernel/cmdline"));
        REQUIRE(plan.commands.size() == 1);
        CHECK(plan.commands[0].argv ==
              std::vector<std::string>{"bootctl", "set-oneshot", "rtprov-trial*"});
        CHECK_FALSE(plan.commands[0].rerun_on_rollback);
    }
    CHECK(boot::is_planned_command({"bootctl", "set-oneshot", "rtprov-trial*"}, "systemd-boot",
                                   boot::CommandUse::pending));
    CHECK_FALSE(boot::is_planned_command({"bootctl", "set-oneshot", "rtprov-trial*"},
                                         "systemd-boot", boot::CommandUse::rerun));
    CHECK_FALSE(boot::is_planned_command({"bootctl", "set-oneshot", "rtprov-trial*"}, "grub",
                                         boot::CommandUse::pending));
    CHECK_FALSE(boot::is_planned_command({"bootctl", "set-default", "rtprov-trial*"},
                                         "systemd-boot", boot::CommandUse::pending));
}

TEST_CASE("a systemd-boot trial is refused where it cannot be armed or has nothing to boot") {
    TargetFacts offline = sdboot_facts();
    offline.mode = TargetMode::offline;
    CHECK(finding(sdboot_trial_plan(offline), "sdboot-trial-offline"));
    TargetFacts no_dir = sdboot_facts();
    no_dir.boot_entries_dir.reset();
    CHECK(finding(sdboot_trial_plan(no_dir), "sdboot-no-entries"));
    TargetFacts no_bootctl = sdboot_facts();
    no_bootctl.executables = {"/usr/bin/kernel-install"};
    CHECK(finding(sdboot_trial_plan(no_bootctl), "sdboot-no-bootctl"));
    TargetFacts no_rt = sdboot_facts();
    no_rt.kernels.pop_back();
    const Plan no_rt_plan = sdboot_trial_plan(no_rt, true);
    const Finding* missing = finding(no_rt_plan, "sdboot-trial-no-kernel");
    REQUIRE(missing);
    CHECK(missing->message.find("linux-image-rt-amd64") != std::string::npos);
    TargetFacts no_entry = sdboot_facts();
    no_entry.files.erase("/efi/loader/entries/" + std::string(k_machine) +
                         "-6.12.57+deb13-amd64.conf");
    const Plan no_entry_plan = sdboot_trial_plan(no_entry);
    const Finding* unlisted = finding(no_entry_plan, "sdboot-trial-no-entry");
    REQUIRE(unlisted);
    CHECK(unlisted->message.find("kernel-install add 6.12.57+deb13-amd64") != std::string::npos);
    for (const TargetFacts& facts : {offline, no_dir, no_bootctl, no_entry}) {
        Plan plan = sdboot_trial_plan(facts);
        CHECK(plan.refused());
        CHECK(plan.changes.empty());
        CHECK(plan.commands.empty());
    }
    // The shared refusals hold for it too.
    TargetFacts facts = sdboot_facts();
    Plan plan;
    Profile profile = x86();
    profile.board.boot.loader = BootLoader::systemd_boot;
    profile.tuning.kernel.extra = {"panic=0"};
    PlanOptions options;
    options.trial = true;
    options.trial_id = "0123456789ab";
    boot::plan_boot(plan, profile, resolve_cores(profile, std::nullopt), facts, options);
    CHECK(finding(plan, "trial-param-reserved"));
    // As the kernel reads it (kstrtoint, base 0): each of these is no reboot on a panic.
    for (const char* value : {"panic=0x0", "panic=00", "panic=-0", "panic=+0", "panic=ten",
                              "panic=", "panic=10s", "panic=4294967296", "panic=-2147483649",
                              "sysctl.kernel.panic=0", "sysctl.kernel/panic=0x0"}) {
        Plan spelled;
        profile.tuning.kernel.extra = {value};
        boot::plan_boot(spelled, profile, resolve_cores(profile, std::nullopt), facts, options);
        INFO(value);
        CHECK(finding(spelled, "trial-param-reserved"));
    }
    for (const char* value : {"panic=5", "panic=-1", "panic=0x10"}) {
        Plan fine;
        profile.tuning.kernel.extra = {value};
        boot::plan_boot(fine, profile, resolve_cores(profile, std::nullopt), facts, options);
        INFO(value);
        CHECK_FALSE(finding(fine, "trial-param-reserved"));
    }
}

TEST_CASE("the trial record is written and read back, and damage is named") {
    target::TrialRecord record{
        "armed", "0123456789ab",        "x86", "grub", "2026-12-01T00:00:00Z", "b0f1", "", "",
        "",      "2026-12-01T00:00:00Z"};
    std::string text = target::format_trial_record(record);
    CHECK(target::parse_trial_record(text, "trial") == record);
    for (const std::string& odd : {std::string("a\x7f"
                                               "b"),
                                   std::string("a\tb"), std::string("\xff"), std::string("\xc3")}) {
        target::TrialRecord forged = record;
        forged.reason = odd;
        INFO(odd);
        std::string written = target::format_trial_record(forged); // made printable
        CHECK(target::parse_trial_record(written, "trial").reason.size() == odd.size());
        std::string by_hand = written;
        by_hand.replace(
            by_hand.find("\nreason=") + 8,
            by_hand.find('\n', by_hand.find("\nreason=") + 1) - by_hand.find("\nreason=") - 8, odd);
        CHECK(thrown([&] { target::parse_trial_record(by_hand, "trial"); }).find("control byte") !=
              std::string::npos);
    }
    std::string utf8 = text;
    utf8.insert(utf8.find("\nloader="), "\nreason=self-test: 87 µs");
    CHECK(target::parse_trial_record(utf8, "trial").reason == "self-test: 87 µs");
    std::string lilo = text;
    lilo.replace(lilo.find("loader=grub"), 11, "loader=lilo");
    CHECK(thrown([&] {
              target::parse_trial_record(lilo, "trial");
          }).find("grub, raspi-firmware, rpi-firmware") != std::string::npos);
    CHECK(thrown([&] {
              target::parse_trial_record(text + "colour=red\n", "/var/lib/rtprov/trial");
          }).find("/var/lib/rtprov/trial:9: unknown key") != std::string::npos);
    CHECK(thrown([&] {
              target::parse_trial_record("phase=maybe\nid=01\nloader=grub\n", "t");
          }).find("no known phase") != std::string::npos);
    CHECK(thrown([&] {
              target::parse_trial_record("phase=armed\nid=$(reboot)\nprofile=x86\nloader=grub\n",
                                         "t");
          }).find("is not the hex id") != std::string::npos);
}

TEST_CASE("a trial record names a boot loader of the table, and the error names them all") {
    const std::string head = "phase=armed\nid=0123456789ab\nprofile=x86\n";
    for (const char* loader : {"grub", "rpi-firmware", "systemd-boot", "raspi-firmware"})
        CHECK(target::parse_trial_record(head + "loader=" + loader + "\n", "t").loader == loader);
    for (const char* loader : {"lilo", "unknown", "GRUB", ""}) {
        INFO(loader);
        CHECK(thrown([&] { target::parse_trial_record(head + "loader=" + loader + "\n", "t"); }) ==
              "t: the trial record names no boot loader rtprov tries boots with ('loader=' grub, "
              "raspi-firmware, rpi-firmware or systemd-boot); 'rtprov trial abort' ends the "
              "trial and writes a new one");
    }
}

TEST_CASE("the trial record's profile follows the profile-name rule, as the state's does") {
    const std::string head = "phase=armed\nid=0123456789ab\nloader=grub\n";
    CHECK(target::parse_trial_record(head + "profile=pi4-rt_2.x\n", "t").profile == "pi4-rt_2.x");
    for (const std::string& bad : std::vector<std::string>{"", "x86 $(reboot)", "-x86", "../x86",
                                                           "x86\\n", "{x}", std::string(65, 'a')}) {
        INFO(bad);
        CHECK(thrown([&] { target::parse_trial_record(head + "profile=" + bad + "\n", "t"); }) ==
              "t: the trial record's profile '" + bad +
                  "' is not a profile name (a profile name holds only letters, digits, '.', "
                  "'_' and '-', starts with a letter or digit, and is at most 64 characters); "
                  "'rtprov trial abort' ends the trial and writes a new one");
    }
    // 'trial abort' after a damaged record writes 'unknown', which it reads back
    CHECK(target::parse_trial_record("phase=aborted\nid=0\nprofile=unknown\nloader=unknown\n", "t")
              .profile == "unknown");
}

TEST_CASE(
    "a boot is the trial only with the trial's marker, and later boots without it fell back") {
    target::TrialRecord record;
    record.phase = "armed";
    record.id = "0123456789ab";
    record.armed_boot = "boot-1";
    using target::TrialBoot;
    CHECK(target::classify_boot(record, "root=/dev/vda1 rtprov.trial=0123456789ab\n", "boot-2") ==
          TrialBoot::trial);
    CHECK(target::classify_boot(record, "root=/dev/vda1\n", "boot-1") == TrialBoot::not_yet);
    CHECK(target::classify_boot(record, "root=/dev/vda1\n", "boot-2") == TrialBoot::did_not_start);
    CHECK(target::classify_boot(record, "rtprov.trial=ffffffffffff\n", "boot-2") ==
          TrialBoot::did_not_start);
    record.armed_boot.clear(); // offline: the image's first boot is the trial
    CHECK(target::classify_boot(record, "quiet\n", "boot-1") == TrialBoot::did_not_start);
    record.phase = "committed";
    CHECK(target::classify_boot(record, "rtprov.trial=0123456789ab\n", "boot-2") ==
          TrialBoot::none);
    CHECK(target::classify_boot(std::nullopt, "", "") == TrialBoot::none);
}

TEST_CASE("a trial refuses what would take away its own safety net") {
    TargetFacts facts;
    facts.files["/boot/grub/grubenv"].content = empty_block();
    facts.grub_env_mount = MountFact{"/dev/vda1", "ext4"};
    for (const char* extra : {"panic=0", "rtprov.trial=0000", "systemd.wants=rtprov-x.target"}) {
        INFO(extra);
        Plan plan;
        Profile profile = x86();
        profile.tuning.kernel.extra = {extra};
        PlanOptions options;
        options.trial = true;
        options.trial_id = "0123456789ab";
        options.regenerate = Regenerate::now;
        boot::plan_boot(plan, profile, resolve_cores(profile, std::nullopt), facts, options);
        REQUIRE(finding(plan, "trial-param-reserved"));
        CHECK(plan.changes.empty());
    }
    Plan plan;
    Profile profile = x86();
    profile.tuning.selftest.duration_s = k_trial_selftest_max_s + 1;
    PlanOptions options;
    options.trial = true;
    options.trial_id = "0123456789ab";
    options.regenerate = Regenerate::now;
    boot::plan_boot(plan, profile, resolve_cores(profile, std::nullopt), facts, options);
    CHECK(finding(plan, "trial-selftest-too-long"));
    facts.files["/boot/grub/grubenv"] = symlink_to("/elsewhere");
    CHECK(finding(trial_plan(facts), "grub-env-link"));
}

TEST_CASE("a Raspberry Pi trial writes tryboot.txt and its own command line, and keeps the rest") {
    Profile profile = x86();
    profile.name = "pi4";
    profile.board.boot.loader = BootLoader::rpi_firmware;
    profile.tuning.kernel.realtime = true;
    profile.board.kernel.rt_image = "kernel8_rt.img";
    TargetFacts facts;
    facts.mode = TargetMode::live;
    FirmwarePartition fw;
    fw.dir = "/boot/firmware";
    fw.has_boot_files = true;
    fw.files = {"config.txt", "cmdline.txt", "kernel8_rt.img"};
    facts.firmware = fw;
    facts.files["/boot/firmware/cmdline.txt"].content =
        "console=tty1 root=PARTUUID=1-02 rootwait\n";
    facts.files["/boot/firmware/config.txt"].content = "arm_64bit=1\n";
    PlanOptions options;
    options.trial = true;
    options.trial_id = "0123456789ab";
    Plan plan;
    boot::plan_boot(plan, profile, resolve_cores(profile, std::nullopt), facts, options);
    CHECK_FALSE(plan.refused());
    CHECK_FALSE(change(plan, "/boot/firmware/cmdline.txt"));
    CHECK_FALSE(change(plan, "/boot/firmware/config.txt"));
    const FileChange* tryboot = change(plan, "/boot/firmware/tryboot.txt");
    REQUIRE(tryboot);
    CHECK(tryboot->next.content.rfind(k_owned_header_start, 0) == 0);
    CHECK(tryboot->next.content.find("arm_64bit=1\n") != std::string::npos);
    CHECK(tryboot->next.content.find("kernel=kernel8_rt.img") != std::string::npos);
    CHECK(tryboot->next.content.ends_with("[all]\ncmdline=rtprov-trial-cmdline.txt\n"));
    const FileChange* line = change(plan, "/boot/firmware/rtprov-trial-cmdline.txt");
    REQUIRE(line);
    const std::string first = line->next.content.substr(0, line->next.content.find('\n'));
    CHECK(first.rfind("console=tty1 root=PARTUUID=1-02 rootwait isolcpus=", 0) == 0);
    CHECK(first.ends_with(" rtprov.trial=0123456789ab panic=10 "
                          "systemd.wants=rtprov-trial-deadline.target"));
    CHECK(line->next.content.substr(first.size() + 1).rfind(k_owned_header_start, 0) == 0);
    // The bootloader's own word on tryboot: none (a warning), tryboot there, or other
    // properties without it (an old bootloader: refused, nothing written).
    CHECK(finding(plan, "rpi-tryboot-unknown"));
    facts.tryboot_supported = true;
    Plan supported;
    boot::plan_boot(supported, profile, resolve_cores(profile, std::nullopt), facts, options);
    CHECK(finding(supported, "rpi-tryboot"));
    CHECK_FALSE(finding(supported, "rpi-tryboot-unknown"));
    facts.tryboot_supported = false;
    Plan old;
    boot::plan_boot(old, profile, resolve_cores(profile, std::nullopt), facts, options);
    REQUIRE(finding(old, "rpi-no-tryboot"));
    CHECK(finding(old, "rpi-no-tryboot")->message.find("rpi-eeprom-update") != std::string::npos);
    CHECK(old.refused());
    CHECK_FALSE(change(old, "/boot/firmware/tryboot.txt"));
    facts.tryboot_supported.reset();
    facts.mode = TargetMode::offline;
    Plan offline;
    boot::plan_boot(offline, profile, resolve_cores(profile, std::nullopt), facts, options);
    CHECK(finding(offline, "rpi-trial-offline"));
}

TEST_CASE("rollback of GRUB's environment block keeps what others set since the trial") {
    auto block = [](const std::string& vars) {
        std::string b = "# GRUB Environment Block\n" + vars;
        return b + std::string(1024 - b.size(), '#');
    };
    std::string kept;
    const std::string original = block("saved_entry=debian\n");
    // GRUB spent the trial's next_entry: the original, byte for byte.
    CHECK(boot::grub_env_rolled_back(original, block("saved_entry=debian\nnext_entry=\n"), kept) ==
          original);
    CHECK(kept.empty());
    // grub-set-default since: its saved_entry stays, next_entry goes.
    CHECK(boot::grub_env_rolled_back(original,
                                     block("saved_entry=memtest\nnext_entry=rtprov-trial\n"),
                                     kept) == block("saved_entry=memtest\n"));
    CHECK(kept == "kept saved_entry=memtest");
    // next_entry first in the original (a grub-reboot before): it stays first.
    const std::string first = block("next_entry=\nsaved_entry=foo\n");
    CHECK(boot::grub_env_rolled_back(first, block("next_entry=\nsaved_entry=foo\n"), kept) ==
          first);
    CHECK(kept.empty());
    // Not a block (damaged since): the original.
    CHECK(boot::grub_env_rolled_back(original, "junk", kept) == original);
    CHECK(kept.empty());
}
