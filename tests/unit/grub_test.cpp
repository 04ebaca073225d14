// SPDX-License-Identifier: Apache-2.0
#include "provisioner/boot/grub.hpp"

#include "tests/unit/catch.hpp"
#include "tests/unit/temp_dir.hpp"

#include <cstdlib>

using namespace rtprov::boot;

namespace {

// Sources the drop-in with sh after 'before' and prints the two variables.
std::string source_with_sh(const std::string& dropin, const std::string& before) {
    TempDir dir;
    dir.write("dropin.cfg", dropin);
    dir.write("run.sh", before + "\n. " + dir.path() +
                            "/dropin.cfg\nprintf '%s|%s' "
                            "\"$GRUB_CMDLINE_LINUX_DEFAULT\" "
                            "\"$GRUB_TOP_LEVEL\" > " +
                            dir.path() + "/out\n");
    REQUIRE(std::system(("sh -n " + dir.path() + "/dropin.cfg").c_str()) == 0);
    REQUIRE(std::system(("sh " + dir.path() + "/run.sh").c_str()) == 0);
    return dir.read("out");
}

} // namespace

TEST_CASE("the GRUB drop-in appends to GRUB_CMDLINE_LINUX_DEFAULT and replaces rtprov's keys") {
    std::string dropin = render_grub_dropin(
        "x86", {{"isolcpus", "domain,2-3", false}, {"nohz_full", "2-3", false}}, std::nullopt);
    CHECK(dropin.rfind("# Written by rtprov from profile 'x86'. Do not edit", 0) == 0);
    CHECK(source_with_sh(dropin, "GRUB_CMDLINE_LINUX_DEFAULT='quiet isolcpus=1 a=*'") ==
          "quiet a=* isolcpus=domain,2-3 nohz_full=2-3|");
    CHECK(source_with_sh(dropin, "GRUB_CMDLINE_LINUX_DEFAULT=''") ==
          "isolcpus=domain,2-3 nohz_full=2-3|");
    // A key rtprov does not set now keeps the value it has (rcu_nocbs=1 here).
    CHECK(source_with_sh(dropin, "GRUB_CMDLINE_LINUX_DEFAULT='rcu_nocbs=1 nohz_full=1'") ==
          "rcu_nocbs=1 isolcpus=domain,2-3 nohz_full=2-3|");
}

TEST_CASE("the GRUB drop-in makes the newest RT kernel the top-level entry") {
    TempDir boot;
    std::string dropin = render_grub_dropin("x86", {}, std::string("rt-amd64"));
    // The drop-in looks in /boot; the same code run against a temp folder:
    std::string local = dropin;
    for (std::size_t at; (at = local.find("/boot/")) != std::string::npos;)
        local.replace(at, 6, boot.path() + "/");
    boot.write("vmlinuz-6.12.117+deb13-rt-amd64", "");
    boot.write("vmlinuz-6.12.118+deb13-rt-amd64", "");
    boot.write("vmlinuz-6.12.118+deb13-amd64", "");
    CHECK(source_with_sh(local, "GRUB_CMDLINE_LINUX_DEFAULT=quiet") ==
          "quiet|" + boot.path() + "/vmlinuz-6.12.118+deb13-rt-amd64");
}

TEST_CASE("shell assignments are found in the forms a hand writes them") {
    const std::string text = "GRUB_DEFAULT=0\nGRUB_CMDLINE_LINUX_DEFAULT=\"quiet\"\n"
                             "  GRUB_CMDLINE_LINUX_DEFAULT='quiet isolcpus=1'\n"
                             "export GRUB_CMDLINE_LINUX=\"nohz_full=1\" # keep it\n"
                             "A=1; GRUB_CMDLINE_LINUX=\"$GRUB_CMDLINE_LINUX isolcpus=2\"\n"
                             "if true; then GRUB_CMDLINE_LINUX=x\\ y; fi\n"
                             "# GRUB_CMDLINE_LINUX=\"commented\"\n"
                             "MY_GRUB_CMDLINE_LINUX=\"not it\"\n"
                             "GRUB_CMDLINE_LINUX=\"$(cat /etc/x)\"\n";
    auto defaults = shell_assignments(text, "GRUB_CMDLINE_LINUX_DEFAULT");
    REQUIRE(defaults.size() == 2);
    CHECK(defaults[1].value == "quiet isolcpus=1");
    CHECK(defaults[1].line == 3);
    auto linux = shell_assignments(text, "GRUB_CMDLINE_LINUX");
    REQUIRE(linux.size() == 4);
    CHECK(linux[0].value == "nohz_full=1");
    CHECK(linux[1].value == " isolcpus=2");
    CHECK_FALSE(linux[1].opaque);
    CHECK(linux[2].value == "x y");
    CHECK(linux[3].opaque);
    CHECK(linux[3].line == 9);
}

TEST_CASE("the GRUB drop-in quotes every value it writes into shell text") {
    // rtprov's grammar keeps quotes and shell syntax out of parameters; the quoting holds
    // even for a value that got past it.
    TempDir dir;
    const std::string marker = dir.path() + "/pwned";
    std::string dropin = render_grub_dropin(
        "x86", {{"a'b", "$(touch " + marker + ")", false}, {"isolcpus", "3", false}},
        std::string("rt'$(touch " + marker + ")"));
    CHECK(source_with_sh(dropin, "GRUB_CMDLINE_LINUX_DEFAULT='quiet a'\\''b=1'") ==
          "quiet a'b=$(touch " + marker + ") isolcpus=3|");
    CHECK_FALSE(dir.exists("pwned"));
}
