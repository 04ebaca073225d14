// SPDX-License-Identifier: Apache-2.0
#include "provisioner/pipeline/applied_system.hpp"

#include "provisioner/audit/kernel_checks.hpp"
#include "provisioner/core/error.hpp"
#include "provisioner/profile/profile_loader.hpp"
#include "tests/unit/audit_fixture.hpp"
#include "tests/unit/catch.hpp"

#include <filesystem>

using namespace rtprov;

namespace {

const std::string k_source = RTPROV_SOURCE_DIR;

// A fixture system with the built-in x86-debian13 profile applied (as apply writes it,
// to_yaml of the resolved profile), with 'sets' overriding it.
void apply_profile(const audit_fixture::FakeSystem& sys, std::vector<std::string> sets = {}) {
    std::vector<profile::Override> overrides;
    for (std::string& set : sets)
        overrides.push_back({std::move(set)});
    core::Profile p = profile::load_profile(
        "x86-debian13", {{k_source + "/board-profiles", "built-in"}}, overrides);
    sys.write("etc/rtprov/profile.yaml", profile::to_yaml(p));
}

const std::string k_apps = k_source + "/board-profiles/apps";

} // namespace

TEST_CASE("without an applied profile there is no applied system") {
    audit_fixture::FakeSystem sys;
    CHECK_FALSE(pipeline::load_applied_system(sys.dir.path(), k_apps));
    CHECK_FALSE(pipeline::applied_profile(sys.dir.path()));
}

TEST_CASE("in a --sysroot tree the applied profile is read through the tree's links") {
    audit_fixture::FakeSystem sys;
    apply_profile(sys);
    // The profile behind an absolute link that exists in the tree only: the host has no
    // such folder, so reading the link on the host would find no profile.
    std::filesystem::create_directories(sys.dir.path() + "/rtprov-tree-only");
    std::filesystem::rename(sys.dir.path() + "/etc/rtprov/profile.yaml",
                            sys.dir.path() + "/rtprov-tree-only/profile.yaml");
    std::filesystem::create_symlink("/rtprov-tree-only/profile.yaml",
                                    sys.dir.path() + "/etc/rtprov/profile.yaml");
    REQUIRE_FALSE(std::filesystem::exists("/rtprov-tree-only"));
    auto profile = pipeline::applied_profile(sys.dir.path());
    REQUIRE(profile);
    CHECK(profile->name == "x86-debian13");
}

TEST_CASE("the applied system's cores are resolved on the CPUs present, with a CPU offline") {
    audit_fixture::FakeSystem sys;
    apply_profile(sys);
    sys.write("sys/devices/system/cpu/online", "0-2\n");
    auto applied = pipeline::load_applied_system(sys.dir.path(), k_apps);
    REQUIRE(applied);
    CHECK(applied->profile.name == "x86-debian13");
    CHECK(applied->expected.cores.reserved.to_string() == "2-3");
    CHECK_FALSE(applied->expected.kernel_params.empty());
}

TEST_CASE("a core layout that cannot be resolved on this machine is an error saying so") {
    audit_fixture::FakeSystem sys;
    apply_profile(sys);
    sys.remove("sys/devices/system/cpu/present"); // and board.cpus is 'auto'

    std::string error;
    try {
        pipeline::load_applied_system(sys.dir.path(), k_apps);
    } catch (const Error& e) {
        error = e.what();
    }
    CHECK(error.find("(CPUs present: unknown); run 'rtprov plan --live' to see why") !=
          std::string::npos);
}

TEST_CASE("first boot's reboot decision is the audit's cmdline rule") {
    audit_fixture::FakeSystem sys;
    apply_profile(sys);
    auto applied = pipeline::load_applied_system(sys.dir.path(), k_apps);
    REQUIRE(applied);
    std::string planned;
    for (const boot::KernelParam& p : applied->expected.kernel_params)
        planned += " " + p.token();

    // Booted with every planned parameter: nothing a reboot would bring.
    sys.write("proc/cmdline", "BOOT_IMAGE=/vmlinuz root=/dev/vda ro" + planned + "\n");
    audit::SystemView kernel = audit::read_kernel_view(sys.dir.path());
    pipeline::Missing missing = pipeline::missing_in_running_kernel(*applied, kernel);
    CHECK(missing.reboot_helps.empty());
    CHECK(audit::check_cmdline(kernel, applied->expected).status == audit::Status::ok);

    // A later isolcpus= does not count: the kernel takes the first one. Both say so.
    sys.write("proc/cmdline", "root=/dev/vda isolcpus=1" + planned + "\n");
    kernel = audit::read_kernel_view(sys.dir.path());
    missing = pipeline::missing_in_running_kernel(*applied, kernel);
    CHECK(missing.reboot_helps == applied->expected.param("isolcpus")->token());
    CHECK(audit::check_cmdline(kernel, applied->expected).status == audit::Status::fail);
}

TEST_CASE("a realtime profile on a kernel that is not PREEMPT_RT: a reboot helps only when one "
          "is installed") {
    audit_fixture::FakeSystem sys;
    apply_profile(sys, {"tuning.kernel.realtime=true"});
    auto applied = pipeline::load_applied_system(sys.dir.path(), k_apps);
    REQUIRE(applied);
    audit::SystemView kernel = audit::read_kernel_view(sys.dir.path());
    REQUIRE_FALSE(audit::runs_preempt_rt(kernel));
    pipeline::Missing missing = pipeline::missing_in_running_kernel(*applied, kernel);
    CHECK(missing.reboot_cannot_help.starts_with("the PREEMPT_RT kernel (running "
                                                 "6.12.117+deb13-amd64): none is installed"));

    sys.write("proc/sys/kernel/version", "#1 SMP PREEMPT_RT Debian 6.12.117-1\n");
    kernel = audit::read_kernel_view(sys.dir.path());
    CHECK(audit::runs_preempt_rt(kernel));
    missing = pipeline::missing_in_running_kernel(*applied, kernel);
    CHECK(missing.reboot_cannot_help.empty());
}

TEST_CASE("an installed PREEMPT_RT kernel that did not boot: a reboot helps where rtprov made "
          "it the default, not where its entry is chosen by hand") {
    audit_fixture::FakeSystem sys;
    sys.write("boot/vmlinuz-6.12.117+deb13-rt-amd64", "");
    sys.write("boot/config-6.12.117+deb13-rt-amd64", "CONFIG_PREEMPT_RT=y\n");
    apply_profile(sys, {"tuning.kernel.realtime=true"});
    auto applied = pipeline::load_applied_system(sys.dir.path(), k_apps);
    REQUIRE(applied);
    REQUIRE(applied->expected.rt_kernels.size() == 1);
    audit::SystemView kernel = audit::read_kernel_view(sys.dir.path());
    pipeline::Missing missing = pipeline::missing_in_running_kernel(*applied, kernel);
    CHECK(missing.reboot_helps.ends_with("the PREEMPT_RT kernel (running 6.12.117+deb13-amd64)"));
    CHECK(missing.reboot_cannot_help.empty());

    apply_profile(sys, {"tuning.kernel.realtime=true", "board.boot.loader=systemd-boot"});
    applied = pipeline::load_applied_system(sys.dir.path(), k_apps);
    REQUIRE(applied);
    missing = pipeline::missing_in_running_kernel(*applied, kernel);
    CHECK(missing.reboot_helps.find("PREEMPT_RT") == std::string::npos);
    CHECK(missing.reboot_cannot_help == "the PREEMPT_RT kernel (running 6.12.117+deb13-amd64): "
                                        "choose it as systemd-boot's default entry");
}

TEST_CASE("first boot's and the trial's self-test adds the underrun test when the profile asks",
          "[audio]") {
    using Argv = std::vector<std::string>;
    audit_fixture::FakeSystem sys;
    CHECK(pipeline::selftest_command(sys.dir.path(), {"--json", "f"}) ==
          Argv{"selftest", "--json", "f"});
    apply_profile(sys);
    CHECK(pipeline::selftest_command(sys.dir.path(), {"--json", "f"}) ==
          Argv{"selftest", "--json", "f"});
    apply_profile(sys, {"tuning.selftest.audio=true"});
    CHECK(pipeline::selftest_command(sys.dir.path(), {"--json", "f"}) ==
          Argv{"selftest", "--json", "f", "--audio", "--stop-player"});
}
