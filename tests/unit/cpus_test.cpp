// SPDX-License-Identifier: Apache-2.0
#include "provisioner/system/cpus.hpp"

#include "provisioner/core/profile.hpp"
#include "provisioner/fs/root.hpp"
#include "provisioner/live/board_facts.hpp"
#include "provisioner/pipeline/probe.hpp"
#include "tests/unit/audit_fixture.hpp"
#include "tests/unit/catch.hpp"

using namespace rtprov;
using namespace rtprov::system;

TEST_CASE("the four CPU lists are read from sysfs, each with its value or why not") {
    audit_fixture::FakeSystem sys;
    sys.write("sys/devices/system/cpu/nohz_full", "(null)\n");
    sys.remove("sys/devices/system/cpu/isolated");
    Cpus cpus = read_cpus(SysRoot(sys.dir.path()));
    CHECK(cpus.present->to_string() == "0-3");
    CHECK(cpus.online->to_string() == "0-3");
    REQUIRE(cpus.nohz_full);
    CHECK(cpus.nohz_full->empty());
    CHECK_FALSE(cpus.isolated);
    CHECK(cpus.isolated.problem ==
          "cannot read '/sys/devices/system/cpu/isolated': No such file or directory");
}

TEST_CASE("the core layout is resolved on the CPUs present; unknown when they cannot be read") {
    audit_fixture::FakeSystem sys;
    sys.write("sys/devices/system/cpu/present", "0-7\n");
    CHECK(layout_cpu_count(read_cpus(SysRoot(sys.dir.path()))) == 8u);
    sys.write("sys/devices/system/cpu/present", "\n");
    CHECK_FALSE(layout_cpu_count(read_cpus(SysRoot(sys.dir.path()))));
    sys.remove("sys/devices/system/cpu/present");
    CHECK_FALSE(layout_cpu_count(read_cpus(SysRoot(sys.dir.path()))));
}

TEST_CASE("with a CPU offline, apply's probe, first boot's board facts and the audit agree") {
    audit_fixture::FakeSystem sys;
    sys.write("sys/devices/system/cpu/online", "0-2\n"); // CPU 3 taken down
    const std::string root = sys.dir.path();

    const Cpus cpus = read_cpus(SysRoot(root));
    CHECK(cpus.online->to_string() == "0-2");
    REQUIRE(layout_cpu_count(cpus) == 4u);
    core::Profile profile;
    core::TargetFacts facts = pipeline::probe(fs::Root(root), profile, core::TargetMode::live);
    CHECK(facts.cpu_count == 4u);
    CHECK(live::read_board_facts(root).cpu_count == 4u);
    audit::SystemView view = sys.view();
    CHECK(layout_cpu_count(view.cpus) == 4u);
    CHECK(view.cpus.online->to_string() == "0-2");
}
