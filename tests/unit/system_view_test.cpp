// SPDX-License-Identifier: Apache-2.0
#include "provisioner/audit/system_view.hpp"

#include "tests/unit/audit_fixture.hpp"
#include "tests/unit/catch.hpp"

using namespace rtprov::audit;
using rtprov::core::SchedPolicy;
using namespace audit_fixture;

TEST_CASE("a fixture tree is read into kernel facts, processes, threads and IRQs") {
    FakeSystem sys;
    sys.process(812, "/system.slice/mpd.service",
                {{812, "mpd", k_other, 0, "2-3"}, {815, "rtio", k_fifo, 40, "2-3"}},
                limits_text("40", "unlimited"));
    sys.kthread(25, "migration/2", "2", k_fifo, 99);
    sys.irq(28, "PCI-MSIX-0000:00:01.0   0-edge      virtio0-config", "0-3", "2");
    SystemView v = sys.view();

    REQUIRE(v.cmdline);
    CHECK(*v.cmdline == k_cmdline);
    CHECK(*v.kernel_version == k_generic);
    CHECK(*v.rt_runtime_us == 950000);
    CHECK(v.cpus.isolated->to_string() == "2-3");
    CHECK(v.governors->size() == 4);
    CHECK(v.governors->at(3) == "performance");

    REQUIRE(v.processes);
    REQUIRE(v.processes->size() == 2);
    const Process& kthread = v.processes->at(0);
    CHECK(kthread.pid == 25);
    CHECK(kthread.kernel_thread);
    const Process& mpd = v.processes->at(1);
    CHECK(mpd.comm == "mpd");
    CHECK_FALSE(mpd.kernel_thread);
    CHECK(mpd.cgroup == "/system.slice/mpd.service");
    REQUIRE(mpd.limits);
    CHECK(mpd.limits->rtprio->soft == LimitValue{false, 40});
    REQUIRE(mpd.threads.size() == 2);
    CHECK(mpd.threads[1].comm == "rtio");
    CHECK(mpd.threads[1].policy == SchedPolicy::fifo);
    CHECK(mpd.threads[1].rt_priority == 40);
    CHECK(mpd.threads[1].allowed->to_string() == "2-3");

    REQUIRE(v.irqs);
    REQUIRE(v.irqs->size() == 1);
    const Irq& irq = v.irqs->front();
    CHECK(irq.number == 28);
    CHECK(irq.name == "virtio0-config");
    CHECK(irq.affinity->to_string() == "0-3");
    CHECK(irq.effective->to_string() == "2");
    CHECK(irq.affinity_writable);
    CHECK(irq.counts.at(0) == 5);
}

TEST_CASE("missing files become problems that name the path as if the root were '/'") {
    TempDir empty;
    SystemView v = read_system_view(empty.path());
    CHECK_FALSE(v.cmdline);
    CHECK(v.cmdline.problem == "cannot read '/proc/cmdline': No such file or directory");
    CHECK(v.sched_features.problem ==
          "cannot read '/sys/kernel/debug/sched/features': No such file or directory");
    CHECK(v.governors.problem ==
          "cannot read '/sys/devices/system/cpu/online': No such file or directory");
    CHECK_FALSE(v.processes);
    CHECK(v.processes.problem.starts_with("cannot list '/proc': "));
    CHECK(v.processes.absent); // no such folder, as against one that cannot be listed
    CHECK_FALSE(v.irqs);
    CHECK(v.irqs.absent);
}

TEST_CASE("a file that cannot be read, or holds nonsense, is a problem too") {
    FakeSystem sys;
    sys.remove("proc/cmdline");
    std::filesystem::create_directories(sys.dir.path() + "/proc/cmdline"); // EISDIR on read
    sys.write("proc/sys/kernel/sched_rt_runtime_us", "lots\n");
    sys.write("sys/devices/system/cpu/isolated", "3-1\n");
    SystemView v = sys.view();
    CHECK(v.cmdline.problem == "'/proc/cmdline' is a folder, not a regular file; rtprov reads "
                               "and replaces only regular files (nothing was opened or changed)");
    CHECK(v.rt_runtime_us.problem ==
          "'/proc/sys/kernel/sched_rt_runtime_us' holds 'lots', not a number");
    CHECK(v.cpus.isolated.problem ==
          "'/sys/devices/system/cpu/isolated' holds '3-1': range '3-1' runs backwards");
}

TEST_CASE("nohz_full '(null)' and a CPU without cpufreq read as nothing") {
    FakeSystem sys;
    sys.write("sys/devices/system/cpu/nohz_full", "(null)\n");
    sys.remove("sys/devices/system/cpu/cpu1/cpufreq");
    SystemView v = sys.view();
    REQUIRE(v.cpus.nohz_full);
    CHECK(v.cpus.nohz_full->empty());
    CHECK(v.governors->size() == 3);
    CHECK(v.governors->count(1) == 0);
}

TEST_CASE("a process without a task folder is its own thread, and children of kthreadd are "
          "kernel threads") {
    FakeSystem sys;
    sys.kthread(40, "kworker/u8:1", "0-3");
    sys.remove("proc/40/task");
    // A kernel thread whose flags lack PF_KTHREAD still counts as one: its parent is
    // kthreadd.
    sys.write("proc/40/stat", "40 (kworker/u8:1) I 2 0 0 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 10 0 0 "
                              "0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n");
    SystemView v = sys.view();
    REQUIRE(v.processes->size() == 1);
    const Process& p = v.processes->front();
    CHECK(p.kernel_thread);
    REQUIRE(p.threads.size() == 1);
    CHECK(p.threads[0].tid == 40);
    CHECK(p.threads[0].allowed->to_string() == "0-3");
}

TEST_CASE("an smp_affinity_list without a write bit is recorded as not writable") {
    FakeSystem sys;
    sys.irq(30, "GICv2  30 Level     arch_timer", "0-3", "", false);
    SystemView v = sys.view();
    REQUIRE(v.irqs->size() == 1);
    CHECK_FALSE(v.irqs->front().affinity_writable);
    CHECK_FALSE(v.irqs->front().effective);
    CHECK(v.irqs->front().chip == "GICv2");
    CHECK(v.irqs->front().hwirq == 30u);
}

TEST_CASE("threads keep their PF_* flags, processes their uid and CAP_SYS_NICE") {
    FakeSystem sys;
    sys.process(812, "/system.slice/mpd.service", {{812, "mpd", k_other, 0, "2-3"}},
                limits_text("40", "unlimited"), 107);
    sys.kthread(25, "ktimers/2", "2", k_fifo, 1, k_bound_kthread_flags);
    SystemView v = sys.view();
    REQUIRE(v.processes);
    const Process& kthread = v.processes->at(0);
    CHECK(kthread.threads[0].flags == k_bound_kthread_flags);
    CHECK((kthread.threads[0].flags & k_pf_no_setaffinity) != 0);
    CHECK(kthread.uid == 0u);
    CHECK(kthread.cap_sys_nice);
    const Process& mpd = v.processes->at(1);
    CHECK(mpd.uid == 107u);
    CHECK_FALSE(mpd.cap_sys_nice);
    CHECK((mpd.threads[0].flags & k_pf_no_setaffinity) == 0);
}

TEST_CASE("timers, mounts, the workqueue mask, RTKit and the asked-for units are read; what "
          "is missing is a problem") {
    FakeSystem sys;
    sys.write("lib/systemd/system/mpd.service", "[Service]\nUser=mpd\n");
    SystemView v = read_system_view(sys.dir.path(), {"mpd.service", "none.service"});
    REQUIRE(v.timer_list);
    CHECK(v.timer_list->hres_active == 4);
    REQUIRE(v.mounts);
    CHECK(v.mounts->front().type == "ext4");
    REQUIRE(v.workqueue_cpumask);
    CHECK(v.workqueue_cpumask->to_string() == "0-1");
    REQUIRE(v.passwd);
    CHECK_FALSE(v.rtkit);
    CHECK(v.units.at("mpd.service")->service.at("User").value == "mpd");
    CHECK(v.units.at("none.service").absent);
    CHECK(v.mpd_conf.absent);

    sys.remove("proc/timer_list");
    sys.write("sys/devices/virtual/workqueue/cpumask", "0-1\n");
    sys.write("usr/share/dbus-1/system-services/org.freedesktop.RealtimeKit1.service", "");
    SystemView w = sys.view();
    CHECK(w.timer_list.problem == "cannot read '/proc/timer_list': No such file or directory");
    CHECK(w.workqueue_cpumask.problem ==
          "'/sys/devices/virtual/workqueue/cpumask' holds '0-1': '0-1' is not a hex CPU mask");
    CHECK(w.rtkit);
    sys.write("proc/timer_list", "garbage\n");
    CHECK(sys.view().timer_list.problem == "'/proc/timer_list' shows no CPU");
}

TEST_CASE("the music folders that exist are recorded, with where their links lead") {
    FakeSystem sys;
    std::filesystem::create_directories(sys.dir.path() + "/media");
    SystemView v = sys.view();
    CHECK(v.present_folders == std::map<std::string, std::string>{{"/media", "/media"}});
    // an absolute link leads inside the tree, never to the host's folder
    std::filesystem::create_directories(sys.dir.path() + "/data/music");
    std::filesystem::create_directory_symlink("/data/music", sys.dir.path() + "/srv");
    CHECK(sys.view().present_folders ==
          std::map<std::string, std::string>{{"/media", "/media"}, {"/srv", "/data/music"}});
}
