// SPDX-License-Identifier: Apache-2.0
#include "provisioner/audit/user_checks.hpp"

#include "tests/unit/audit_fixture.hpp"
#include "tests/unit/catch.hpp"

#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <filesystem>

using namespace rtprov;
using namespace rtprov::audit;
using namespace audit_fixture;

namespace {

bool has(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

// The fixture with 'members' in group audio (gid 29).
void audio_members(const FakeSystem& sys, const std::string& members) {
    sys.write("etc/group", "root:x:0:\naudio:x:29:" + members + "\n");
}

const char* k_passwd = "root:x:0:0:root:/root:/bin/bash\n"
                       "mpd:x:107:29::/var/lib/mpd:/usr/sbin/nologin\n"
                       "alice:x:1000:1000:Alice:/home/alice:/bin/bash\n";

using CheckFn = Check (*)(const SystemView&, const AudioUsers&);

// Runs 'check' on the fixture, as run_audit does, with the units 'units' read and the
// expectation 'e' (nullptr: no profile).
Check run(CheckFn check, const FakeSystem& sys, const Expectation* e = nullptr,
          const std::vector<std::string>& units = {}) {
    const SystemView v = read_system_view(sys.dir.path(), units);
    return check(v, audio_users(v, e));
}

Expectation with_mpd() {
    Expectation e;
    e.profile_name = "box";
    ServiceExpectation s;
    s.unit = "mpd.service";
    s.profile_key = "mpd";
    s.app_name = "MPD";
    s.app_threads = "rtio and output:* threads";
    s.app_sched = ThreadSched{core::SchedPolicy::fifo, 40};
    s.min_rtprio = 40;
    e.services.push_back(s);
    return e;
}

} // namespace

TEST_CASE("the users' checks say when nobody who runs audio was found, and what was judged") {
    FakeSystem sys;
    for (CheckFn check : {CheckFn(check_rt_priority), CheckFn(check_audio_group_limits),
                          CheckFn(check_cpu_dma_latency_access)}) {
        Check c = run(check, sys);
        INFO(c.id);
        CHECK(c.status == Status::warn);
        CHECK(c.reason == "no user who runs audio was found (group audio has no member and "
                          "/etc/passwd no regular user (uid 1000-60000 with a login shell)), so "
                          "nobody was judged");
        CHECK(has(c.fix, "usermod -aG audio USER"));
    }
    // no /etc/group: who is in it cannot be known
    sys.remove("etc/group");
    Check unseen = run(check_audio_group_limits, sys);
    CHECK(unseen.status == Status::warn);
    CHECK(unseen.reason == "cannot read '/etc/group': No such file or directory");
}

TEST_CASE("audio-group-limits: what pam_limits gives each member, soft capped by hard") {
    FakeSystem sys;
    audio_members(sys, "alice,bob");
    Check bare = run(check_audio_group_limits, sys);
    CHECK(bare.status == Status::warn);
    CHECK(has(bare.reason, "the members of group audio: 'alice', 'bob'; but rtprio is 0 for "
                           "'alice' (soft 0, hard 0: no rule (the kernel's default))"));
    CHECK(has(bare.reason, "memlock is the kernel's default for 'alice'"));
    CHECK(bare.fix.starts_with("let group audio run real-time"));
    CHECK(has(bare.fix, "@audio - rtprio 95"));

    sys.write("etc/security/limits.conf", "# defaults\n*  -  memlock  unlimited\n");
    sys.write("etc/security/limits.d/95-audio.conf",
              "@audio   -   RTPRIO   95  # JACK\n@audio hard memlock 64\n");
    sys.write("etc/security/limits.d/99-ignored.txt", "@audio - rtprio 0\n");
    sys.write("etc/security/limits.d/.hidden.conf", "@audio - rtprio 0\n");
    Check capped = run(check_audio_group_limits, sys);
    INFO(capped.reason);
    // the group's hard 64 KiB outranks '*'s unlimited, and caps the soft one
    CHECK(capped.status == Status::warn);
    CHECK(has(capped.reason, "memlock is 64 KiB for 'alice' ('* - memlock unlimited' "
                             "(/etc/security/limits.conf:2) and '@audio hard memlock 64' "
                             "(/etc/security/limits.d/95-audio.conf:2))"));
    CHECK_FALSE(has(capped.reason, "rtprio is 0"));

    sys.write("etc/security/limits.d/95-audio.conf",
              "@audio - rtprio 95\n@audio - memlock UNLIMITED\n");
    Check good = run(check_audio_group_limits, sys);
    CHECK(good.status == Status::ok);
    CHECK(has(good.reason, "rtprio 95 by '@audio - rtprio 95' "
                           "(/etc/security/limits.d/95-audio.conf:1)"));

    // a user's own rule outranks the group's, wherever it is
    sys.write("etc/security/limits.d/10-alice.conf", "alice - rtprio 0\n");
    Check user = run(check_audio_group_limits, sys);
    CHECK(user.status == Status::warn);
    CHECK(has(user.reason, "rtprio is 0 for 'alice'"));
    sys.remove("etc/security/limits.d/10-alice.conf");

    // a soft rule alone cannot lift the kernel's hard 0; a value pam drops sets nothing
    sys.write("etc/security/limits.d/95-audio.conf",
              "@audio soft rtprio 95\n@audio - rtprio abc\n@audio - memlock unlimited\n");
    Check soft = run(check_audio_group_limits, sys);
    CHECK(soft.status == Status::warn);
    CHECK(has(soft.reason, "rtprio is 0 for 'alice' (soft 95, hard 0"));
}

TEST_CASE("audio-group-limits: a member by primary group counts, and regular users outside "
          "group audio are told to join it") {
    FakeSystem sys;
    sys.write("etc/passwd", k_passwd);
    sys.write("etc/security/limits.d/95-audio.conf", "@audio - rtprio 95\n@audio - memlock "
                                                     "unlimited\n");
    // dj's primary group is audio: the rules for @audio are theirs; mpd's is too, but it
    // is a service's account that never logs in
    sys.write("etc/passwd", std::string(k_passwd) + "dj:x:1003:29::/home/dj:/bin/bash\n");
    Check primary = run(check_audio_group_limits, sys);
    CHECK(primary.status == Status::ok);
    CHECK(has(primary.reason, "the members of group audio who can log in ('mpd' has no login "
                              "shell: a service's account): 'dj'; each with rtprio 95"));
    // nobody in group audio: the regular user is judged, and the fix adds them first
    sys.write("etc/passwd", "root:x:0:0:root:/root:/bin/bash\n"
                            "alice:x:1000:1000:Alice:/home/alice:/bin/bash\n");
    Check regular = run(check_audio_group_limits, sys);
    CHECK(regular.status == Status::warn);
    CHECK(has(regular.reason, "so the regular users of /etc/passwd (uid 1000-60000 with a login "
                              "shell): 'alice'; but rtprio is 0 for 'alice'"));
    CHECK(regular.fix.starts_with("add 'alice' to group audio (usermod -aG audio alice), then "
                                  "let group audio run real-time"));
    // the fix changes what the check saw: once in group audio, the rules apply
    sys.write("etc/group", "root:x:0:\naudio:x:29:alice\n");
    CHECK(run(check_audio_group_limits, sys).status == Status::ok);
}

TEST_CASE("audio-group-limits: a limits file that is there but cannot be read is not "
          "skipped") {
    FakeSystem sys;
    audio_members(sys, "alice");
    sys.write("etc/security/limits.d/95-audio.conf", "@audio - rtprio 95\n");
    const std::string fifo = sys.dir.path() + "/etc/security/limits.d/99-override.conf";
    REQUIRE(::mkfifo(fifo.c_str(), 0644) == 0);
    Check c = run(check_audio_group_limits, sys);
    CHECK(c.status == Status::warn);
    CHECK(has(c.reason, "99-override.conf"));
}

TEST_CASE("with a profile's service and no member in group audio, pam_limits judges nobody") {
    FakeSystem sys;
    const Expectation e = with_mpd();
    Check limits = run(check_audio_group_limits, sys, &e);
    CHECK(limits.status == Status::ok);
    CHECK(limits.reason == "no user logs in to run audio (group audio has no member, and the "
                           "audio runs as the profile's services); pam_limits sets no service's "
                           "limits (check service-limits does)");
    CHECK(run(check_cpu_dma_latency_access, sys, &e).status == Status::ok);
}

TEST_CASE("rt-priority: a running service by its limits and capabilities") {
    FakeSystem sys;
    sys.write("etc/passwd", k_passwd);
    const Expectation e = with_mpd();
    sys.process(812, "/system.slice/mpd.service", {{812, "mpd"}}, limits_text("40", "unlimited"),
                107);
    Check ok = run(check_rt_priority, sys, &e);
    CHECK(ok.status == Status::ok);
    CHECK(ok.reason == "'mpd.service' may set real-time priorities up to 40 (RLIMIT_RTPRIO of "
                       "pid 812, as 'mpd')");
    CHECK(ok.fix.empty());

    sys.remove("proc/812");
    sys.process(812, "/system.slice/mpd.service", {{812, "mpd"}}, limits_text("0", "unlimited"),
                107);
    Check none = run(check_rt_priority, sys, &e);
    CHECK(none.status == Status::fail);
    CHECK(none.reason == "'mpd.service' cannot set a real-time priority: RLIMIT_RTPRIO 0 and no "
                         "CAP_SYS_NICE (pid 812, as 'mpd'), so MPD's rtio and output:* threads "
                         "cannot be real-time");
    CHECK(none.fix.starts_with("restart 'mpd.service' so that it runs with the LimitRTPRIO=40 of "
                               "rtprov's drop-in '/etc/systemd/system/mpd.service.d/"
                               "60-rtprov.conf'"));

    // root with CAP_SYS_NICE needs no limit (sched(7))
    sys.remove("proc/812");
    sys.process(812, "/system.slice/mpd.service", {{812, "mpd"}}, limits_text("0", "unlimited"), 0,
                "0000000000800000");
    Check cap = run(check_rt_priority, sys, &e);
    CHECK(cap.status == Status::ok);
    CHECK(has(cap.reason, "may set any real-time priority: CAP_SYS_NICE (pid 812, as 'root')"));
}

TEST_CASE("rt-priority: a service that is not running by its unit's LimitRTPRIO=") {
    FakeSystem sys;
    sys.write("etc/passwd", k_passwd);
    const Expectation e = with_mpd();
    const std::vector<std::string> units = {"mpd.service"};
    Check unread = run(check_rt_priority, sys, &e, units);
    CHECK(unread.status == Status::warn);
    CHECK(has(unread.reason, "'mpd.service' is not running and its unit cannot be read: no unit "
                             "file or drop-in of 'mpd.service'"));
    sys.write("usr/lib/systemd/system/mpd.service",
              "[Service]\nUser=mpd\nExecStart=/usr/bin/mpd --systemd\n");
    Check unset = run(check_rt_priority, sys, &e, units);
    CHECK(unset.status == Status::fail);
    CHECK(unset.reason == "'mpd.service' is not running, and its unit sets no LimitRTPRIO=, so "
                          "it starts as 'mpd' with the kernel's 0 (DefaultLimitRTPRIO= in "
                          "systemd-system.conf(5) aside), so MPD's rtio and output:* threads "
                          "cannot be real-time");
    sys.write("etc/systemd/system/mpd.service.d/60-rtprov.conf", "[Service]\nLimitRTPRIO=40\n");
    Check set = run(check_rt_priority, sys, &e, units);
    CHECK(set.status == Status::ok);
    CHECK(set.reason == "'mpd.service' is not running; it will get LimitRTPRIO=40 "
                        "(/etc/systemd/system/mpd.service.d/60-rtprov.conf:2)");
    // an empty assignment resets it (systemd.syntax(7))
    sys.write("etc/systemd/system/mpd.service.d/90-reset.conf", "[Service]\nLimitRTPRIO=\n");
    CHECK(run(check_rt_priority, sys, &e, units).status == Status::fail);
    // a unit-wide real-time policy is set by systemd, which needs no limit
    Expectation unit_wide = e;
    unit_wide.services[0].app_sched.reset();
    unit_wide.services[0].unit_sched = ThreadSched{core::SchedPolicy::fifo, 30};
    Check systemd = run(check_rt_priority, sys, &unit_wide, units);
    CHECK(systemd.status == Status::ok);
    CHECK(has(systemd.reason, "is started at fifo 30 by systemd (CPUSchedulingPolicy=)"));
}

TEST_CASE("rt-priority: a user who logs in by limits.conf, their running processes and RTKit") {
    FakeSystem sys;
    sys.write("etc/passwd", k_passwd);
    audio_members(sys, "alice");
    sys.write("etc/group", "root:x:0:\naudio:x:29:alice\n");
    Check none = run(check_rt_priority, sys);
    CHECK(none.status == Status::warn);
    CHECK(has(none.reason, "'alice' cannot set a real-time priority: rtprio 0 (no limits.conf rule "
                           "sets it) and no RTKit, so JACK or PipeWire run as them stay "
                           "SCHED_OTHER"));
    CHECK(has(none.reason, "; judged: the members of group audio who can log in ('mpd' has no "
                           "login shell: a service's account)"));
    CHECK(has(none.fix, "@audio - rtprio 95"));
    CHECK_FALSE(has(none.fix, "usermod")); // alice is in group audio already

    sys.write("usr/share/dbus-1/system-services/org.freedesktop.RealtimeKit1.service", "");
    Check rtkit = run(check_rt_priority, sys);
    CHECK(rtkit.status == Status::warn);
    CHECK(has(rtkit.reason, "so only RTKit can make their threads real-time, at priority 20 or "
                            "below by default"));

    sys.write("etc/security/limits.d/95-audio.conf", "@audio - rtprio 95\n");
    Check ok = run(check_rt_priority, sys);
    CHECK(ok.status == Status::ok);
    CHECK(has(ok.reason, "'alice' may set real-time priorities up to 95 ('@audio - rtprio 95' "
                         "(/etc/security/limits.d/95-audio.conf:1))"));
    // a session that started before the rule still has 0
    sys.process(900, "/user.slice/user-1000.slice/session-1.scope", {{900, "pipewire"}},
                limits_text("0", "8388608"), 1000);
    Check stale = run(check_rt_priority, sys);
    CHECK(stale.status == Status::warn);
    CHECK(has(stale.reason, "limits.conf gives 'alice' rtprio 95 ('@audio - rtprio 95' "
                            "(/etc/security/limits.d/95-audio.conf:1)), but their running "
                            "processes still have 0 (pid 900): they started before the rule"));
    CHECK(has(stale.fix, "'alice' logs out and in again"));
}

TEST_CASE("rt-priority: accounts that cannot be read are not judged ok") {
    FakeSystem sys;
    sys.remove("etc/passwd");
    Check c = run(check_rt_priority, sys);
    CHECK(c.status == Status::warn);
    CHECK(c.reason == "cannot read '/etc/passwd': No such file or directory");
}

TEST_CASE("cpu-dma-latency: each user who runs audio may write the device, or it warns") {
    FakeSystem sys;
    sys.write("etc/passwd", k_passwd);
    sys.write("etc/group", "root:x:0:\naudio:x:29:alice\n");
    Check absent = run(check_cpu_dma_latency_access, sys);
    CHECK(absent.status == Status::warn);
    CHECK(has(absent.reason, "/dev/cpu_dma_latency"));
    sys.write("dev/cpu_dma_latency", "");
    const std::string node = sys.dir.path() + "/dev/cpu_dma_latency";
    // a stand-in that is not a character device is not taken for one
    REQUIRE(::chmod(node.c_str(), 0666) == 0);
    Check plain = run(check_cpu_dma_latency_access, sys);
    CHECK(plain.status == Status::warn);
    CHECK(has(plain.reason, "is not a character device"));
    std::filesystem::remove(node);
    if (::mknod(node.c_str(), S_IFCHR | 0600, makedev(10, 62)) != 0) {
        WARN("mknod needs root here: the device's modes are not checked");
        return;
    }
    REQUIRE(::chown(node.c_str(), 0, 0) == 0);
    REQUIRE(::chmod(node.c_str(), 0600) == 0);
    Check closed = run(check_cpu_dma_latency_access, sys);
    CHECK(closed.status == Status::warn);
    CHECK(has(closed.reason, "'alice' may not write '/dev/cpu_dma_latency' (owner 0, group 0, "
                             "mode 0600)"));
    CHECK(has(closed.fix, "GROUP=\"audio\", MODE=\"0660\""));
    CHECK_FALSE(has(closed.fix, "usermod"));
    // the fix's rule: group audio, 0660
    REQUIRE(::chown(node.c_str(), 0, 29) == 0);
    REQUIRE(::chmod(node.c_str(), 0660) == 0);
    Check group = run(check_cpu_dma_latency_access, sys);
    CHECK(group.status == Status::ok);
    CHECK(has(group.reason, "each may write '/dev/cpu_dma_latency' (owner 0, group 29, mode "
                            "0660)"));
    // its owner may write it
    sys.write("etc/group", "root:x:0:\naudio:x:29:\n");
    sys.write("etc/passwd", "alice:x:1000:1000:Alice:/home/alice:/bin/bash\n");
    REQUIRE(::chown(node.c_str(), 1000, 0) == 0);
    REQUIRE(::chmod(node.c_str(), 0600) == 0);
    CHECK(run(check_cpu_dma_latency_access, sys).status == Status::ok);
    REQUIRE(::chmod(node.c_str(), 0400) == 0);
    Check outside = run(check_cpu_dma_latency_access, sys);
    CHECK(outside.status == Status::warn);
    CHECK(outside.fix.starts_with("add 'alice' to group audio (usermod -aG audio alice), then "));
}

TEST_CASE("the users' fixes are commands a shell reads back as they are meant") {
    // a user name from /etc/group, and a unit name with a '\\', pasted into a root shell
    FakeSystem sys;
    sys.write("etc/passwd", k_passwd);
    sys.write("etc/group", "root:x:0:\naudio:x:29:\n");
    sys.write("etc/passwd", std::string(k_passwd) + "x;reboot:x:1005:1005::/home/x:/bin/bash\n");
    Check c = run(check_audio_group_limits, sys);
    CHECK(c.status == Status::warn);
    CHECK(has(c.fix, "(usermod -aG audio alice; usermod -aG audio 'x;reboot')"));
    Expectation e = with_mpd();
    e.services[0].unit = "mpd\\x2dhifi.service";
    sys.write("usr/lib/systemd/system/mpd\\x2dhifi.service", "[Service]\nUser=mpd\n");
    Check unit = run(check_rt_priority, sys, &e, {"mpd\\x2dhifi.service"});
    CHECK(has(unit.fix, "systemctl daemon-reload; systemctl restart 'mpd\\x2dhifi.service'); if "
                        "'systemctl show -p LimitRTPRIO 'mpd\\x2dhifi.service''"));
}

TEST_CASE("the users' checks name a few users and count the rest") {
    FakeSystem sys;
    std::string members, passwd = "root:x:0:0:root:/root:/bin/bash\n";
    for (int i = 0; i < 20; ++i)
        passwd += "u" + std::to_string(i) + ":x:" + std::to_string(1000 + i) + ":100::/h:/bin/sh\n";
    sys.write("etc/passwd", passwd);
    SECTION("twenty members of group audio") {
        for (int i = 0; i < 20; ++i)
            members += (i ? ",u" : "u") + std::to_string(i);
        audio_members(sys, members);
        Check limits = run(check_audio_group_limits, sys);
        CHECK(limits.status == Status::warn);
        CHECK(has(limits.reason, "the members of group audio: 'u0', 'u1', 'u2', 'u3', 'u4', "
                                 "'u5', 'u6', 'u7' and 12 more; but rtprio is 0 for 'u0'"));
        CHECK(has(limits.reason, "; and 12 more users short of them"));
        CHECK_FALSE(has(limits.reason, "'u8'"));
        Check rt = run(check_rt_priority, sys);
        CHECK(has(rt.reason, "; and 12 more users judged"));
        CHECK_FALSE(has(rt.reason, "'u8'"));
    }
    SECTION("the twenty regular users outside group audio: the fix adds eight by name") {
        audio_members(sys, "");
        Check limits = run(check_audio_group_limits, sys);
        CHECK(has(limits.fix, "add 'u0', 'u1', 'u2', 'u3', 'u4', 'u5', 'u6', 'u7' and 12 more to "
                              "group audio (usermod -aG audio u0; "));
        CHECK(has(limits.fix, "usermod -aG audio u7; the same for the 12 others), then "));
    }
}

TEST_CASE("more users who log in than the audit judges are not judged, and it says so") {
    FakeSystem sys;
    sys.write("etc/passwd", k_passwd);
    // a name listed many times is one member
    std::string alice = "alice";
    for (int i = 0; i < 50000; ++i)
        alice += ",alice";
    audio_members(sys, alice);
    AudioUsers once = audio_users(sys.view(), nullptr);
    REQUIRE(once.logins.size() == 1);
    CHECK(once.logins[0].name == "alice");
    std::string members;
    for (std::size_t i = 0; i <= k_most_judged_users; ++i)
        members += (i ? ",m" : "m") + std::to_string(i);
    audio_members(sys, members);
    AudioUsers many = audio_users(sys.view(), nullptr);
    CHECK(many.logins.empty());
    for (CheckFn check : {CheckFn(check_rt_priority), CheckFn(check_audio_group_limits),
                          CheckFn(check_cpu_dma_latency_access)}) {
        Check c = run(check, sys);
        INFO(c.id);
        CHECK(c.status == Status::warn);
        CHECK(c.reason == "the members of group audio who can log in ('mpd' has no login "
                          "shell: a service's account) are 1001 users ('m0', 'm1', 'm2', 'm3', "
                          "'m4', 'm5', 'm6', 'm7' and 993 more), more than the 1000 the audit "
                          "judges one by one, so none of them was judged");
        CHECK(has(c.fix, "check that /etc/group and /etc/passwd are this system's"));
    }
}
