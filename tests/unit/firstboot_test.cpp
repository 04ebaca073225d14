// SPDX-License-Identifier: Apache-2.0
#include "provisioner/core/error.hpp"
#include "provisioner/profile/firstboot_config.hpp"
#include "provisioner/profile/profile_loader.hpp"
#include "provisioner/target/firstboot_state.hpp"
#include "tests/unit/catch.hpp"
#include "tests/unit/temp_dir.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

using namespace rtprov;

TEST_CASE("the first-boot config reads every key and keeps defaults for the others") {
    auto config = profile::parse_firstboot_config(
        "profile: x86-debian13\nset: [\"board.cpus=4\", tuning.selftest.duration_s=5]\n"
        "reboot: false\nselftest_s: 3\n",
        "firstboot.yaml");
    CHECK(config.profile == "x86-debian13");
    CHECK(config.sets == std::vector<std::string>{"board.cpus=4", "tuning.selftest.duration_s=5"});
    CHECK_FALSE(config.reboot);
    CHECK(config.selftest_s == 3);
    CHECK(config.pi_probe_s == 2);
    CHECK_FALSE(config.install_packages);
    CHECK(profile::parse_firstboot_config("", "f").reboot); // an empty file: all defaults
}

TEST_CASE("the first-boot config names the file, line and column of a bad key or value") {
    auto error = [](const std::string& text) {
        try {
            profile::parse_firstboot_config(text, "/etc/rtprov/firstboot.yaml");
        } catch (const Error& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    CHECK(error("profile: pi4\nreboots: true\n") ==
          "/etc/rtprov/firstboot.yaml:2:1: unknown key 'reboots', did you mean 'reboot'?");
    CHECK(error("frobnicate: 1\n") ==
          "/etc/rtprov/firstboot.yaml:1:1: unknown key 'frobnicate'; known keys: profile, set, "
          "install_packages, reboot, trial, selftest_s, pi_probe_s");
    CHECK(error("reboot: maybe\n") ==
          "/etc/rtprov/firstboot.yaml:1:9: 'reboot' must be true or false, not 'maybe'");
    CHECK(error("selftest_s: 99999\n") ==
          "/etc/rtprov/firstboot.yaml:1:13: 'selftest_s' is 99999, outside 0-3600");
    CHECK(error("set: {a: 1}\n") ==
          "/etc/rtprov/firstboot.yaml:1:6: 'set' must be a list of strings");
    // Every problem at once, in file order.
    CHECK(error("reboot: maybe\nselftst_s: 3\npi_probe_s: -1\n") ==
          "/etc/rtprov/firstboot.yaml:2:1: unknown key 'selftst_s', did you mean 'selftest_s'?\n"
          "/etc/rtprov/firstboot.yaml:1:9: 'reboot' must be true or false, not 'maybe'\n"
          "/etc/rtprov/firstboot.yaml:3:13: 'pi_probe_s' is -1, outside 0-3600");
    // An empty profile is the default: detect the board.
    CHECK(profile::parse_firstboot_config("profile: \"\"\n", "f").profile.empty());
    // One KEY=VALUE is a list of one, as in profiles.
    CHECK(profile::parse_firstboot_config("set: board.cpus=4\n", "f").sets ==
          std::vector<std::string>{"board.cpus=4"});
}

TEST_CASE("the first-boot state survives a round trip and keeps messages on one line") {
    target::FirstbootState s;
    s.phase = "done";
    s.profile = "x86-debian13";
    s.reboots = 1;
    s.reboot_cause = "the running kernel lacks isolcpus=managed_irq,domain,2-3";
    s.cmdline = "ok";
    s.selftest = "passed";
    s.audit = "passed";
    s.updated_at = "2026-11-30T01:00:00Z";
    CHECK(target::parse_firstboot_state(target::format_firstboot_state(s), "state") == s);
    s.reason = "line one\nline two";
    auto back = target::parse_firstboot_state(target::format_firstboot_state(s), "state");
    CHECK(back.reason == "line one line two");
}

TEST_CASE("a damaged first-boot state is refused with the line and the way out") {
    try {
        target::parse_firstboot_state("phase=done\nreboots=two\n",
                                      "/var/lib/rtprov/firstboot/state");
        FAIL("no error");
    } catch (const Error& e) {
        CHECK(std::string(e.what()) ==
              "/var/lib/rtprov/firstboot/state:2: 'reboots' must be a number, found 'two'; the "
              "first-boot state is damaged: remove it to run first boot again ('rm "
              "/var/lib/rtprov/firstboot/state'), or fix the line");
    }
    // in an image whose root is named so, the command to paste quotes it as a shell would
    CHECK_THROWS_WITH(target::parse_firstboot_state("phase=sleeping\n", "/img/it's $(id)/state"),
                      Catch::Matchers::EndsWith("('rm '/img/it'\\''s $(id)/state''), or fix the "
                                                "line"));
    CHECK_THROWS_AS(target::parse_firstboot_state("phase=sleeping\n", "s"), Error);
    CHECK_THROWS_AS(target::parse_firstboot_state("colour=blue\n", "s"), Error);
}

TEST_CASE("first boot reboots once for missing parameters and never a second time") {
    target::FirstbootState fresh;
    auto first = target::decide_reboot(fresh, "isolcpus=managed_irq,domain,2-3", true);
    CHECK(first.reboot);
    target::FirstbootState after = fresh;
    after.reboots = 1;
    auto second = target::decide_reboot(after, "isolcpus=managed_irq,domain,2-3", true);
    CHECK_FALSE(second.reboot);
    CHECK(second.cmdline.starts_with(
        "still missing after the reboot: isolcpus=managed_irq,domain,2-3"));
    CHECK(target::decide_reboot(after, "", true).cmdline == "ok");
    CHECK_FALSE(target::decide_reboot(fresh, "", true).reboot);
    auto not_allowed = target::decide_reboot(fresh, "nohz_full=2-3", false);
    CHECK_FALSE(not_allowed.reboot);
    CHECK(not_allowed.cmdline ==
          "missing until the next reboot (reboot: false in /etc/rtprov/firstboot.yaml): "
          "nohz_full=2-3");
}

TEST_CASE("a trial first boot armed is kept only when first boot reboots into it") {
    target::FirstbootState fresh;
    CHECK(target::decide_reboot(fresh, "isolcpus=2-3", true).untried.empty());
    CHECK(target::decide_reboot(fresh, "", true).untried ==
          "nothing needed a reboot: the running kernel has what the profile plans");
    CHECK(target::decide_reboot(fresh, "isolcpus=2-3", false).untried ==
          "first boot does not reboot (reboot: false in /etc/rtprov/firstboot.yaml)");
    target::FirstbootState after = fresh;
    after.reboots = 1;
    CHECK(target::decide_reboot(after, "isolcpus=2-3", true).untried ==
          "first boot rebooted once already");
}

TEST_CASE("the first-boot state is written under the root and read back") {
    TempDir dir;
    fs::Root root(dir.path());
    CHECK_FALSE(target::read_firstboot_state(root));
    target::FirstbootState s;
    s.phase = "rebooting";
    s.reboots = 1;
    target::write_firstboot_state(root, s);
    auto back = target::read_firstboot_state(root);
    REQUIRE(back);
    CHECK(back->phase == "rebooting");
    CHECK(back->reboots == 1);
    CHECK_FALSE(root.exists(target::k_firstboot_done)); // the unit runs again after the reboot
    s.phase = "done";
    target::write_firstboot_state(root, s);
    CHECK(root.exists(target::k_firstboot_done));
}

TEST_CASE("the first-boot config is read with the same bounds as profiles") {
    try {
        profile::parse_firstboot_config(",", "/etc/rtprov/firstboot.yaml");
        FAIL("no error");
    } catch (const Error& e) {
        CHECK(std::string(e.what()) == "/etc/rtprov/firstboot.yaml:1:1: unexpected ',': this is "
                                       "not YAML that rtprov can read");
    }
    CHECK_THROWS_AS(profile::parse_firstboot_config("set: &s [a]\nx: *s\n", "f"), Error);
}

TEST_CASE("docs/firstboot.md shows exactly the keys of firstboot.yaml, in order") {
    std::ifstream docs(std::string(RTPROV_SOURCE_DIR) + "/docs/firstboot.md");
    std::vector<std::string> documented;
    bool in_example = false, seen = false;
    for (std::string line; std::getline(docs, line);) {
        if (line == "```yaml" && !seen)
            in_example = seen = true;
        else if (line == "```")
            in_example = false;
        else if (in_example && !line.empty() && line[0] != ' ' && line.find(':') != line.npos)
            documented.push_back(line.substr(0, line.find(':')));
    }
    CHECK(documented == profile::firstboot_key_names());
}

TEST_CASE("the example firstboot.yaml the package ships is accepted and shows every key") {
    // firstboot/firstboot.yaml, installed as /usr/share/doc/rtprov/examples/firstboot.yaml
    // (tests/system/package_test.sh checks that the package has these bytes).
    const std::string path = std::string(RTPROV_SOURCE_DIR) + "/firstboot/firstboot.yaml";
    std::ifstream file(path);
    REQUIRE(file);
    std::stringstream text;
    text << file.rdbuf();
    auto config = profile::parse_firstboot_config(text.str(), path);
    CHECK(config.profile == "x86-debian13");
    CHECK(config.sets == std::vector<std::string>{"tuning.services.mpd.limit_rtprio=50"});
    // Its comment says the other values shown are the defaults.
    const profile::FirstbootConfig defaults;
    CHECK(config.install_packages == defaults.install_packages);
    CHECK(config.reboot == defaults.reboot);
    CHECK(config.trial == defaults.trial);
    CHECK(config.selftest_s == defaults.selftest_s);
    CHECK(config.pi_probe_s == defaults.pi_probe_s);
    // Every key, in the order docs/firstboot.md lists them.
    text.clear();
    text.seekg(0);
    std::vector<std::string> shown;
    for (std::string line; std::getline(text, line);)
        if (!line.empty() && line[0] != '#' && line[0] != ' ' && line.find(':') != line.npos)
            shown.push_back(line.substr(0, line.find(':')));
    CHECK(shown == profile::firstboot_key_names());
    // Its override is one the profile it names takes, as first boot's apply would.
    std::vector<profile::Override> overrides;
    for (const std::string& set : config.sets)
        overrides.push_back({set});
    core::Profile p = profile::load_profile(
        config.profile, {{std::string(RTPROV_SOURCE_DIR) + "/board-profiles", "built-in"}},
        overrides);
    auto mpd = std::find_if(p.tuning.services.begin(), p.tuning.services.end(),
                            [](const core::ServiceTuning& s) { return s.name == "mpd"; });
    REQUIRE(mpd != p.tuning.services.end());
    CHECK(mpd->limit_rtprio == 50);
}

TEST_CASE("firstboot.yaml as rtprov writes it reads back as the same config, header kept") {
    profile::FirstbootConfig config;
    config.profile = "pi4";
    config.sets = {"tuning.cores.reserved=2-3", "board.cpus=4"};
    config.install_packages = true;
    config.reboot = false;
    config.trial = false;
    config.selftest_s = 3600;
    config.pi_probe_s = 0;
    const std::string text = profile::write_firstboot_config(config, "# header\n# two\n");
    CHECK(text == "# header\n# two\n"
                  "profile: pi4\n"
                  "set: [tuning.cores.reserved=2-3, board.cpus=4]\n"
                  "install_packages: true\n"
                  "reboot: false\n"
                  "trial: false\n"
                  "selftest_s: 3600\n"
                  "pi_probe_s: 0\n");
    CHECK(profile::parse_firstboot_config(text, "f") == config);
    // The defaults, and no overrides at all, are written out too: the file says what first
    // boot does.
    const profile::FirstbootConfig defaults;
    const std::string plain = profile::write_firstboot_config(defaults, "");
    CHECK(plain.find("set: []\n") != std::string::npos);
    CHECK(plain.find("trial: true\n") != std::string::npos);
    CHECK(profile::parse_firstboot_config(plain, "f") == defaults);
}

TEST_CASE("firstboot.yaml keeps a hostile override or profile name byte for byte") {
    // Each a value apply --set or --profile may be given: YAML syntax, words YAML reads
    // as something else, quotes, escapes, control characters, a line break.
    const std::vector<std::string> hostile = {"description=a: b",
                                              "description='q'",
                                              "description=\"d\"",
                                              "description=x # y",
                                              "a=[1, 2]",
                                              "a={k: v}",
                                              "- a",
                                              "a=-",
                                              "null",
                                              "~",
                                              "true",
                                              "yes",
                                              "a=\\c",
                                              "a=\ttab",
                                              "line1\nline2",
                                              " lead",
                                              "trail ",
                                              "*alias",
                                              "&anchor",
                                              "!tag",
                                              "%x",
                                              "@x",
                                              "`x",
                                              ",",
                                              "a=ü",
                                              "a=\x7f",
                                              "a=\x01\x1b[2J",
                                              "a=\"\\\"'",
                                              "#",
                                              "a=''",
                                              "? x",
                                              "a=\r\n",
                                              "a=x\n\n"};
    for (const std::string& value : hostile) {
        INFO("value: " << value);
        profile::FirstbootConfig config;
        config.profile = value;
        config.sets = {value, "b=1"};
        const std::string text = profile::write_firstboot_config(config, "# h\n");
        INFO(text);
        profile::FirstbootConfig back;
        REQUIRE_NOTHROW(back = profile::parse_firstboot_config(text, "f"));
        CHECK(back.profile == value);
        CHECK(back.sets == config.sets);
    }
}

TEST_CASE("--firstboot-set sets first boot's own keys as the file's reader reads them") {
    profile::FirstbootConfig config;
    profile::set_firstboot_keys(config, {"reboot=false", "trial=false", "selftest_s=10",
                                         "pi_probe_s=0", "install_packages=true", "trial=true"});
    CHECK_FALSE(config.reboot);
    CHECK(config.trial); // the last one given wins
    CHECK(config.selftest_s == 10);
    CHECK(config.pi_probe_s == 0);
    CHECK(config.install_packages);
    profile::FirstbootConfig untouched;
    profile::set_firstboot_keys(untouched, {});
    CHECK(untouched == profile::FirstbootConfig{});
}

TEST_CASE("--firstboot-set refuses the apply's own keys and wrong ones, each by its option") {
    auto error = [](const std::vector<std::string>& settings) {
        profile::FirstbootConfig config;
        try {
            profile::set_firstboot_keys(config, settings);
        } catch (const Error& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    CHECK(error({"reboots=false"}) ==
          "--firstboot-set 'reboots=false': unknown key 'reboots', did you mean 'reboot'?");
    CHECK(error({"x=1"}) == "--firstboot-set 'x=1': unknown key 'x'; known keys: "
                            "install_packages, reboot, trial, selftest_s, pi_probe_s");
    CHECK(error({"profile=pi4"}) ==
          "--firstboot-set 'profile=pi4': 'profile' of firstboot.yaml is what the apply itself "
          "is given: use --profile instead");
    CHECK(error({"set=a=b"}) == "--firstboot-set 'set=a=b': 'set' of firstboot.yaml is what "
                                "the apply itself is given: use --set instead");
    CHECK(error({"reboot"}) == "--firstboot-set 'reboot': expected KEY=VALUE, e.g. 'reboot=false'");
    CHECK(error({"reboot=maybe", "selftest_s=4000"}) ==
          "--firstboot-set 'reboot=maybe': 'reboot' must be true or false, not 'maybe'\n"
          "--firstboot-set 'selftest_s=4000': 'selftest_s' is 4000, outside 0-3600");
    CHECK(error({"trial="}) == "--firstboot-set 'trial=': 'trial' must be true or false");
    CHECK(error({"trial=[a"}).starts_with("--firstboot-set 'trial=[a': value is not valid YAML: "));
}

TEST_CASE("firstboot.yaml is not written with a value first boot could not read back") {
    profile::FirstbootConfig config;
    config.profile = "a\xff"; // a profile file so named may exist; YAML is UTF-8 text
    try {
        profile::write_firstboot_config(config, "");
        FAIL("no error");
    } catch (const Error& e) {
        CHECK(std::string(e.what()) ==
              "cannot write first boot's configuration for profile 'a\\xff' as YAML it reads "
              "back: firstboot.yaml as written:1:11: a byte that is not UTF-8 (0xFF); YAML is "
              "UTF-8 text: write it as UTF-8");
    }
}
