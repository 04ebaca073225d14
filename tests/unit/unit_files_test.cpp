// SPDX-License-Identifier: Apache-2.0
#include "provisioner/system/unit_files.hpp"

#include "tests/unit/catch.hpp"
#include "tests/unit/temp_dir.hpp"

#include <sys/stat.h>

using namespace rtprov::system;

TEST_CASE("unit text: the [Service] settings, the last assignment winning, an empty one "
          "resetting") {
    std::map<std::string, UnitSetting> settings;
    apply_unit_text("[Unit]\nUser=unit-section\n[Service]\n# User=commented\n; User=too\n"
                    "User = mpd\nLimitRTPRIO=10\nLimitRTPRIO=40\nExecStart=/usr/bin/mpd \\\n"
                    "  --systemd\nLimitMEMLOCK=64M\nLimitMEMLOCK=\n[Install]\nUser=install\n",
                    "/lib/systemd/system/mpd.service", settings);
    CHECK(settings.at("User").value == "mpd");
    CHECK(settings.at("User").where == "/lib/systemd/system/mpd.service:6");
    CHECK(settings.at("LimitRTPRIO").value == "40");
    CHECK(settings.at("LimitRTPRIO").where == "/lib/systemd/system/mpd.service:8");
    CHECK(settings.at("ExecStart").value == "/usr/bin/mpd  --systemd");
    CHECK_FALSE(settings.count("LimitMEMLOCK"));
}

TEST_CASE("a unit is read from the first folder of the search path, then every drop-in by "
          "name") {
    TempDir dir;
    const SysRoot root(dir.path());
    Fact<UnitFile> none = read_unit_file(root, "mpd.service");
    CHECK_FALSE(none);
    CHECK(none.absent);
    dir.write("lib/systemd/system/mpd.service", "[Service]\nLimitRTPRIO=40\nUser=root\n");
    dir.write("etc/systemd/system/mpd.service", "[Service]\nUser=mpd\n");
    dir.write("usr/lib/systemd/system/mpd.service.d/50-vendor.conf", "[Service]\nLimitRTPRIO=20\n");
    dir.write("etc/systemd/system/mpd.service.d/50-vendor.conf", "[Service]\nLimitRTPRIO=30\n");
    dir.write("etc/systemd/system/mpd.service.d/60-rtprov.conf", "[Service]\nLimitRTPRIO=45\n");
    dir.write("run/systemd/system/mpd.service.d/10-early.conf", "[Service]\nUser=early\n");
    dir.write("etc/systemd/system/mpd.service.d/README", "[Service]\nUser=ignored\n");
    Fact<UnitFile> unit = read_unit_file(root, "mpd.service");
    REQUIRE(unit);
    // /etc hides /lib's unit file; its own 50-vendor.conf hides /usr/lib's
    CHECK(unit->path == "/etc/systemd/system/mpd.service");
    CHECK(unit->dropins ==
          std::vector<std::string>{"/run/systemd/system/mpd.service.d/10-early.conf",
                                   "/etc/systemd/system/mpd.service.d/50-vendor.conf",
                                   "/etc/systemd/system/mpd.service.d/60-rtprov.conf"});
    CHECK(unit->service.at("User").value == "early");
    CHECK(unit->service.at("LimitRTPRIO").value == "45");
    CHECK(unit->service.at("LimitRTPRIO").where ==
          "/etc/systemd/system/mpd.service.d/60-rtprov.conf:2");
}

TEST_CASE("a unit file that is there but cannot be read is a problem, not a unit without "
          "settings") {
    TempDir dir;
    dir.write("etc/systemd/system/mpd.service.d/.keep", "");
    const std::string fifo = dir.path() + "/etc/systemd/system/mpd.service.d/60-rtprov.conf";
    REQUIRE(::mkfifo(fifo.c_str(), 0644) == 0);
    Fact<UnitFile> unit = read_unit_file(SysRoot(dir.path()), "mpd.service");
    CHECK_FALSE(unit);
    CHECK_FALSE(unit.absent);
    CHECK(unit.problem.find("60-rtprov.conf") != std::string::npos);
}
