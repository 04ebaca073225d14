// SPDX-License-Identifier: Apache-2.0
#include "provisioner/audit/proc_text.hpp"

#include "tests/unit/audit_fixture.hpp"
#include "tests/unit/catch.hpp"

using namespace rtprov::audit;
using rtprov::core::SchedPolicy;

TEST_CASE("policy numbers map to the profile's names and to ps's classes") {
    CHECK(to_string(ThreadPolicy(SchedPolicy::rr)) == "rr");
    CHECK(ps_class(SchedPolicy::other) == "TS");
    CHECK(ps_class(SchedPolicy::fifo) == "FF");
    CHECK(ps_class(SchedPolicy::idle) == "IDL");
    CHECK(is_realtime(ThreadPolicy(SchedPolicy::deadline)));
    CHECK_FALSE(is_realtime(ThreadPolicy(SchedPolicy::batch)));
}

TEST_CASE("a policy number the kernel does not name reads as unknown") {
    auto stat = parse_stat("9 (odd) S 2 0 0 0 -1 2129984 0 0 0 0 0 0 0 0 20 0 1 0 10 0 0 0 0 "
                           "0 0 0 0 0 0 0 0 0 0 0 0 1 0 4\n");
    REQUIRE(stat);
    CHECK_FALSE(stat->policy);
    CHECK(to_string(stat->policy) == "unknown");
    CHECK(ps_class(stat->policy) == "?");
    CHECK_FALSE(is_realtime(stat->policy));
}

TEST_CASE("Cpus_allowed_list is read from a status file") {
    auto cpus = parse_cpus_allowed("Name:\tmpd\nCpus_allowed:\tc\nCpus_allowed_list:\t2-3\n");
    REQUIRE(cpus);
    CHECK(cpus->to_string() == "2-3");
    CHECK_FALSE(parse_cpus_allowed("Name:\tmpd\n"));
    CHECK_FALSE(parse_cpus_allowed("Cpus_allowed_list:\t3-1\n"));
}

TEST_CASE("limits give the soft and hard real-time priority and locked memory") {
    ProcessLimits limits = parse_limits(audit_fixture::limits_text("40", "unlimited"));
    REQUIRE(limits.rtprio);
    CHECK(limits.rtprio->soft == LimitValue{false, 40});
    CHECK(limits.rtprio->hard == LimitValue{false, 40});
    REQUIRE(limits.memlock);
    CHECK(limits.memlock->soft.unlimited);
    CHECK_FALSE(parse_limits("Limit Soft Hard Units\n").rtprio);
}

TEST_CASE("limit_memlock sizes are powers of 1024, and 'infinity' is unlimited") {
    CHECK(parse_memlock_setting("64M") == LimitValue{false, 64u << 20});
    CHECK(parse_memlock_setting("65536") == LimitValue{false, 65536});
    CHECK(parse_memlock_setting("infinity") == LimitValue{true, 0});
    CHECK_FALSE(parse_memlock_setting("lots"));
    CHECK_FALSE(parse_memlock_setting("M"));
    CHECK(bytes_text(LimitValue{false, 8388608}) == "8M");
    CHECK(bytes_text(LimitValue{false, 1000}) == "1000");
    CHECK(bytes_text(LimitValue{true, 0}) == "unlimited");
    CHECK(covers(LimitValue{true, 0}, LimitValue{true, 0}));
    CHECK_FALSE(covers(LimitValue{false, 1u << 30}, LimitValue{true, 0}));
    CHECK(covers(LimitValue{false, 41}, LimitValue{false, 40}));
}

TEST_CASE("interrupts give chip, hwirq and handlers for x86 and GIC lines") {
    const std::string text =
        "           CPU0       CPU1       CPU2       CPU3\n"
        "  0:         36          0          0          0   IO-APIC   2-edge      timer\n"
        " 11:      12345      23456      34567      45678     GICv2  30 Level     arch_timer\n"
        " 28:          0          1          0          0  PCI-MSIX-0000:00:01.0   0-edge      "
        "virtio0-config\n"
        " 55:          0          0          0          0  BRCM STB PCIe MSI 524288 Edge      "
        "xhci_hcd\n"
        " 60:          1          0          0          0  IO-APIC  16-fasteoi   ehci_hcd:usb1, "
        "uhci_hcd:usb2\n"
        "LOC:     123456     123456     123456     123456   Local timer interrupts\n"
        "ERR:          0\n";
    std::vector<InterruptLine> lines = parse_interrupts(text);
    REQUIRE(lines.size() == 5);
    CHECK(lines[0].irq == 0);
    CHECK(lines[0].chip == "IO-APIC");
    CHECK(lines[0].hwirq == 2u);
    CHECK(lines[0].name == "timer");
    CHECK(lines[0].counts == std::map<unsigned, std::uint64_t>{{0, 36}, {1, 0}, {2, 0}, {3, 0}});
    CHECK(lines[1].chip == "GICv2");
    CHECK(lines[1].hwirq == 30u);
    CHECK(lines[1].name == "arch_timer");
    CHECK(lines[2].name == "virtio0-config");
    CHECK(lines[3].name == "xhci_hcd");
    CHECK(lines[4].name == "ehci_hcd:usb1, uhci_hcd:usb2");
}

TEST_CASE("a cgroup path is in a unit when one of its components is the unit") {
    CHECK(cgroup_in_unit("/system.slice/mpd.service", "mpd.service"));
    CHECK(cgroup_in_unit("/rtprov.slice/mpd.service/payload", "mpd.service"));
    CHECK_FALSE(cgroup_in_unit("/system.slice/mpd.socket", "mpd.service"));
    CHECK_FALSE(cgroup_in_unit("/system.slice/xmpd.service", "mpd.service"));
    CHECK_FALSE(cgroup_in_unit("", "mpd.service"));
}

TEST_CASE("interrupt counts are keyed by the CPU the header names, offline CPUs skipped") {
    std::vector<InterruptLine> lines =
        parse_interrupts("           CPU0       CPU2\n"
                         " 36:          0    2276665 PCI-MSIX-0000:00:02.0   1-edge      "
                         "virtio1-req.0\n");
    REQUIRE(lines.size() == 1);
    CHECK(lines[0].counts == std::map<unsigned, std::uint64_t>{{0, 0}, {2, 2276665}});
    CHECK(lines[0].name == "virtio1-req.0");
}

TEST_CASE("a status file gives the effective uid and whether CAP_SYS_NICE is held") {
    const std::string status = "Name:\tmpd\nUid:\t0\t107\t107\t107\nGid:\t29\t29\t29\t29\n"
                               "CapEff:\t0000000000800000\n";
    CHECK(parse_status_uid(status) == 107u);
    CHECK(parse_status_has_cap(status, k_cap_sys_nice) == true);
    CHECK(parse_status_has_cap(status, 21) == false);
    CHECK(parse_status_has_cap("CapEff:\t000001ffffffffff\n", k_cap_sys_nice) == true);
    CHECK_FALSE(parse_status_uid("Name:\tx\n"));
    CHECK_FALSE(parse_status_uid("Uid:\t0\n"));
    CHECK_FALSE(parse_status_has_cap("CapEff:\tzz\n", k_cap_sys_nice));
}

TEST_CASE("timer_list gives, per CPU, high-resolution mode and whether the tick stops") {
    auto now = parse_timer_list(audit_fixture::timer_list_text(3));
    REQUIRE(now);
    CHECK(now->cpus == 3);
    CHECK(now->hres_shown == 3);
    CHECK(now->hres_active == 3);
    CHECK(now->nohz_shown == 3);
    CHECK(now->nohz_active == 3);
    // older kernels: '.nohz_mode' 0, 1 or 2
    auto old = parse_timer_list(audit_fixture::timer_list_text(2, true, false, true));
    REQUIRE(old);
    CHECK(old->nohz_shown == 2);
    CHECK(old->nohz_active == 0);
    // no CONFIG_HIGH_RES_TIMERS: no '.hres_active' line
    auto lowres = parse_timer_list(audit_fixture::timer_list_text(2, false));
    REQUIRE(lowres);
    CHECK(lowres->hres_shown == 0);
    CHECK_FALSE(parse_timer_list("Timer List Version: v0.10\n"));
}

TEST_CASE("mounts are read with their octal escapes undone") {
    const std::vector<Mount> mounts =
        parse_mounts("/dev/vda / ext4 rw,relatime 0 0\n"
                     "/dev/sdb1 /media/my\\040music\\134x fuseblk rw,user_id=0 0 0\nshort line\n");
    REQUIRE(mounts.size() == 2);
    CHECK(mounts[0].point == "/");
    CHECK(mounts[0].type == "ext4");
    CHECK(mounts[1].point == "/media/my music\\x");
    CHECK(mounts[1].type == "fuseblk");
    CHECK(mounts[1].options == "rw,user_id=0");
    CHECK(mounts[1].source == "/dev/sdb1");
}
