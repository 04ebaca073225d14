// SPDX-License-Identifier: Apache-2.0
#include "provisioner/audit/machine_checks.hpp"

#include "tests/unit/audit_fixture.hpp"
#include "tests/unit/catch.hpp"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <filesystem>

using namespace rtprov;
using namespace rtprov::audit;
using audit_fixture::FakeSystem;

namespace {

bool has(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

// The fixture with 'members' in group audio (gid 29).
void audio_users(const FakeSystem& sys, const std::string& members) {
    sys.write("etc/group", "root:x:0:\naudio:x:29:" + members + "\n");
}

} // namespace

TEST_CASE("smt: on warns with the fix; off, forceoff, notsupported are ok") {
    FakeSystem sys;
    CHECK(check_smt(sys.view()).status == Status::ok);
    sys.write("sys/devices/system/cpu/smt/control", "on\n");
    Check on = check_smt(sys.view());
    CHECK(on.status == Status::warn);
    CHECK(has(on.reason, "SMT is on"));
    CHECK(has(on.fix, "nosmt"));
    for (const char* state : {"off", "forceoff", "notsupported"}) {
        sys.write("sys/devices/system/cpu/smt/control", std::string(state) + "\n");
        CHECK(check_smt(sys.view()).status == Status::ok);
    }
    sys.write("sys/devices/system/cpu/smt/control", "maybe\n");
    CHECK(check_smt(sys.view()).status == Status::warn);
    // 'notimplemented': no run-time control, so the topology decides
    sys.write("sys/devices/system/cpu/smt/control", "notimplemented\n");
    CHECK(check_smt(sys.view()).status == Status::warn);
    sys.write("sys/devices/system/cpu/cpu0/topology/thread_siblings_list", "0-1\n");
    CHECK(has(check_smt(sys.view()).reason, "shares its core with CPUs 0-1"));
    sys.write("sys/devices/system/cpu/cpu0/topology/thread_siblings_list", "0\n");
    CHECK(check_smt(sys.view()).status == Status::ok);
}

TEST_CASE("smt: a kernel without the control file is judged by CPU 0's siblings, and one "
          "that shows neither warns that it cannot see") {
    FakeSystem sys;
    sys.remove("sys/devices/system/cpu/smt");
    Check unseen = check_smt(sys.view());
    CHECK(unseen.status == Status::warn);
    CHECK(has(unseen.reason, "smt/control"));
    sys.write("sys/devices/system/cpu/cpu0/topology/thread_siblings_list", "0\n");
    CHECK(check_smt(sys.view()).status == Status::ok);
    sys.write("sys/devices/system/cpu/cpu0/topology/thread_siblings_list", "0,2\n");
    Check shared = check_smt(sys.view());
    CHECK(shared.status == Status::warn);
    CHECK(has(shared.reason, "CPUs 0,2"));
}

TEST_CASE("cpu-mitigations names the mitigated vulnerabilities, and an unreadable folder "
          "warns") {
    FakeSystem sys;
    Check none = check_mitigations(sys.view());
    CHECK(none.status == Status::ok);
    CHECK(has(none.reason, "2 listed"));
    sys.write("sys/devices/system/cpu/vulnerabilities/meltdown", "Mitigation: PTI\n");
    Check pti = check_mitigations(sys.view());
    CHECK(pti.status == Status::warn);
    CHECK(has(pti.reason, "1 CPU vulnerability: meltdown (Mitigation: PTI)"));
    CHECK(has(pti.fix, "mitigations=off"));
    CHECK(has(pti.fix, "trades security"));
    sys.remove("sys/devices/system/cpu/vulnerabilities");
    CHECK(check_mitigations(sys.view()).status == Status::warn);
    // a folder with nothing readable in it is not "nothing mitigated"
    std::filesystem::create_directories(sys.dir.path() +
                                        "/sys/devices/system/cpu/vulnerabilities/odd");
    Check empty = check_mitigations(sys.view());
    CHECK(empty.status == Status::warn);
    CHECK(has(empty.reason, "holds no readable file (odd)"));
}

TEST_CASE("swappiness matters only with swap in use") {
    FakeSystem sys;
    Check none = check_swappiness(sys.view());
    CHECK(none.status == Status::ok);
    CHECK(has(none.reason, "no swap is in use"));
    sys.write("proc/swaps", "Filename\tType\tSize\tUsed\tPriority\n/swapfile file 1048572 0 "
                            "-2\n");
    Check high = check_swappiness(sys.view());
    CHECK(high.status == Status::warn);
    CHECK(has(high.reason, "1 swap area in use and vm.swappiness 60"));
    CHECK(has(high.fix, "vm.swappiness = 10"));
    sys.write("proc/sys/vm/swappiness", "10\n");
    CHECK(check_swappiness(sys.view()).status == Status::ok);
    sys.remove("proc/swaps");
    CHECK(check_swappiness(sys.view()).status == Status::warn);
}

TEST_CASE("the audio group's checks run only when it has members") {
    FakeSystem sys;
    CHECK_FALSE(check_audio_group_limits(sys.view()));
    CHECK_FALSE(check_cpu_dma_latency_access(sys.view()));
    sys.remove("etc/group");
    // no /etc/group: cannot know who is in it
    std::optional<Check> unseen = check_audio_group_limits(sys.view());
    REQUIRE(unseen);
    CHECK(unseen->status == Status::warn);
}

TEST_CASE("audio-group-limits: what pam_limits gives each member, soft capped by hard") {
    FakeSystem sys;
    audio_users(sys, "alice,bob");
    std::optional<Check> bare = check_audio_group_limits(sys.view());
    REQUIRE(bare);
    CHECK(bare->status == Status::warn);
    CHECK(has(bare->reason, "group audio has 'alice', 'bob', but rtprio is 0 for 'alice' (soft "
                            "0, hard 0: no rule (the kernel's default))"));
    CHECK(has(bare->reason, "memlock is the kernel's default for 'alice'"));
    CHECK(has(bare->fix, "@audio - rtprio 95"));

    sys.write("etc/security/limits.conf", "# defaults\n*  -  memlock  unlimited\n");
    sys.write("etc/security/limits.d/95-audio.conf",
              "@audio   -   RTPRIO   95  # JACK\n@audio hard memlock 64\n");
    sys.write("etc/security/limits.d/99-ignored.txt", "@audio - rtprio 0\n");
    sys.write("etc/security/limits.d/.hidden.conf", "@audio - rtprio 0\n");
    std::optional<Check> capped = check_audio_group_limits(sys.view());
    REQUIRE(capped);
    INFO(capped->reason);
    // the group's hard 64 KiB outranks '*'s unlimited, and caps the soft one
    CHECK(capped->status == Status::warn);
    CHECK(has(capped->reason, "memlock is 64 KiB for 'alice' ('* - memlock unlimited' "
                              "(/etc/security/limits.conf:2) and '@audio hard memlock 64' "
                              "(/etc/security/limits.d/95-audio.conf:2))"));
    CHECK_FALSE(has(capped->reason, "rtprio is 0"));

    sys.write("etc/security/limits.d/95-audio.conf",
              "@audio - rtprio 95\n@audio - memlock UNLIMITED\n");
    std::optional<Check> good = check_audio_group_limits(sys.view());
    REQUIRE(good);
    CHECK(good->status == Status::ok);
    CHECK(has(good->reason, "rtprio 95 by '@audio - rtprio 95' "
                            "(/etc/security/limits.d/95-audio.conf:1)"));

    // a user's own rule outranks the group's, wherever it is
    sys.write("etc/security/limits.d/10-alice.conf", "alice - rtprio 0\n");
    std::optional<Check> user = check_audio_group_limits(sys.view());
    REQUIRE(user);
    CHECK(user->status == Status::warn);
    CHECK(has(user->reason, "rtprio is 0 for 'alice'"));
    sys.remove("etc/security/limits.d/10-alice.conf");

    // a soft rule alone cannot lift the kernel's hard 0; a value pam drops sets nothing
    sys.write("etc/security/limits.d/95-audio.conf",
              "@audio soft rtprio 95\n@audio - rtprio abc\n@audio - memlock unlimited\n");
    std::optional<Check> soft = check_audio_group_limits(sys.view());
    REQUIRE(soft);
    CHECK(soft->status == Status::warn);
    CHECK(has(soft->reason, "rtprio is 0 for 'alice' (soft 95, hard 0"));
}

TEST_CASE("audio-group-limits: a limits file that is there but cannot be read is not "
          "skipped") {
    FakeSystem sys;
    audio_users(sys, "alice");
    sys.write("etc/security/limits.d/95-audio.conf", "@audio - rtprio 95\n");
    const std::string fifo = sys.dir.path() + "/etc/security/limits.d/99-override.conf";
    REQUIRE(::mkfifo(fifo.c_str(), 0644) == 0);
    std::optional<Check> c = check_audio_group_limits(sys.view());
    REQUIRE(c);
    CHECK(c->status == Status::warn);
    CHECK(has(c->reason, "99-override.conf"));
}

TEST_CASE("cpu-dma-latency: group audio's members may write the device, or it warns") {
    FakeSystem sys;
    audio_users(sys, "alice");
    std::optional<Check> absent = check_cpu_dma_latency_access(sys.view());
    REQUIRE(absent);
    CHECK(absent->status == Status::warn);
    CHECK(has(absent->reason, "/dev/cpu_dma_latency"));
    sys.write("dev/cpu_dma_latency", "");
    const std::string node = sys.dir.path() + "/dev/cpu_dma_latency";
    // a stand-in that is not a character device is not taken for one
    REQUIRE(::chmod(node.c_str(), 0666) == 0);
    std::optional<Check> plain = check_cpu_dma_latency_access(sys.view());
    REQUIRE(plain);
    CHECK(plain->status == Status::warn);
    CHECK(has(plain->reason, "is not a character device"));
    std::filesystem::remove(node);
    if (::mknod(node.c_str(), S_IFCHR | 0600, makedev(10, 62)) != 0) {
        WARN("mknod needs root here: the device's modes are not checked");
        return;
    }
    REQUIRE(::chmod(node.c_str(), 0600) == 0);
    std::optional<Check> closed = check_cpu_dma_latency_access(sys.view());
    REQUIRE(closed);
    CHECK(closed->status == Status::warn);
    CHECK(has(closed->reason, "mode 0600"));
    CHECK(has(closed->fix, "tuning.hold_cpu_dma_latency: true"));
    REQUIRE(::chmod(node.c_str(), 0666) == 0);
    std::optional<Check> open = check_cpu_dma_latency_access(sys.view());
    REQUIRE(open);
    CHECK(open->status == Status::ok);
}
