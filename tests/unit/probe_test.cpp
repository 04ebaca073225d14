// SPDX-License-Identifier: Apache-2.0
#include "provisioner/target/probe.hpp"

#include "provisioner/boot/grub.hpp"
#include "provisioner/core/error.hpp"
#include "provisioner/core/plan.hpp"
#include "provisioner/fs/root.hpp"
#include "provisioner/planner/planner.hpp"
#include "provisioner/profile/app_loader.hpp"
#include "provisioner/profile/profile_loader.hpp"
#include "provisioner/systemd/systemd_plan.hpp"
#include "tests/unit/catch.hpp"
#include "tests/unit/temp_dir.hpp"

#include <filesystem>
#include <fstream>
#include <stdexcept>

using namespace rtprov;

namespace {

const std::string k_source = RTPROV_SOURCE_DIR;

core::Profile builtin(const std::string& name, std::vector<std::string> sets = {}) {
    std::vector<profile::Override> overrides;
    for (std::string& set : sets)
        overrides.push_back({std::move(set)});
    return profile::load_profile(name, {{k_source + "/board-profiles", "built-in"}}, overrides);
}

// A copy of a fixture root (tests/fixtures/roots/NAME).
std::string fixture_copy(const TempDir& dir, const std::string& name) {
    const std::string root = dir.path() + "/" + name;
    std::filesystem::copy(k_source + "/tests/fixtures/roots/" + name, root,
                          std::filesystem::copy_options::recursive);
    return root;
}

} // namespace

TEST_CASE("every planner reads only what the probe read, for each built-in profile and root") {
    TempDir dir;
    const auto apps = profile::load_apps(k_source + "/board-profiles/apps");
    for (const char* name : {"debian13", "pi4-trixie"}) {
        const std::string root_path = fixture_copy(dir, name);
        fs::Root root(root_path);
        for (const char* profile_name : {"pi4", "x86-debian13"})
            for (bool realtime : {false, true}) {
                // the optional units too: the health gate with the realtime kernel
                const char* on = realtime ? "true" : "false";
                core::Profile p = builtin(
                    profile_name, {"board.cpus=4", std::string("tuning.kernel.realtime=") + on,
                                   std::string("tuning.health_gate=") + on});
                INFO(name << " with " << profile_name << ", realtime and health gate " << realtime);
                core::TargetFacts facts = target::probe(root, p, core::TargetMode::offline);
                REQUIRE(facts.probed);
                for (core::Regenerate regenerate :
                     {core::Regenerate::now, core::Regenerate::first_boot,
                      core::Regenerate::never}) {
                    core::PlanOptions options;
                    options.regenerate = regenerate;
                    // A planner reading a path the probe never looked at throws logic_error.
                    CHECK_NOTHROW(planner::plan(p, profile::to_yaml(p), facts, options, apps));
                    options.firstboot_config = "profile: " + p.name + "\n"; // --firstboot
                    CHECK_NOTHROW(planner::plan(p, profile::to_yaml(p), facts, options, apps));
                }
                core::TargetFacts live = target::probe(root, p, core::TargetMode::live);
                CHECK_NOTHROW(planner::plan(p, profile::to_yaml(p), live, {}, apps));
            }
    }
}

TEST_CASE("probed facts refuse a path the probe did not read, and know a missing one") {
    TempDir dir;
    fs::Root root(fixture_copy(dir, "debian13"));
    core::Profile p = builtin("x86-debian13", {"board.cpus=4"});
    core::TargetFacts facts = target::probe(root, p, core::TargetMode::offline);
    REQUIRE(facts.file(boot::k_grub_defaults));
    CHECK(facts.file(boot::k_grub_dropin) == nullptr); // looked at, not there
    CHECK_THROWS_AS(facts.file("/etc/unread.conf"), std::logic_error);
    // Facts made by hand (unit tests of the planners) are taken as they are.
    core::TargetFacts by_hand;
    CHECK(by_hand.file("/etc/unread.conf") == nullptr);
}

TEST_CASE("the probe reads every GRUB drop-in, and refuses a folder of more than 64") {
    TempDir dir;
    const std::string root_path = fixture_copy(dir, "debian13");
    const std::string dropins = root_path + boot::k_grub_dropin_dir;
    std::filesystem::create_directories(dropins);
    std::ofstream(dropins + "/50-cloud.cfg") << "GRUB_CMDLINE_LINUX=\"quiet\"\n";
    std::ofstream(dropins + "/README") << "not a drop-in\n";
    core::Profile p = builtin("x86-debian13", {"board.cpus=4"});
    {
        fs::Root root(root_path);
        core::TargetFacts facts = target::probe(root, p, core::TargetMode::offline);
        const std::string cloud = std::string(boot::k_grub_dropin_dir) + "/50-cloud.cfg";
        REQUIRE(facts.file(cloud));
        CHECK(facts.file(cloud)->content == "GRUB_CMDLINE_LINUX=\"quiet\"\n");
        CHECK_THROWS_AS(facts.file(std::string(boot::k_grub_dropin_dir) + "/README"),
                        std::logic_error);
    }
    for (int i = 0; i < 65; ++i)
        std::ofstream(dropins + "/x" + std::to_string(i) + ".cfg") << "\n";
    fs::Root root(root_path);
    std::string error;
    try {
        target::probe(root, p, core::TargetMode::offline);
    } catch (const Error& e) {
        error = e.what();
    }
    CHECK(error.find("more than the 64 rtprov reads") != std::string::npos);
}

TEST_CASE("the probe reads first boot's files and where systemctl would find its unit") {
    TempDir dir;
    const std::string root_path = fixture_copy(dir, "debian13");
    dir.write("debian13/usr/lib/systemd/system/rtprov-firstboot.service", "[Unit]\n");
    dir.write("debian13/etc/rtprov/firstboot.yaml", "profile: x86-debian13\n");
    std::filesystem::create_directories(root_path + "/etc/systemd/system");
    std::filesystem::create_symlink("/dev/null",
                                    root_path + "/etc/systemd/system/rtprov-firstboot.service");
    fs::Root root(root_path);
    core::Profile p = builtin("x86-debian13", {"board.cpus=4"});
    core::TargetFacts facts = target::probe(root, p, core::TargetMode::offline);
    REQUIRE(facts.file(core::k_firstboot_config_path));
    CHECK(facts.file(core::k_firstboot_config_path)->content == "profile: x86-debian13\n");
    CHECK(facts.file(systemd::firstboot_link()) == nullptr); // looked at, not there
    CHECK(facts.file("/usr/local/lib/systemd/system/rtprov-firstboot.service") == nullptr);
    REQUIRE(facts.file("/usr/lib/systemd/system/rtprov-firstboot.service"));
    // the mask as the link it is, not followed to /dev/null
    const core::FileState* mask = facts.file("/etc/systemd/system/rtprov-firstboot.service");
    REQUIRE(mask);
    CHECK(mask->symlink);
    CHECK(mask->content == "/dev/null");
}
