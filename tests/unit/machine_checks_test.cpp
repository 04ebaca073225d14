#include "provisioner/audit/machine_checks.hpp"

#include "tests/unit/audit_fixture.hpp"
#include "tests/unit/catch.hpp"

#include <sys/stat.h>

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
    for (const char* state : {"off", "forceoff", "notimplemented"}) {
        sys.write("sys/devices/system/cpu/smt/control", std::string(state) + "\n");
        CHECK(check_smt(sys.view()).status == Status::ok);
    }
    sys.write("sys/devices/system/cpu/smt/control", "maybe\n");
    CHECK(check_smt(sys.view()).status == Status::warn);
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

TEST_CASE("audio-group-limits: the last @audio rule of type soft or '-' decides, before '*'") {
    FakeSystem sys;
    audio_users(sys, "alice,bob");
    std::optional<Check> bare = check_audio_group_limits(sys.view());
    REQUIRE(bare);
    CHECK(bare->status == Status::warn);
    CHECK(has(bare->reason, "group audio has 'alice', 'bob'"));
    CHECK(has(bare->reason, "no rule gives it a real-time priority"));
    CHECK(has(bare->reason, "no rule lifts its locked-memory limit"));
    CHECK(has(bare->fix, "@audio - rtprio 95"));

    sys.write("etc/security/limits.conf", "# defaults\n*  -  memlock  unlimited\n");
    sys.write("etc/security/limits.d/95-audio.conf",
              "@audio   -   rtprio   95  # JACK\n@audio hard memlock 64\n");
    sys.write("etc/security/limits.d/99-ignored.txt", "@audio - rtprio 0\n");
    std::optional<Check> good = check_audio_group_limits(sys.view());
    REQUIRE(good);
    INFO(good->reason);
    CHECK(good->status == Status::ok);
    CHECK(has(good->reason, "rtprio 95 by '@audio - rtprio 95' "
                            "(/etc/security/limits.d/95-audio.conf:1)"));
    // the hard rule sets no soft limit: the '*' one of limits.conf applies
    CHECK(has(good->reason, "memlock unlimited by '* - memlock unlimited' "
                            "(/etc/security/limits.conf:2)"));

    sys.write("etc/security/limits.d/96-less.conf", "@audio soft memlock 65536\n");
    std::optional<Check> capped = check_audio_group_limits(sys.view());
    REQUIRE(capped);
    CHECK(capped->status == Status::warn);
    CHECK(has(capped->reason, "memlock is 65536 KiB by '@audio soft memlock 65536' "
                              "(/etc/security/limits.d/96-less.conf:1)"));
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
