// SPDX-License-Identifier: Apache-2.0
#include "provisioner/profile/app_loader.hpp"

#include "provisioner/core/error.hpp"
#include "provisioner/core/grammar.hpp"
#include "tests/unit/catch.hpp"
#include "tests/unit/temp_dir.hpp"

#include <fstream>

using namespace rtprov;

namespace {

std::string load_error(const TempDir& dir) {
    try {
        profile::load_apps(dir.path());
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}

const std::string k_head = "apps:\n"
                           "  mpd:\n"
                           "    name: MPD\n"
                           "    units: [mpd.service]\n"
                           "    priority: 40\n";

} // namespace

TEST_CASE("the shipped app knowledge names MPD's real-time threads") {
    auto apps = profile::load_apps(std::string(RTPROV_SOURCE_DIR) + "/board-profiles/apps");
    const core::AppKnowledge* mpd = core::find_app(apps, "mpd", "");
    REQUIRE(mpd);
    CHECK(mpd->rt_threads == std::vector<std::string>{"rtio", "output:*"});
    const core::AppKnowledge* pipewire = core::find_app(apps, "pipewire", "");
    REQUIRE(pipewire);
    CHECK(pipewire->rt_threads.empty());
}

TEST_CASE("rt_threads is optional") {
    TempDir dir;
    dir.write("apps.yaml", k_head);
    auto apps = profile::load_apps(dir.path());
    REQUIRE(apps.size() == 1);
    CHECK(apps[0].rt_threads.empty());
}

TEST_CASE("rt_threads must be a list of non-empty names") {
    TempDir dir;
    const std::string file = dir.write("apps.yaml", k_head + "    rt_threads: rtio\n");
    // One name is a list of one, as in profiles.
    REQUIRE(profile::load_apps(dir.path()).size() == 1);
    CHECK(profile::load_apps(dir.path())[0].rt_threads == std::vector<std::string>{"rtio"});

    dir.write("apps.yaml", k_head + "    rt_threads: [rtio, \"\"]\n");
    CHECK(load_error(dir) ==
          file + ":6:24: app 'mpd': 'rt_threads' holds '': it must not be empty");

    dir.write("apps.yaml", k_head + "    rt_threads: [rtio, [a]]\n");
    CHECK(load_error(dir) == file + ":6:24: app 'mpd': 'rt_threads' must be a list of strings");
}

TEST_CASE("every problem of the app knowledge is reported at once, each at its place") {
    TempDir dir;
    const std::string file = dir.write(
        "apps.yaml", "apps:\n  mpd:\n    units: [mpd.service]\n    policy: other\n    colour: "
                     "blue\n  jack:\n    units: jack\n    priority: 100\nversion: 2\n");
    CHECK(load_error(dir) ==
          file + ":9:1: unknown key 'version'; known keys: apps\n" + file +
              ":5:5: app 'mpd': unknown key 'colour'; known keys: name, units, threads, policy, "
              "priority, highest_priority, rt_threads, alsa_period, alsa_buffer\n" +
              file + ":4:13: app 'mpd': 'policy' must be one of 'fifo', 'rr', not 'other'\n" +
              file +
              ":3:5: app 'mpd': needs 'priority', the lowest of its own real-time threads\n" +
              file + ":7:12: app 'jack': 'units' holds 'jack': " +
              core::grammar::service_unit("jack").value_or("?") + "\n" + file +
              ":8:15: app 'jack': 'priority' is 100, outside 1-99");
}

TEST_CASE("missing app knowledge is an error, not a silent empty list") {
    TempDir dir;
    const std::string start = "rtprov's knowledge of audio apps (which set their own real-time "
                              "priorities: MPD, PipeWire, JACK, ...) is missing: ";
    const std::string fix = "; reinstall rtprov, or build the 'rtprov_apps' target";
    CHECK(load_error(dir) == start + "'" + dir.path() + "' holds no *.yaml file" + fix);
    try {
        profile::load_apps(dir.path() + "/nope");
        FAIL("no error");
    } catch (const Error& e) {
        CHECK(std::string(e.what()) == start + "no folder '" + dir.path() + "/nope'" + fix);
    }
}

TEST_CASE("app knowledge is read with the same bounds as profiles") {
    TempDir dir;
    const std::string file = dir.write("apps.yaml", "apps:\n  mpd: &m {name: MPD}\n  b: *m\n");
    CHECK(load_error(dir) == file +
                                 ":2:8: anchors and aliases ('&name', '*name') are not used in "
                                 "rtprov's YAML; write the value out, or share it with 'extends:'");
    dir.write("apps.yaml", k_head + "    colour: blue\n");
    CHECK(load_error(dir) == file + ":6:5: app 'mpd': unknown key 'colour'; known keys: name, "
                                    "units, threads, policy, priority, highest_priority, "
                                    "rt_threads, alsa_period, alsa_buffer");
    dir.write("apps.yaml", k_head + "    priorty: 40\n");
    CHECK(load_error(dir) ==
          file + ":6:5: app 'mpd': unknown key 'priorty', did you mean 'priority'?");
    dir.write("apps.yaml", "apps:\n  mpd:\n    units: [mpd.service]\n");
    CHECK(load_error(dir) ==
          file + ":3:5: app 'mpd': needs 'priority', the lowest of its own real-time threads");
}

TEST_CASE("docs/profile-format.md lists exactly the keys of app knowledge, in order") {
    std::ifstream docs(std::string(RTPROV_SOURCE_DIR) + "/docs/profile-format.md");
    std::vector<std::string> documented;
    bool in_section = false;
    for (std::string line; std::getline(docs, line);) {
        if (line.starts_with("#"))
            in_section = line.starts_with("### App knowledge");
        else if (in_section && line.starts_with("| `"))
            documented.push_back(line.substr(3, line.find('`', 3) - 3));
    }
    CHECK(documented == profile::app_key_names());
}

TEST_CASE("a hostile app key is shown cut and escaped, however many problems it has") {
    TempDir dir;
    std::string yaml = "apps:\n  ? \"" + std::string(100000, 'm') + "\\nx\"\n  : \n";
    for (int i = 0; i < 300; ++i)
        yaml += "    k" + std::to_string(i) + ": 1\n";
    dir.write("apps.yaml", yaml);
    const std::string error = load_error(dir);
    CHECK(std::count(error.begin(), error.end(), '\n') == 100); // 100 problems, then the rest
    CHECK(error.size() < 100 * 400);
    CHECK(error.find("mmmm...': unknown key 'k0'") != std::string::npos);
    dir.write("apps.yaml", "apps:\n  mpd:\n    units: ~\n    priority: 40\n");
    CHECK(
        load_error(dir).ends_with(":3:5: app 'mpd': needs 'units', the systemd units that run it"));
}
