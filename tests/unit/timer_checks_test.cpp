// SPDX-License-Identifier: Apache-2.0
#include "provisioner/audit/timer_checks.hpp"

#include "tests/unit/audit_fixture.hpp"
#include "tests/unit/catch.hpp"

using namespace rtprov;
using namespace rtprov::audit;
using namespace audit_fixture;

namespace {

bool has(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

const char* k_config = "boot/config-6.12.117+deb13-amd64";

} // namespace

TEST_CASE("high-res-timers: active on every CPU is ok, in either timer_list format") {
    FakeSystem sys;
    Check c = check_high_res_timers(sys.view());
    CHECK(c.status == Status::ok);
    CHECK(c.reason ==
          "high-resolution mode is active on 4 of 4 CPUs ('.hres_active' in '/proc/timer_list')");
    sys.write("proc/timer_list", timer_list_text(2, true, true, true));
    CHECK(check_high_res_timers(sys.view()).status == Status::ok);
}

TEST_CASE("high-res-timers: a kernel without them, or with them off, warns with the fix") {
    FakeSystem sys;
    sys.write("proc/timer_list", timer_list_text(4, false));
    Check none = check_high_res_timers(sys.view());
    CHECK(none.status == Status::warn);
    CHECK(has(none.reason, "the running kernel has no high-resolution timers"));
    CHECK(has(none.fix, "CONFIG_HIGH_RES_TIMERS=y"));

    // highres=off: the lines are there, at 0
    std::string off = timer_list_text(4);
    for (std::size_t at = 0; (at = off.find(".hres_active    : 1", at)) != std::string::npos;)
        off.replace(at, 19, ".hres_active    : 0");
    sys.write("proc/timer_list", off);
    sys.write("proc/cmdline", k_cmdline + " highres=off\n");
    Check disabled = check_high_res_timers(sys.view());
    CHECK(disabled.status == Status::warn);
    CHECK(has(disabled.reason, "active on only 0 of 4 CPUs"));
    CHECK(has(disabled.reason, "the command line has highres=off"));
    CHECK(disabled.fix == "remove highres=off from the kernel command line and reboot");
    // without highres=off the cause is the clock event device, which no setting changes
    sys.write("proc/cmdline", k_cmdline + "\n");
    CHECK(has(check_high_res_timers(sys.view()).fix, "Clock Event Device"));
}

TEST_CASE("high-res-timers: without /proc/timer_list the running kernel's config decides, and "
          "with neither it cannot see") {
    FakeSystem sys;
    sys.remove("proc/timer_list");
    Check unseen = check_high_res_timers(sys.view());
    CHECK(unseen.status == Status::warn);
    CHECK(unseen.reason == "cannot read '/proc/timer_list': No such file or directory; cannot "
                           "read '/boot/config-6.12.117+deb13-amd64': No such file or directory");
    sys.write(k_config, "CONFIG_HIGH_RES_TIMERS=y\n");
    Check built = check_high_res_timers(sys.view());
    CHECK(built.status == Status::ok);
    CHECK(built.reason == "built in (CONFIG_HIGH_RES_TIMERS=y in "
                          "'/boot/config-6.12.117+deb13-amd64') and not turned off on the "
                          "command line; '/proc/timer_list' could not be read to see them active "
                          "(cannot read '/proc/timer_list': No such file or directory)");
    sys.write("proc/cmdline", k_cmdline + " highres=off\n");
    CHECK(check_high_res_timers(sys.view()).status == Status::warn);
    sys.write(k_config, "# CONFIG_HIGH_RES_TIMERS is not set\n");
    sys.write("proc/cmdline", k_cmdline + "\n");
    Check unset = check_high_res_timers(sys.view());
    CHECK(unset.status == Status::warn);
    CHECK(has(unset.reason, "does not set CONFIG_HIGH_RES_TIMERS"));
}

TEST_CASE("tickless: the tick stopping on idle CPUs is ok; a periodic tick warns") {
    FakeSystem sys;
    Check ok = check_tickless(sys.view());
    CHECK(ok.status == Status::ok);
    CHECK(ok.reason == "the tick stops on idle CPUs: 4 of 4 CPUs tickless ('.nohz' in "
                       "'/proc/timer_list'); nohz_full CPUs 2-3");
    sys.write("proc/timer_list", timer_list_text(4, true, true, true));
    CHECK(check_tickless(sys.view()).status == Status::ok);

    sys.write("proc/timer_list", timer_list_text(4, true, false, true));
    sys.write("proc/cmdline", k_cmdline + " nohz=off\n");
    Check off = check_tickless(sys.view());
    CHECK(off.status == Status::warn);
    CHECK(has(off.reason, "the tick stops on only 0 of 4 CPUs"));
    CHECK(off.fix == "remove nohz=off from the kernel command line and reboot");

    // a kernel that cannot stop the tick prints no tick state at all
    std::string periodic = timer_list_text(4, false, false);
    for (std::size_t at = 0;
         (at = periodic.find("  .nohz           : 0\n", at)) != std::string::npos;)
        periodic.erase(at, 22);
    sys.write("proc/timer_list", periodic);
    Check never = check_tickless(sys.view());
    CHECK(never.status == Status::warn);
    CHECK(has(never.reason, "only ticks periodically"));
    CHECK(has(never.fix, "CONFIG_NO_HZ_IDLE=y"));
}

TEST_CASE("tickless: without /proc/timer_list the config or the nohz_full file decides, and with "
          "neither it cannot see") {
    FakeSystem sys;
    sys.remove("proc/timer_list");
    sys.remove("sys/devices/system/cpu/nohz_full");
    Check unseen = check_tickless(sys.view());
    CHECK(unseen.status == Status::warn);
    CHECK(has(unseen.reason, "cannot read '/proc/timer_list'"));
    sys.write(k_config, "CONFIG_HZ_PERIODIC=y\n");
    Check periodic = check_tickless(sys.view());
    CHECK(periodic.status == Status::warn);
    CHECK(
        has(periodic.reason, "sets none of CONFIG_NO_HZ_IDLE, CONFIG_NO_HZ_FULL and CONFIG_NO_HZ"));
    sys.write(k_config, "CONFIG_NO_HZ_IDLE=y\n");
    CHECK(check_tickless(sys.view()).status == Status::ok);
    sys.remove(k_config);
    sys.write("sys/devices/system/cpu/nohz_full", "(null)\n");
    Check full = check_tickless(sys.view());
    CHECK(full.status == Status::ok);
    CHECK(has(full.reason, "there only with CONFIG_NO_HZ_FULL"));
}
