// SPDX-License-Identifier: Apache-2.0
#include "provisioner/audit/kernel_checks.hpp"

#include "tests/unit/audit_fixture.hpp"
#include "tests/unit/catch.hpp"

using namespace rtprov;
using namespace rtprov::audit;
using audit_fixture::k_generic;
using audit_fixture::k_rt;

namespace {

template <typename T> Fact<T> known(T value) {
    Fact<T> fact;
    fact.value = std::move(value);
    return fact;
}

template <typename T> Fact<T> unreadable(const std::string& path) {
    Fact<T> fact;
    fact.problem = "cannot read '" + path + "': No such file or directory";
    return fact;
}

const std::string k_no_push = "TTWU_QUEUE RT_PUSH_IPI_X NO_RT_PUSH_IPI NO_RT_RUNTIME_SHARE";

// The facts of a healthy generic-kernel box with CPUs 2-3 reserved.
SystemView healthy() {
    SystemView v;
    v.cmdline = known(audit_fixture::k_cmdline);
    v.kernel_version = known(k_generic);
    v.sched_features = known(std::string("TTWU_QUEUE RT_PUSH_IPI"));
    v.sched_preempt = known(std::string("none voluntary (full) lazy"));
    v.rt_runtime_us = known(950000LL);
    v.rt_period_us = known(1000000LL);
    v.cpus.online = known(core::CpuList::range(0, 3));
    v.cpus.isolated = known(core::CpuList({2, 3}));
    v.cpus.nohz_full = known(core::CpuList({2, 3}));
    v.governors = known(std::map<unsigned, std::string>{
        {0, "performance"}, {1, "performance"}, {2, "performance"}, {3, "performance"}});
    return v;
}

Expectation expectation() {
    Expectation e;
    e.profile_name = "x86-debian13";
    e.cores = {core::CpuList({0, 1}), core::CpuList({2, 3})};
    e.isolcpus_flags = {"managed_irq", "domain"};
    e.kernel_params = {{"isolcpus", "managed_irq,domain,2-3", false},
                       {"nohz_full", "2-3", false},
                       {"rcu_nocbs", "2-3", false},
                       {"irqaffinity", "0-1", false}};
    e.rt_packages = {"linux-image-rt-amd64"};
    return e;
}

} // namespace

TEST_CASE("NO_RT_PUSH_IPI on a non-PREEMPT_RT kernel fails, with the workaround as the fix") {
    SystemView v = healthy();
    v.sched_features = known(k_no_push);
    Check c = check_rt_push_ipi(v, nullptr);
    CHECK(c.id == "rt-push-ipi");
    CHECK(c.status == Status::fail);
    CHECK(c.reason == "NO_RT_PUSH_IPI on a non-PREEMPT_RT kernel (the default since "
                      "dd29c017aed6): real-time audio threads can starve for seconds waiting for "
                      "a priority boost");
    CHECK(c.fix == "echo RT_PUSH_IPI > /sys/kernel/debug/sched/features (again at every boot; an "
                   "rtprov profile's tuning.rt_push_ipi_guard does that)");

    Expectation e = expectation();
    e.rt_push_ipi_guard = false;
    CHECK(check_rt_push_ipi(v, &e).fix ==
          "enable tuning.rt_push_ipi_guard in profile 'x86-debian13' and apply it; now: echo "
          "RT_PUSH_IPI > /sys/kernel/debug/sched/features");
    e.rt_push_ipi_guard = true;
    CHECK(check_rt_push_ipi(v, &e).fix.starts_with(
        "rtprov-sched-features.service sets it at boot: see 'systemctl status "
        "rtprov-sched-features.service'; now: "));
}

TEST_CASE("RT_PUSH_IPI is left alone on a PREEMPT_RT kernel, even without debugfs") {
    SystemView v = healthy();
    v.kernel_version = known(k_rt);
    v.sched_features = known(k_no_push);
    CHECK(check_rt_push_ipi(v, nullptr).status == Status::ok);
    v.sched_features = unreadable<std::string>("/sys/kernel/debug/sched/features");
    Check c = check_rt_push_ipi(v, nullptr);
    CHECK(c.status == Status::ok);
    CHECK(c.reason == "PREEMPT_RT kernel: it pushes real-time tasks to other CPUs itself; "
                      "RT_PUSH_IPI is left as it is");
}

TEST_CASE("without debugfs the RT_PUSH_IPI check warns and says how to mount it") {
    SystemView v = healthy();
    v.sched_features = unreadable<std::string>("/sys/kernel/debug/sched/features");
    Check c = check_rt_push_ipi(v, nullptr);
    CHECK(c.status == Status::warn);
    CHECK(c.reason == "cannot read '/sys/kernel/debug/sched/features': No such file or "
                      "directory; RT_PUSH_IPI cannot be checked");
    CHECK(c.fix == "mount debugfs ('mount -t debugfs debugfs /sys/kernel/debug') and rerun "
                   "'rtprov audit'");
    v.kernel_version = unreadable<std::string>("/proc/sys/kernel/version");
    CHECK(check_rt_push_ipi(v, nullptr).status == Status::warn);
}

TEST_CASE("an installed PREEMPT_RT kernel that did not boot: the fix is the boot loader's way") {
    SystemView v = healthy();
    Expectation e = expectation();
    e.realtime = true;
    e.rt_kernels = {"6.12.117+deb13-rt-amd64"};
    const std::string boot = "boot the installed PREEMPT_RT kernel '6.12.117+deb13-rt-amd64': ";
    e.boot_loader = core::BootLoader::grub;
    CHECK(check_preemption(v, &e).fix ==
          boot + "make it GRUB's default ('rtprov apply' sets GRUB_TOP_LEVEL to the newest -rt- "
                 "kernel; run 'update-grub' so that /boot/grub/grub.cfg has it), then reboot");
    e.boot_loader = core::BootLoader::systemd_boot;
    CHECK(check_preemption(v, &e).fix ==
          boot + "make its entry systemd-boot's default ('bootctl set-default ENTRY'), then "
                 "reboot");
    e.boot_loader = core::BootLoader::rpi_firmware;
    e.rt_kernels.push_back("6.12.47+rpt-rpi-v8-rt");
    CHECK(check_preemption(v, &e).fix ==
          "boot one of the installed PREEMPT_RT kernels '6.12.117+deb13-rt-amd64' and "
          "'6.12.47+rpt-rpi-v8-rt': make it the firmware's kernel ('rtprov apply' writes kernel= "
          "with board.kernel.rt_image to config.txt; see 'rtprov status'), then reboot");
}

TEST_CASE("the preemption model is information, unless the profile chose PREEMPT_RT") {
    SystemView v = healthy();
    Check info = check_preemption(v, nullptr);
    CHECK(info.status == Status::ok);
    CHECK(info.reason == "the running kernel ('" + k_generic +
                             "') is PREEMPT_DYNAMIC, mode 'full' (read from "
                             "'/sys/kernel/debug/sched/preempt')");
    Expectation e = expectation();
    e.realtime = true;
    Check c = check_preemption(v, &e);
    CHECK(c.status == Status::fail);
    CHECK(c.reason == "profile 'x86-debian13' chose a PREEMPT_RT kernel (tuning.kernel.realtime) "
                      "but the running kernel ('" +
                          k_generic + "') is PREEMPT_DYNAMIC, mode 'full'");
    CHECK(c.fix == "install 'linux-image-rt-amd64' ('rtprov apply --install-packages'), reboot "
                   "and check that the boot loader starts it by default");
    v.kernel_version = known(k_rt);
    CHECK(check_preemption(v, &e).status == Status::ok);
    v.kernel_version = known(std::string("#1 SMP Debian 6.1.0"));
    CHECK(check_preemption(v, nullptr)
              .reason.ends_with("is no forced preemption (PREEMPT_NONE or PREEMPT_VOLUNTARY)"));
}

TEST_CASE("RT throttling below the default warns; the default and 'off' pass") {
    SystemView v = healthy();
    CHECK(check_rt_throttling(v).status == Status::ok);
    v.rt_runtime_us = known(-1LL);
    CHECK(check_rt_throttling(v).status == Status::ok);
    v.rt_runtime_us = known(500000LL);
    Check c = check_rt_throttling(v);
    CHECK(c.status == Status::warn);
    CHECK(c.reason == "real-time threads may use only 500000 µs of every 1000000 µs (the default "
                      "is 950000 of 1000000); a busy audio thread is stopped when it reaches that");
    v.rt_runtime_us = unreadable<long long>("/proc/sys/kernel/sched_rt_runtime_us");
    CHECK(check_rt_throttling(v).status == Status::warn);
}

TEST_CASE("the governor: the profile's must hold, else 'performance' is recommended") {
    SystemView v = healthy();
    CHECK(check_cpu_governor(v, nullptr).status == Status::ok);
    (*v.governors.value)[1] = "powersave";
    Check generic = check_cpu_governor(v, nullptr);
    CHECK(generic.status == Status::warn);
    CHECK(generic.reason == "CPU 1 'powersave' is not on 'performance': the clock ramps up only "
                            "after an audio thread woke");
    Expectation e = expectation();
    e.cpu_governor = "performance";
    Check c = check_cpu_governor(v, &e);
    CHECK(c.status == Status::fail);
    CHECK(c.reason == "profile 'x86-debian13' sets 'performance' but CPU 1 'powersave' runs "
                      "another");
    v.governors = known(std::map<unsigned, std::string>{});
    CHECK(check_cpu_governor(v, nullptr).status == Status::ok);
    CHECK(check_cpu_governor(v, &e).status == Status::warn);
}

TEST_CASE("the command line must hold every planned parameter with the planned value") {
    SystemView v = healthy();
    Expectation e = expectation();
    Check ok = check_cmdline(v, e);
    CHECK(ok.status == Status::ok);
    CHECK(ok.reason == "'/proc/cmdline' has every planned parameter: "
                       "isolcpus=managed_irq,domain,2-3 nohz_full=2-3 rcu_nocbs=2-3 "
                       "irqaffinity=0-1");
    v.cmdline = known(std::string("root=/dev/sda1 ro irqaffinity=0-3 rcu_nocbs=3,2 "
                                  "isolcpus=domain,managed_irq,2,3"));
    Check c = check_cmdline(v, e);
    CHECK(c.status == Status::fail);
    CHECK(c.reason == "the running kernel was not booted with the parameters profile "
                      "'x86-debian13' plans: 'nohz_full=2-3' is missing and 'irqaffinity=0-3' "
                      "instead of 'irqaffinity=0-1'");
    CHECK(c.fix == "reboot to use the command line rtprov wrote; if they are still missing, see "
                   "'rtprov status' (the boot loader may still need regenerating)");
    v.cmdline = unreadable<std::string>("/proc/cmdline");
    CHECK(check_cmdline(v, e).status == Status::warn);
}

TEST_CASE("a repeated parameter is judged as the kernel judges it") {
    // Booted on Debian 13's 6.12.117: the first isolcpus=/nohz_full= counts (isolated and
    // nohz_full read 1), the last irqaffinity=/rcu_nocbs= does.
    SystemView v = healthy();
    Expectation e = expectation();
    v.cmdline = known(std::string("isolcpus=1 nohz_full=1 rcu_nocbs=1 irqaffinity=0 quiet "
                                  "isolcpus=managed_irq,domain,2-3 nohz_full=2-3 "
                                  "rcu_nocbs=2-3 irqaffinity=0-1"));
    Check c = check_cmdline(v, e);
    CHECK(c.status == Status::fail);
    CHECK(c.reason == "the running kernel was not booted with the parameters profile "
                      "'x86-debian13' plans: 'isolcpus=managed_irq,domain,2-3' is rejected: the "
                      "kernel keeps the first isolcpus=, 'isolcpus=1' and 'nohz_full=2-3' is "
                      "rejected: the kernel keeps the first nohz_full=, 'nohz_full=1'");
    CHECK(c.fix.rfind("remove the other value from the boot loader's command line", 0) == 0);
    // The same planned values first, a foreign one later: rtprov's count.
    v.cmdline = known(std::string("isolcpus=managed_irq,domain,2-3 nohz_full=2-3 rcu_nocbs=1 "
                                  "rcu_nocbs=2-3 irqaffinity=0-1 isolcpus=1"));
    CHECK(check_cmdline(v, e).status == Status::ok);
}

TEST_CASE("isolated and nohz_full CPUs must be the reserved ones when planned") {
    SystemView v = healthy();
    Expectation e = expectation();
    REQUIRE(check_isolated(v, e));
    CHECK(check_isolated(v, e)->status == Status::ok);
    CHECK(check_nohz_full(v, e)->status == Status::ok);
    v.cpus.isolated = known(core::CpuList());
    Check c = *check_isolated(v, e);
    CHECK(c.status == Status::fail);
    CHECK(c.reason == "'/sys/devices/system/cpu/isolated' is '' but profile 'x86-debian13' "
                      "reserves CPUs 2-3 with isolcpus=");
    v.cpus.nohz_full = unreadable<core::CpuList>("/sys/devices/system/cpu/nohz_full");
    CHECK(check_nohz_full(v, e)->status == Status::warn);

    e.kernel_params = {{"irqaffinity", "0-1", false}};
    CHECK_FALSE(check_isolated(v, e));
    CHECK_FALSE(check_nohz_full(v, e));
    // isolcpus= without the 'domain' flag does not show in 'isolated'.
    e.kernel_params = {{"isolcpus", "nohz,managed_irq,2-3", false}};
    e.isolcpus_flags = {"nohz", "managed_irq"};
    CHECK_FALSE(check_isolated(v, e));
}

TEST_CASE("a PREEMPT_DYNAMIC mode comes from debugfs, then preempt=, then the build default") {
    audit_fixture::FakeSystem sys; // release 6.12.117+deb13-amd64, sched/preempt readable
    sys.write(
        "boot/config-6.12.117+deb13-amd64",
        "CONFIG_PREEMPT_VOLUNTARY=y\n# CONFIG_PREEMPT is not set\nCONFIG_PREEMPT_DYNAMIC=y\n");
    const std::string running = "the running kernel ('" + k_generic + "') is PREEMPT_DYNAMIC, ";
    Check c = check_preemption(sys.view(), nullptr);
    CHECK(c.status == Status::ok);
    CHECK(c.reason == running + "mode 'full' (read from '/sys/kernel/debug/sched/preempt')");

    // The kernel takes the last valid preempt= (kernel/sched/core.c, setup_preempt_mode).
    sys.remove("sys/kernel/debug/sched/preempt");
    sys.write("proc/cmdline", audit_fixture::k_cmdline + " preempt=full preempt=none preempt=x\n");
    c = check_preemption(sys.view(), nullptr);
    CHECK(c.status == Status::ok);
    CHECK(c.reason == running + "mode 'none' (from 'preempt=none' on the kernel command line; "
                                "'/sys/kernel/debug/sched/preempt' cannot be read)");

    sys.write("proc/cmdline", audit_fixture::k_cmdline + "\n");
    c = check_preemption(sys.view(), nullptr);
    CHECK(c.status == Status::ok);
    CHECK(c.reason == running +
                          "mode 'voluntary' (the build default: CONFIG_PREEMPT_VOLUNTARY=y in "
                          "'/boot/config-6.12.117+deb13-amd64'; the kernel command line has no "
                          "preempt= and '/sys/kernel/debug/sched/preempt' cannot be read)");
}

TEST_CASE("a PREEMPT_DYNAMIC kernel whose mode cannot be seen warns, with how to see it") {
    audit_fixture::FakeSystem sys; // no preempt= and no /boot/config either
    sys.remove("sys/kernel/debug/sched/preempt");
    sys.remove("proc/sys/kernel/osrelease");
    const std::string running = "the running kernel ('" + k_generic + "') is PREEMPT_DYNAMIC, ";
    const std::string fix =
        "mount debugfs ('mount -t debugfs debugfs /sys/kernel/debug') and rerun 'rtprov audit'";
    Check c = check_preemption(sys.view(), nullptr);
    CHECK(c.status == Status::warn);
    CHECK(c.reason == running + "but its mode cannot be seen: cannot read "
                                "'/sys/kernel/debug/sched/preempt': No such file or directory; "
                                "the kernel command line has no preempt=; cannot read "
                                "'/proc/sys/kernel/osrelease': No such file or directory, so the "
                                "running kernel's config is not known");
    CHECK(c.fix == fix);

    sys.write("proc/sys/kernel/osrelease", "6.12.117+deb13-amd64\n");
    c = check_preemption(sys.view(), nullptr);
    CHECK(c.status == Status::warn);
    CHECK(c.reason.ends_with("; cannot read '/boot/config-6.12.117+deb13-amd64': No such file "
                             "or directory"));
    CHECK(c.fix == fix);
}

TEST_CASE("an installed but not booted PREEMPT_RT kernel is to be booted, not installed") {
    core::Profile profile;
    profile.name = "x86-debian13";
    profile.tuning.kernel.realtime = true;
    profile.board.kernel.rt_packages = {"linux-image-rt-amd64"};
    core::InstalledKernel generic;
    generic.version = "6.12.117+deb13-amd64";
    generic.has_image = true;
    generic.config = std::map<std::string, std::string>{{"CONFIG_PREEMPT_VOLUNTARY", "y"}};
    core::InstalledKernel rt = generic;
    rt.version = "6.12.117+deb13-rt-amd64";
    rt.config = std::map<std::string, std::string>{{"CONFIG_PREEMPT_RT", "y"}};
    const core::ResolvedCores cores{core::CpuList({0, 1}), core::CpuList({2, 3})};

    Expectation only_generic = expect(profile, cores, {}, {generic});
    CHECK(check_preemption(healthy(), &only_generic).fix ==
          "install 'linux-image-rt-amd64' ('rtprov apply --install-packages'), reboot and check "
          "that the boot loader starts it by default");

    Expectation with_rt = expect(profile, cores, {}, {generic, rt});
    Check c = check_preemption(healthy(), &with_rt);
    CHECK(c.status == Status::fail);
    CHECK(c.fix == "boot the installed PREEMPT_RT kernel '6.12.117+deb13-rt-amd64': make it "
                   "GRUB's default ('rtprov apply' sets GRUB_TOP_LEVEL to the newest -rt- kernel; "
                   "run 'update-grub' so that /boot/grub/grub.cfg has it), then reboot");
    profile.board.boot.loader = core::BootLoader::systemd_boot;
    Expectation systemd_boot = expect(profile, cores, {}, {generic, rt});
    CHECK(check_preemption(healthy(), &systemd_boot).fix ==
          "boot the installed PREEMPT_RT kernel '6.12.117+deb13-rt-amd64': make its entry "
          "systemd-boot's default ('bootctl set-default ENTRY'), then reboot");
}
