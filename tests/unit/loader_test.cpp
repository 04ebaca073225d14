// SPDX-License-Identifier: Apache-2.0
// The table of boot loaders (boot/loader.hpp): a row for every loader a profile names, and
// what the other folders ask of it.
#include "provisioner/boot/loader.hpp"

#include "provisioner/boot/boot_plan.hpp"
#include "provisioner/boot/grub.hpp"

#include "tests/unit/catch.hpp"

#include <algorithm>
#include <map>

using namespace rtprov;
using namespace rtprov::core;

namespace {

std::string block(const std::string& lines) {
    std::string text = "# GRUB Environment Block\n" + lines;
    return text + std::string(1024 - text.size(), '#');
}

// What a probe reads, from a map of files: the loaders' probes need no root.
class MapReader final : public boot::TargetReader {
  public:
    std::map<std::string, std::string> files;
    std::optional<FileState> read(const std::string& path, boot::ReadCap) const override {
        auto it = files.find(path);
        if (it == files.end())
            return std::nullopt;
        FileState state;
        state.content = it->second;
        return state;
    }
    std::optional<FileState> read_entry(const std::string& path, boot::ReadCap cap) const override {
        return read(path, cap);
    }
    bool exists(const std::string& path) const override { return files.count(path) > 0; }
    bool is_directory(const std::string& path) const override {
        return std::any_of(files.begin(), files.end(),
                           [&](const auto& f) { return f.first.starts_with(path + "/"); });
    }
    std::vector<std::string> list(const std::string& dir) const override {
        std::vector<std::string> names;
        for (const auto& [path, content] : files)
            if (path.starts_with(dir + "/") && path.find('/', dir.size() + 1) == std::string::npos)
                names.push_back(path.substr(dir.size() + 1));
        return names;
    }
    std::string shown(const std::string& path) const override { return "/image" + path; }
    std::optional<std::string> fstab_source(const std::string&) const override {
        return std::nullopt;
    }
    bool is_mount_point(const std::string&) const override { return false; }
    std::optional<MountFact> mount_of(const std::string&) const override { return std::nullopt; }
};

} // namespace

TEST_CASE("every boot loader a profile names has one row in the table, found by its name") {
    REQUIRE(boot::loaders().size() == words(BootLoader{}).size());
    for (const auto& [word, id] : words(BootLoader{})) {
        INFO(word);
        const boot::Loader& row = boot::loader(id);
        CHECK(row.id == id);
        CHECK(row.name() == word);
        CHECK(boot::find_loader(word) == &row);
        CHECK(row.probe);
        CHECK(row.plan);
        CHECK_FALSE(row.rt_default_fix.empty());
    }
    CHECK_FALSE(boot::find_loader("unknown"));
    CHECK_FALSE(boot::find_loader(""));
}

TEST_CASE("the rows say how each loader's trial is armed, told and disarmed") {
    const boot::Loader& rpi = boot::loader(BootLoader::rpi_firmware);
    const boot::Loader& grub = boot::loader(BootLoader::grub);
    const boot::Loader& sdboot = boot::loader(BootLoader::systemd_boot);
    // The Pi firmware: the reboot's own one-shot flag, told by the device tree, nothing left
    // armed.
    CHECK(rpi.trial_reboot_argument == "0 tryboot");
    REQUIRE(rpi.trial_boot_flag);
    CHECK(rpi.trial_boot_flag->node + "/" + rpi.trial_boot_flag->property ==
          "/proc/device-tree/chosen/bootloader/tryboot");
    CHECK_FALSE(rpi.disarm);
    // GRUB: next_entry in its environment block, which a disarm takes out again.
    CHECK(grub.trial_reboot_argument.empty());
    REQUIRE(grub.disarm);
    CHECK(grub.disarm->file == boot::k_grub_env);
    CHECK(grub.disarm->disarmed(block("saved_entry=0\nnext_entry=rtprov-trial\n")) ==
          block("saved_entry=0\n"));
    CHECK_FALSE(grub.disarm->disarmed(block("next_entry=debian\n")));
    CHECK_FALSE(grub.disarm->disarmed("junk"));
    REQUIRE(grub.runtime_file);
    CHECK(boot::is_runtime_path(boot::k_grub_env));
    CHECK_FALSE(boot::is_runtime_path("/etc/kernel/cmdline"));
    // systemd-boot: the one-shot EFI variable, set by a command and removed by one.
    CHECK(sdboot.trial_arming_command ==
          std::vector<std::string>{"bootctl", "set-oneshot", "rtprov-trial*"});
    REQUIRE(sdboot.disarm);
    CHECK(sdboot.disarm->argv == std::vector<std::string>{"bootctl", "set-oneshot", ""});
    CHECK(sdboot.disarm->executable == "/usr/bin/bootctl");
}

TEST_CASE("only systemd-boot leaves the PREEMPT_RT kernel's entry to be chosen by hand") {
    CHECK(boot::loader(BootLoader::rpi_firmware).rt_default_by_hand.empty());
    CHECK(boot::loader(BootLoader::grub).rt_default_by_hand.empty());
    CHECK(boot::loader(BootLoader::systemd_boot).rt_default_by_hand ==
          "choose it as systemd-boot's default entry");
}

TEST_CASE("a regeneration command is its loader's, with the files it rewrites and their readers") {
    CHECK(boot::loader_of({"update-grub"}) == "grub");
    CHECK(boot::produces_of({"update-grub"}) == std::vector<std::string>{"/boot/grub/grub.cfg"});
    CHECK(boot::readers_of("/boot/grub/grub.cfg").size() == 4);
    CHECK(boot::readers_of("/boot/grub/grub.cfg").front() == "/boot/grub/i386-pc/normal.mod");
    const std::vector<std::string> add = {"kernel-install", "add", "6.12", "/boot/vmlinuz-6.12"};
    CHECK(boot::loader_of(add) == "systemd-boot");
    CHECK(boot::produces_of(add).empty());
    CHECK(boot::readers_of("/etc/kernel/cmdline").empty());
    CHECK(boot::loader_of({"reboot"}).empty());
}

TEST_CASE("a loader's probe reads through the reader it is given, not a root") {
    MapReader reader;
    reader.files = {{"/etc/default/grub", "GRUB_CMDLINE_LINUX=\"\"\n"},
                    {"/etc/default/grub.d/50-cloud.cfg", "GRUB_TIMEOUT=1\n"},
                    {"/etc/default/grub.d/README", "not a drop-in\n"},
                    {"/usr/sbin/update-grub", ""}};
    Profile profile;
    profile.board.boot.loader = BootLoader::grub;
    TargetFacts facts;
    boot::loader(BootLoader::grub).probe(reader, profile, facts, false);
    CHECK(facts.files.count("/etc/default/grub"));
    CHECK(facts.files.count("/etc/default/grub.d/50-cloud.cfg"));
    CHECK_FALSE(facts.files.count("/etc/default/grub.d/README"));
    CHECK(facts.has_executable("/usr/sbin/update-grub"));
    CHECK_FALSE(facts.grub_env_mount);

    for (int i = 0; i < 65; ++i)
        reader.files["/etc/default/grub.d/" + std::to_string(i) + ".cfg"] = "";
    try {
        boot::loader(BootLoader::grub).probe(reader, profile, facts, false);
        FAIL("65 drop-ins were read");
    } catch (const std::exception& e) {
        CHECK(std::string(e.what()) == "'/image/etc/default/grub.d' holds 66 drop-ins, more than "
                                       "the 64 rtprov reads; is this the right root?");
    }
}

TEST_CASE("Debian's raspi-firmware is found in the target where the profile names rpi-firmware") {
    MapReader reader;
    reader.files = {{"/boot/firmware/cmdline.txt", "console=tty0 root=/dev/mmcblk0p2 rw\n"},
                    {"/boot/firmware/config.txt", "# Do not modify this file!\n"},
                    {"/usr/lib/raspi-firmware/start4.elf", ""}};
    Profile profile;
    profile.board.boot.loader = BootLoader::rpi_firmware;
    // Raspberry Pi OS: no hook that writes cmdline.txt.
    CHECK(boot::loader_for(profile, reader).id == BootLoader::rpi_firmware);
    reader.files["/etc/kernel/postinst.d/z50-raspi-firmware"] =
        "#!/bin/sh\ncp \"$latest_kernel\" /boot/firmware/\n";
    CHECK(boot::loader_for(profile, reader).id == BootLoader::rpi_firmware);
    // Debian's: it writes cmdline.txt itself.
    reader.files["/etc/kernel/postinst.d/z50-raspi-firmware"] =
        "#!/bin/sh\ncat > /boot/firmware/cmdline.txt <<EOF\nrootwait\nEOF\n";
    const boot::Loader& found = boot::loader_for(profile, reader);
    CHECK(found.id == BootLoader::raspi_firmware);
    // A profile for another loader is not moved by it.
    profile.board.boot.loader = BootLoader::grub;
    CHECK(boot::loader_for(profile, reader).id == BootLoader::grub);

    reader.files["/etc/initramfs/post-update.d/z50-raspi-firmware"] = "#!/bin/sh\n";
    reader.files["/etc/default/raspi-extra-cmdline"] = "quiet\n";
    profile.board.boot.loader = BootLoader::rpi_firmware;
    TargetFacts facts;
    found.probe(reader, profile, facts, false);
    for (const char* path :
         {"/etc/default/raspi-extra-cmdline", "/boot/firmware/cmdline.txt",
          "/boot/firmware/config.txt", "/etc/kernel/postinst.d/z50-raspi-firmware"})
        CHECK(facts.files.count(path));
    CHECK(facts.has_executable("/etc/initramfs/post-update.d/z50-raspi-firmware"));
    REQUIRE(facts.firmware);
    CHECK(facts.firmware->dir == "/boot/firmware");
    // The facts name the row they were read with, and so does what asks them.
    facts.boot_loader = found.id;
    CHECK(boot::loader_for(profile, facts).id == BootLoader::raspi_firmware);
    CHECK(boot::loader_for(profile, TargetFacts{}).id == BootLoader::rpi_firmware);
    // Its trial is the Pi firmware's.
    CHECK(found.trial_reboot_argument == "0 tryboot");
    CHECK(found.trial_boot_flag);
}
