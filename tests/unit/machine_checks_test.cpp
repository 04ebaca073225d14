// SPDX-License-Identifier: Apache-2.0
#include "provisioner/audit/machine_checks.hpp"

#include "tests/unit/audit_fixture.hpp"
#include "tests/unit/catch.hpp"

#include <filesystem>

using namespace rtprov;
using namespace rtprov::audit;
using audit_fixture::FakeSystem;

namespace {

bool has(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
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
