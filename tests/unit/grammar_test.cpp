// SPDX-License-Identifier: Apache-2.0
#include "provisioner/core/grammar.hpp"

#include "tests/unit/catch.hpp"

using namespace rtprov::core::grammar;

TEST_CASE("Debian package names follow Debian Policy 5.6.1") {
    CHECK_FALSE(debian_package("linux-image-rt-amd64"));
    CHECK_FALSE(debian_package("libstdc++6"));
    CHECK_FALSE(debian_package("g++-14"));
    for (const char* bad : {"", "a", "Linux", "-x", "a b", "a;b", "a\nb", "$(id)", "a/b"})
        CHECK(debian_package(bad));
}

TEST_CASE("service units are names systemd accepts, ending in .service") {
    CHECK_FALSE(service_unit("mpd.service"));
    CHECK_FALSE(service_unit("getty@tty1.service"));
    CHECK_FALSE(service_unit("foo@.service"));
    CHECK_FALSE(service_unit("a\\x2db.service"));
    for (const char* bad : {".service", "mpd", "mpd.socket", "../x.service", "a/b.service",
                            "a b.service", "a\nb.service", "a@b@c.service", "@x.service"})
        CHECK(service_unit(bad));
    CHECK(service_unit(std::string(250, 'a') + ".service"));
}

TEST_CASE("kernel parameters have a plain key and a value without shell syntax") {
    for (const char* good :
         {"quiet", "threadirqs", "isolcpus=managed_irq,domain,2-3", "console=ttyS0,115200n8",
          "usbcore.autosuspend=-1", "root=PARTUUID=6c586e13-02", "systemd.unit=multi-user.target"})
        CHECK_FALSE(kernel_parameter(good));
    for (const char* bad : {"", "=x", "a b", "x=\"a\"", "x=$(id)", "x=`id`", "x=a;b", "a)|*)",
                            "x=a'b", "x=[a]", "k y=1"})
        CHECK(kernel_parameter(bad));
}

TEST_CASE("file names, folders, governors, sizes and releases have their rules") {
    CHECK_FALSE(file_name("kernel8_rt.img"));
    CHECK(file_name(".."));
    CHECK(file_name("a/b"));
    CHECK_FALSE(absolute_folder("/boot/firmware"));
    CHECK_FALSE(absolute_folder("/boot/"));
    CHECK(absolute_folder("boot"));
    CHECK(absolute_folder("/boot/../etc"));
    CHECK(absolute_folder("//boot"));
    CHECK_FALSE(cpu_governor("performance"));
    CHECK(cpu_governor("performance; reboot"));
    CHECK_FALSE(memlock_size("infinity"));
    CHECK_FALSE(memlock_size("512M"));
    CHECK(memlock_size("512MB"));
    CHECK(memlock_size("infinity\nExecStart=x"));
    CHECK_FALSE(kernel_release("6.12.117+deb13-amd64"));
    CHECK_FALSE(kernel_release("6.18.39+rpt-rpi-v8"));
    CHECK(kernel_release("6.1;reboot"));
    CHECK_FALSE(profile_name("x86-debian13"));
    CHECK(profile_name("my profile"));
    CHECK_FALSE(service_key("shairport-sync"));
    CHECK(service_key("mpd\nx"));
    CHECK_FALSE(text_line("Raspberry Pi 4 Model B*"));
    CHECK(text_line("a\nb"));
    CHECK(text_line("\x1b]0;title\x07"));
}
