// SPDX-License-Identifier: Apache-2.0
#include "provisioner/audit/irq_checks.hpp"
#include "provisioner/audit/reserved_cpu_checks.hpp"

#include "tests/unit/catch.hpp"

#include <stdexcept>

using namespace rtprov;
using namespace rtprov::audit;
using rtprov::core::SchedPolicy;

namespace {

core::CpuList cpus(const std::string& text) {
    return *core::parse_cpu_list(text);
}

Irq irq(unsigned number, const std::string& name, const std::string& affinity,
        const std::string& effective, const std::string& chip = "IO-APIC",
        std::optional<unsigned> hwirq = 5) {
    Irq i;
    i.number = number;
    i.name = name;
    i.chip = chip;
    i.hwirq = hwirq;
    i.affinity = cpus(affinity);
    if (!effective.empty())
        i.effective = cpus(effective);
    return i;
}

Process process(int pid, const std::string& comm, const std::string& cgroup,
                const std::string& allowed, SchedPolicy policy = SchedPolicy::other,
                int priority = 0) {
    Process p;
    p.pid = pid;
    p.ppid = 1;
    p.comm = comm;
    p.cgroup = cgroup;
    Thread t;
    t.tid = pid;
    t.comm = comm;
    t.policy = policy;
    t.rt_priority = priority;
    t.allowed = cpus(allowed);
    p.threads.push_back(t);
    return p;
}

// PF_* bits as /proc/PID/stat shows them (include/linux/sched.h)
constexpr unsigned long k_no_setaffinity = 0x04000000; // per-CPU threads, workqueue workers
constexpr unsigned long k_wq_worker = 0x00000020 | k_no_setaffinity;

Process kthread(int pid, const std::string& comm, const std::string& allowed,
                SchedPolicy policy = SchedPolicy::other, int priority = 0,
                unsigned long flags = 0x00208040) {
    Process p = process(pid, comm, "/", allowed, policy, priority);
    p.ppid = 2;
    p.kernel_thread = true;
    p.threads.front().flags = flags;
    return p;
}

Thread thread(int tid, const std::string& comm, SchedPolicy policy, int priority,
              const std::string& allowed) {
    Thread t;
    t.tid = tid;
    t.comm = comm;
    t.policy = policy;
    t.rt_priority = priority;
    t.allowed = cpus(allowed);
    return t;
}

Expectation with_mpd() {
    Expectation e;
    e.profile_name = "box";
    e.cores = {cpus("0-1"), cpus("2-3")};
    ServiceExpectation mpd;
    mpd.unit = "mpd.service";
    mpd.profile_key = "mpd";
    mpd.app_name = "MPD";
    mpd.app_threads = "rtio and output:* threads";
    mpd.cpus = cpus("2-3");
    mpd.app_sched = ThreadSched{SchedPolicy::fifo, 40};
    mpd.rt_threads = {"rtio", "output:*"};
    e.services.push_back(mpd);
    return e;
}

SystemView with(std::vector<Process> processes, std::vector<Irq> irqs = {}) {
    SystemView v;
    v.cpus.online.value = cpus("0-3");
    v.cpus.isolated.value = cpus("2-3");
    v.processes.value = std::move(processes);
    v.irqs.value = std::move(irqs);
    v.workqueue_cpumask.value = cpus("0-3"); // the kernel's default: every CPU
    return v;
}

Process mpd_process() {
    Process mpd = process(812, "mpd", "/system.slice/mpd.service", "2-3");
    mpd.threads.push_back(thread(815, "rtio", SchedPolicy::fifo, 40, "2-3"));
    mpd.threads.push_back(thread(816, "output:1", SchedPolicy::fifo, 40, "2-3"));
    return mpd;
}

} // namespace

TEST_CASE("a movable IRQ delivered to a reserved CPU warns, with the commands to move it") {
    Irq eth0 = irq(29, "eth0", "3", "");
    eth0.counts = {{0, 9}, {1, 0}, {2, 0}, {3, 512}};
    SystemView v =
        with({}, {irq(24, "ACPI:Ged", "0-1", "0"), irq(28, "virtio0-config", "0-3", "2"), eth0});
    Check c = check_irq_affinity(v, nullptr);
    CHECK(c.status == Status::warn);
    // The busiest first.
    CHECK(c.reason == "2 IRQs are delivered to reserved CPUs 2-3: IRQ 29 'eth0' on CPU 3 (fired "
                      "512 times there since boot) and IRQ 28 'virtio0-config' on CPU 2; each one "
                      "interrupts the audio threads there");
    CHECK(c.fix == "move them to the housekeeping CPUs: write the CPU list 0-1 (the housekeeping "
                   "CPUs) to each one's smp_affinity_list: for n in 28 29; do echo 0-1 > "
                   "/proc/irq/$n/smp_affinity_list; done; irqaffinity= sets only the default at "
                   "boot: keep irqbalance off the reserved CPUs with the CPU list 2-3 "
                   "(IRQBALANCE_BANNED_CPULIST=2-3 in /etc/default/irqbalance)");
    Expectation e = with_mpd();
    e.irqaffinity = false;
    CHECK(check_irq_affinity(v, &e).fix.ends_with(
        "; set tuning.kernel.irqaffinity: true so that boot does it"));
}

TEST_CASE("without a profile and without isolated CPUs there is no IRQ placement to check") {
    SystemView v = with({}, {irq(28, "virtio0-config", "0-3", "2")});
    v.cpus.isolated.value = core::CpuList();
    Check c = check_irq_affinity(v, nullptr);
    CHECK(c.status == Status::ok);
    CHECK(c.reason == "no CPU is isolated (isolated and nohz_full in /sys/devices/system/cpu name "
                      "none): there are no reserved CPUs to keep IRQs off");
}

TEST_CASE("per-CPU IRQs are listed for information, fixed ones on reserved CPUs warn") {
    Irq timer = irq(11, "arch_timer", "0-3", "", "GICv2", 30);
    Irq fixed = irq(40, "fe00b880.mailbox", "0-3", "3", "GICv2", 65);
    fixed.affinity_writable = false;
    CHECK(irq_placement(timer) == IrqPlacement::per_cpu);
    CHECK(irq_placement(fixed) == IrqPlacement::fixed);

    Check info = check_unmovable_irqs(with({}, {timer}), nullptr);
    CHECK(info.status == Status::ok);
    CHECK(info.reason == "1 per-CPU IRQ fires on every CPU, the reserved ones included: IRQ 11 "
                         "'arch_timer'");
    CHECK(check_irq_affinity(with({}, {timer}), nullptr).status == Status::ok);

    Check c = check_unmovable_irqs(with({}, {timer, fixed}), nullptr);
    CHECK(c.status == Status::warn);
    CHECK(c.reason == "1 IRQ on reserved CPUs 2-3 cannot be moved: IRQ 40 'fe00b880.mailbox' on "
                      "CPU 3 (read-only smp_affinity_list); 1 per-CPU IRQ fires on every CPU, the "
                      "reserved ones included: IRQ 11 'arch_timer'");
}

TEST_CASE("IRQ checks that cannot read /proc/irq warn with the reason") {
    SystemView v = with({});
    v.irqs.value.reset();
    v.irqs.problem = "cannot list '/proc/irq': No such file or directory";
    Check c = check_irq_affinity(v, nullptr);
    CHECK(c.status == Status::warn);
    CHECK(c.reason == "cannot list '/proc/irq': No such file or directory");
    CHECK(check_unmovable_irqs(v, nullptr).status == Status::warn);
}

TEST_CASE("a user task allowed on a reserved CPU fails; services and per-CPU kthreads do not") {
    Expectation e = with_mpd();
    SystemView clean = with({mpd_process(), kthread(25, "migration/2", "2", SchedPolicy::fifo, 99),
                             kthread(26, "ksoftirqd/3", "3"), process(400, "sshd", "/", "0-1")});
    Check ok = check_reserved_cpu_tasks(clean, e);
    CHECK(ok.status == Status::ok);
    CHECK(ok.reason ==
          "only the profile's services and per-CPU kernel threads may run on reserved CPUs 2-3");

    SystemView wandering = clean;
    wandering.processes.value->push_back(process(512, "cron", "/system.slice/cron.service", "0-3"));
    wandering.processes.value->push_back(
        kthread(60, "kworker/u8:1", "0-3", SchedPolicy::other, 0, k_wq_worker));
    Check c = check_reserved_cpu_tasks(wandering, e);
    CHECK(c.status == Status::fail);
    CHECK(c.reason == "1 task outside the profile's services may run on reserved CPUs 2-3: "
                      "'cron' (pid 512, CPUs 0-3); and 1 unbound workqueue worker "
                      "('kworker/u8:1' (pid 60, CPUs 0-3)), which follows "
                      "/sys/devices/virtual/workqueue/cpumask: it holds CPUs 0-3");
    CHECK(c.fix.starts_with("isolcpus= keeps tasks off only at boot: whatever gave these an "
                            "affinity (taskset, CPUAffinity=) must leave CPUs 2-3 out; if every "
                            "task is affected, see check 'isolated-cpus'; write the hex mask 3"));
}

TEST_CASE("a task's own name is shown on one line, its control characters escaped") {
    // Any user may name a thread so (prctl PR_SET_NAME): it must not forge a report line.
    Expectation e = with_mpd();
    SystemView v = with({mpd_process(), process(513, "\nresult: passed", "/", "0-3"),
                         process(514, "x\x1b[2J\tz", "/", "0-3", SchedPolicy::fifo, 90)});
    Check c = check_reserved_cpu_tasks(v, e);
    CHECK(c.reason == "2 tasks outside the profile's services may run on reserved CPUs 2-3: "
                      "'\\x0aresult: passed' (pid 513, CPUs 0-3) and 'x\\x1b[2J\\x09z' (pid "
                      "514, CPUs 0-3)");
    CHECK(check_rt_above_audio(v, e).reason.ends_with(": 'x\\x1b[2J\\x09z' (tid 514, fifo 90, "
                                                      "CPUs 0-3)"));
    v.irqs.value = std::vector<Irq>{irq(24, "snd\nresult: passed", "2-3", "")};
    CHECK(check_irq_affinity(v, &e).reason.find("IRQ 24 'snd\\x0aresult: passed'") !=
          std::string::npos);
}

TEST_CASE("unbound workqueue workers alone on reserved CPUs warn, with the mask that moves "
          "them") {
    Expectation e = with_mpd();
    SystemView v = with(
        {mpd_process(), kthread(60, "kworker/u8:1", "0-3", SchedPolicy::other, 0, k_wq_worker)});
    Check c = check_reserved_cpu_tasks(v, e);
    CHECK(c.status == Status::warn);
    CHECK(c.reason == "reserved CPUs 2-3 are open to 1 unbound workqueue worker ('kworker/u8:1' "
                      "(pid 60, CPUs 0-3)), which follows /sys/devices/virtual/workqueue/cpumask: "
                      "it holds CPUs 0-3");
    CHECK(c.fix == "write the hex mask 3 (CPUs 0-1, the housekeeping CPUs) to the workqueue "
                   "cpumask, which takes a hex CPU mask: echo 3 > "
                   "/sys/devices/virtual/workqueue/cpumask (tuning.housekeeping_workqueues: true "
                   "does it at every boot)");
    Expectation wide = e;
    wide.cores = {core::CpuList({0, 1, 2, 33}), core::CpuList({3})};
    CHECK(check_reserved_cpu_tasks(v, wide).fix.find(
              "write the hex mask 2,00000007 (CPUs 0-2,33, the housekeeping CPUs) to the "
              "workqueue cpumask, which takes a hex CPU mask: echo 2,00000007 > "
              "/sys/devices/virtual/workqueue/cpumask") == 0);
    // the profile has rtprov-irq-tune@boot write it: the fix is to run that
    Expectation tuned = e;
    tuned.housekeeping_workqueues = true;
    CHECK(check_reserved_cpu_tasks(v, tuned).fix.starts_with(
        "rtprov-irq-tune@boot.service writes the housekeeping CPUs there "
        "(tuning.housekeeping_workqueues): run 'systemctl start rtprov-irq-tune@boot.service'"));
    e.reserve_method = core::ReserveMethod::none;
    CHECK(check_reserved_cpu_tasks(v, e).status == Status::ok);
}

TEST_CASE("reserved-cpu-tasks offers a fix only where it moves something: the workqueue mask "
          "already kept, what the kernel does not let move is named") {
    Expectation e = with_mpd();
    // Seen on the debos example's Debian 13 guest: with the workqueue mask already 3, the
    // unbound workqueues' rescuers and kcompactd0 stay allowed on every CPU.
    SystemView v = with({mpd_process(),
                         kthread(40, "kworker/R-kbloc", "0-3", SchedPolicy::other, 0, k_wq_worker),
                         kthread(41, "kworker/R-md", "0-3", SchedPolicy::other, 0, k_wq_worker),
                         kthread(55, "kcompactd0", "0-3")});
    v.workqueue_cpumask.value = cpus("0-1");
    Check c = check_reserved_cpu_tasks(v, e);
    CHECK(c.status == Status::warn);
    CHECK(c.reason == "reserved CPUs 2-3 are open to 1 kernel thread not bound to one CPU that "
                      "taskset can move: 'kcompactd0' (pid 55, CPUs 0-3); also 2 kernel threads "
                      "the kernel does not let anyone move (PF_NO_SETAFFINITY; the workqueue "
                      "cpumask already holds only CPUs 0-1): 'kworker/R-kbloc' (pid 40, CPUs "
                      "0-3) and 'kworker/R-md' (pid 41, CPUs 0-3)");
    CHECK(c.fix == "keep them on the CPU list 0-1 (the housekeeping CPUs): for pid in 55; do "
                   "taskset -pc 0-1 $pid; done (the kernel may widen them again when a CPU comes "
                   "online)");
    CHECK(c.fix.find("workqueue/cpumask") == std::string::npos);
    // once kcompactd0 is moved, nothing is left to do: what cannot move is named, not a finding
    v.processes.value->back().threads.front().allowed = cpus("0-1");
    Check left = check_reserved_cpu_tasks(v, e);
    CHECK(left.status == Status::ok);
    CHECK(left.reason == "only the profile's services and per-CPU kernel threads may run on "
                         "reserved CPUs 2-3, and 2 kernel threads the kernel does not let anyone "
                         "move (PF_NO_SETAFFINITY; the workqueue cpumask already holds only CPUs "
                         "0-1): 'kworker/R-kbloc' (pid 40, CPUs 0-3) and 'kworker/R-md' (pid 41, "
                         "CPUs 0-3)");
    CHECK(left.fix.empty());
}

TEST_CASE("a foreign real-time task above the audio threads on reserved CPUs warns") {
    Expectation e = with_mpd();
    SystemView v = with(
        {mpd_process(), kthread(25, "migration/2", "2", SchedPolicy::fifo, 99),
         process(301, "multipathd", "/system.slice/multipathd.service", "0-3", SchedPolicy::rr, 99),
         process(302, "low", "/", "0-3", SchedPolicy::fifo, 10)});
    Check c = check_rt_above_audio(v, e);
    CHECK(c.status == Status::warn);
    CHECK(c.reason == "1 real-time task at or above priority 40, the audio threads', may run on "
                      "reserved CPUs 2-3: 'multipathd' (tid 301, rr 99, CPUs 0-3)");
    CHECK(c.fix == "lower them below 40: for tid in 301; do chrt -f -p 39 $tid; done; or keep "
                   "them off the reserved CPUs with the CPU list 0-1 (the housekeeping CPUs): for "
                   "tid in 301; do taskset -pc 0-1 $tid; done");
}

TEST_CASE("rt-above-audio offers taskset only for threads the kernel lets move") {
    Expectation e = with_mpd();
    // per-CPU kthreads (smpboot): PF_NO_SETAFFINITY, so taskset fails with EINVAL
    SystemView v = with({mpd_process(),
                         kthread(70, "idle_inject/2", "2", SchedPolicy::fifo, 50, k_no_setaffinity),
                         kthread(71, "ktimers/3", "3", SchedPolicy::fifo, 50, k_no_setaffinity)});
    Check c = check_rt_above_audio(v, e);
    CHECK(c.status == Status::warn);
    CHECK(c.reason == "2 real-time tasks at or above priority 40, the audio threads', may run on "
                      "reserved CPUs 2-3: 'idle_inject/2' (tid 70, fifo 50, CPU 2) and "
                      "'ktimers/3' (tid 71, fifo 50, CPU 3); the kernel does not let anyone move "
                      "'idle_inject/2' and 'ktimers/3' (PF_NO_SETAFFINITY: taskset refuses them)");
    CHECK(c.fix == "lower them below 40: for tid in 70 71; do chrt -f -p 39 $tid; done");
    // one that can move gets its taskset, the others not
    v.processes.value->push_back(process(302, "burner", "/", "0-3", SchedPolicy::fifo, 60));
    CHECK(check_rt_above_audio(v, e).fix ==
          "lower them below 40: for tid in 70 71 302; do chrt -f -p 39 $tid; done; or keep "
          "those taskset can move off the reserved CPUs with the CPU list 0-1 (the housekeeping "
          "CPUs): for tid in 302; do taskset -pc 0-1 $tid; done");
}

TEST_CASE("rt-above-audio: the timer threads at the layout's priority are the profile's own "
          "plan, not a finding") {
    Expectation e = with_mpd();
    core::IrqLayout layout;
    layout.sound = 41;
    layout.timers = 42; // tuning.irqs.timer_threads on PREEMPT_RT: sound + 1
    e.irqs = layout;
    SystemView v =
        with({mpd_process(), kthread(71, "ktimers/2", "2", SchedPolicy::fifo, 42, k_no_setaffinity),
              kthread(72, "ktimers/3", "3", SchedPolicy::fifo, 42, k_no_setaffinity)});
    v.sound_cards.value = std::vector<system::SoundCard>{};
    v.irq_lines.value = std::vector<system::IrqLine>{};
    Check planned = check_rt_above_audio(v, e);
    CHECK(planned.status == Status::ok);
    CHECK(planned.fix.empty());
    // away from the plan it is reported again
    v.processes.value->at(2).threads[0].rt_priority = 60;
    Check off = check_rt_above_audio(v, e);
    CHECK(off.status == Status::warn);
    CHECK(off.reason.find("'ktimers/3' (tid 72, fifo 60, CPU 3)") != std::string::npos);
    CHECK(off.reason.find("ktimers/2") == std::string::npos);
    // without timer_threads the layout leaves them alone, and 42 is above the audio threads
    e.irqs->timers.reset();
    v.processes.value->at(2).threads[0].rt_priority = 42;
    CHECK(check_rt_above_audio(v, e).status == Status::warn);
}

TEST_CASE("the sound path's IRQ threads on the reserved CPUs are expected, at the planned priority "
          "only") {
    Expectation e = with_mpd();
    core::IrqLayout layout;
    layout.sound = 41;
    e.irqs = layout;
    SystemView v = with({mpd_process(), kthread(90, "irq/33-xhci_hcd", "2", SchedPolicy::fifo, 41),
                         kthread(91, "irq/34-eth0", "2", SchedPolicy::fifo, 41)});
    system::SoundCard card;
    card.number = 1;
    card.irqs.push_back({33, "USB host controller of bus 1"});
    v.sound_cards.value = std::vector<system::SoundCard>{card};
    v.irq_lines.value = std::vector<system::IrqLine>{};
    Check c = check_rt_above_audio(v, e);
    CHECK(c.status == Status::warn);
    CHECK(c.reason == "1 real-time task at or above priority 40, the audio threads', may run on "
                      "reserved CPUs 2-3: 'irq/34-eth0' (tid 91, fifo 41, CPU 2)");
    // At another priority than planned, the card's own IRQ thread is reported too.
    v.processes.value->at(1).threads[0].rt_priority = 60;
    CHECK(check_rt_above_audio(v, e).reason.find("'irq/33-xhci_hcd' (tid 90, fifo 60") !=
          std::string::npos);
    // Without tuning.irqs nothing is excused.
    e.irqs.reset();
    v.processes.value->at(1).threads[0].rt_priority = 41;
    CHECK(check_rt_above_audio(v, e).reason.find("'irq/33-xhci_hcd'") != std::string::npos);
}

TEST_CASE("a service's own threads above its audio threads invert them and fail") {
    Expectation e = with_mpd();
    Process mpd = mpd_process();
    mpd.threads[0].policy = SchedPolicy::rr; // unit-wide rr 45, as in the measured case
    mpd.threads[0].rt_priority = 45;
    mpd.threads.push_back(thread(817, "player", SchedPolicy::rr, 45, "2-3"));
    Check c = check_rt_above_audio(with({mpd}), e);
    CHECK(c.status == Status::fail);
    CHECK(c.reason == "'mpd.service' runs other threads at or above its own audio threads (fifo "
                      "40): 'mpd' (tid 812, rr 45) and 'player' (tid 817, rr 45); they make the "
                      "audio threads wait (measured on MPD: 47 ms without the CPU, 16 dropouts in "
                      "10.5 s)");
    CHECK(c.fix == "remove the unit-wide priority (tuning.services.mpd.policy: app), apply and "
                   "restart 'mpd.service'");
    CHECK(check_rt_above_audio(with({mpd_process()}), e).status == Status::ok);
}

TEST_CASE("without a profile IRQ checks that cannot read the isolated CPUs warn and never say ok") {
    SystemView v = with({}, {irq(28, "virtio0-config", "0-3", "2")});
    v.cpus.isolated.value.reset();
    v.cpus.isolated.problem =
        "cannot read '/sys/devices/system/cpu/isolated': No such file or directory";
    v.cpus.nohz_full.value.reset();
    v.cpus.nohz_full.problem = "cannot read '/sys/devices/system/cpu/nohz_full': No such file or "
                               "directory";
    for (const Check& c : {check_irq_affinity(v, nullptr), check_unmovable_irqs(v, nullptr)}) {
        CHECK(c.status == Status::warn);
        CHECK(c.reason == "cannot read '/sys/devices/system/cpu/isolated': No such file or "
                          "directory; which CPUs are reserved is not known");
    }
    // With a profile the reserved CPUs are the profile's.
    Expectation e = with_mpd();
    CHECK(check_irq_affinity(v, &e).status == Status::warn);
    CHECK(check_irq_affinity(v, &e).reason.starts_with("1 IRQ is delivered to reserved CPUs 2-3"));
}

namespace {

// An x86 box with MPD at fifo 40 on CPUs 2-3: an HDA card on IRQ 24, a USB DAC behind the
// xhci controller on IRQ 33, the network on IRQ 40; tuning.irqs laid out as 41 for the
// sound path, 39 for the others, on the housekeeping CPUs 0-1.
struct SoundBox {
    Expectation e = with_mpd();
    SystemView v;
    SoundBox() {
        core::IrqLayout layout;
        layout.sound = 41;
        layout.sound_reason = "one above MPD's fifo 40";
        layout.others = 39;
        e.irqs = layout;
        e.sound_irq_cpus = cpus("0-1");
        v = with({mpd_process(), kthread(90, "irq/24-snd_hda_", "0-1", SchedPolicy::fifo, 41),
                  kthread(91, "irq/33-xhci_hcd", "0-1", SchedPolicy::fifo, 41),
                  kthread(92, "irq/40-eth0", "0-1", SchedPolicy::fifo, 39)},
                 {irq(24, "snd_hda_intel:card0", "0-1", ""), irq(33, "xhci_hcd", "0-1", ""),
                  irq(40, "eth0", "0-1", "")});
        system::SoundCard hda, usb;
        hda.number = 0;
        hda.id = "Intel";
        hda.irqs.push_back({24, "the PCI function's MSI"});
        usb.number = 1;
        usb.id = "DAC";
        usb.usb = true;
        usb.irqs.push_back({33, "USB host controller of bus 1"});
        v.sound_cards.value = std::vector<system::SoundCard>{hda, usb};
        v.irq_lines.value =
            std::vector<system::IrqLine>{{24, {"snd_hda_intel:card0"}, "PCI-MSI", {}},
                                         {33, {"xhci_hcd"}, "PCI-MSI", {}},
                                         {40, {"eth0"}, "PCI-MSI", {}}};
    }
    Thread& thread_of(int pid) {
        for (Process& p : *v.processes.value)
            if (p.pid == pid)
                return p.threads.front();
        throw std::runtime_error("no pid");
    }
    Check check() const { return *check_sound_irqs(v, e); }
};

} // namespace

TEST_CASE("sound-irqs: each card's IRQ thread at the planned priority and CPUs is ok") {
    SoundBox box;
    Check c = box.check();
    CHECK(c.status == Status::ok);
    CHECK(c.reason == "IRQ 24 'snd_hda_intel:card0' (card 0 'Intel'): 'irq/24-snd_hda_' fifo 41 "
                      "on CPUs 0-1 and IRQ 33 'xhci_hcd' (card 1 'DAC'): 'irq/33-xhci_hcd' fifo "
                      "41 on CPUs 0-1; no other IRQ thread at or above fifo 41");
    CHECK(c.fix.empty());
    // No IRQ tuning in the profile: no check.
    box.e.irqs.reset();
    CHECK_FALSE(check_sound_irqs(box.v, box.e));
}

TEST_CASE("sound-irqs: a card's IRQ thread at the kernel's 50 fails, with the unit to run") {
    SoundBox box;
    box.thread_of(91).rt_priority = 50;
    Check c = box.check();
    CHECK(c.status == Status::fail);
    CHECK(c.reason == "IRQ 33 'xhci_hcd' (card 1 'DAC'): thread 'irq/33-xhci_hcd' runs fifo 50, "
                      "not the planned fifo 41 (one above MPD's fifo 40)");
    CHECK(c.fix.starts_with("run 'systemctl start rtprov-irq-tune@boot.service'"));
}

TEST_CASE("sound-irqs: an unthreaded IRQ fails; the fix depends on what was planned") {
    SoundBox box;
    box.v.processes.value->erase(box.v.processes.value->begin() + 1); // no irq/24 thread
    Check c = box.check();
    CHECK(c.status == Status::fail);
    CHECK(c.reason.starts_with("IRQ 24 'snd_hda_intel:card0' (card 0 'Intel') has no thread: its "
                               "handler runs in hard interrupt context"));
    CHECK(c.fix.starts_with("set tuning.irqs.threaded: on (threadirqs), or boot the PREEMPT_RT"));
    box.e.kernel_params.push_back({"threadirqs", "", true});
    CHECK(box.check().fix.starts_with("reboot: the planned 'threadirqs' is not on the running "
                                      "kernel's command line"));
}

TEST_CASE("sound-irqs: an IRQ off the planned CPUs fails when it can move, warns when not") {
    SoundBox box;
    box.v.irqs.value->at(0).affinity = cpus("0-3");
    Check c = box.check();
    CHECK(c.status == Status::fail);
    CHECK(c.reason == "IRQ 24 'snd_hda_intel:card0' (card 0 'Intel') may run on CPUs 0-3, not "
                      "only the planned CPUs 0-1");
    box.v.irqs.value->at(0).affinity_writable = false;
    c = box.check();
    CHECK(c.status == Status::warn);
    CHECK(c.reason.ends_with("; but IRQ 24 'snd_hda_intel:card0' (card 0 'Intel') may run on CPUs "
                             "0-3, not only the planned CPUs 0-1; its controller does not let it "
                             "move (smp_affinity_list is read-only)"));
}

TEST_CASE("sound-irqs: a shared line warns; other IRQ threads at or above the sound path fail") {
    SoundBox box;
    box.v.irq_lines.value->at(0).actions.push_back("ehci_hcd:usb2");
    Check c = box.check();
    CHECK(c.status == Status::warn);
    CHECK(c.reason.find("IRQ 24 'snd_hda_intel:card0' (card 0 'Intel') is shared by 2 handlers "
                        "(snd_hda_intel:card0 and ehci_hcd:usb2)") != std::string::npos);
    box.v.irq_lines.value->at(0).actions.pop_back();
    box.thread_of(92).rt_priority = 50;
    c = box.check();
    CHECK(c.status == Status::fail);
    CHECK(c.reason == "other IRQ threads at or above the sound path's fifo 41: 'irq/40-eth0' "
                      "(fifo 50)");
    // Below the sound path but not at the others' planned 39: a device added after boot.
    box.thread_of(92).rt_priority = 40;
    c = box.check();
    CHECK(c.status == Status::warn);
    CHECK(c.reason.ends_with("; but IRQ threads not at the planned fifo 39 of the others (a device "
                             "added after boot, or changed by hand): 'irq/40-eth0' (fifo 40)"));
}

TEST_CASE("sound-irqs: the names of cards, handlers and threads are shown on one line") {
    SoundBox box;
    box.v.sound_cards.value->at(1).id = "D\nAC";
    box.v.irq_lines.value->at(1).actions = {"xhci\x1b_hcd", "second\nresult: passed"};
    box.thread_of(91).comm = "irq/33-x\nb";
    box.thread_of(91).rt_priority = 50;
    Check c = box.check();
    CHECK(c.reason == "IRQ 33 'xhci\\x1b_hcd' (card 1 'D\\x0aAC'): thread 'irq/33-x\\x0ab' runs "
                      "fifo 50, not the planned fifo 41 (one above MPD's fifo 40); also IRQ 33 "
                      "'xhci\\x1b_hcd' (card 1 'D\\x0aAC') is shared by 2 handlers "
                      "(xhci\\x1b_hcd and second\\x0aresult: passed): each of them runs in the "
                      "sound path's thread, at its priority");
}

TEST_CASE("sound-irqs: no card, a name glob, and what could not be read") {
    SoundBox box;
    box.v.sound_cards.value->clear();
    Check c = box.check();
    CHECK(c.status == Status::warn);
    CHECK(c.reason == "profile 'box' sets the sound path's IRQ threads to fifo 41, but no IRQ "
                      "feeds a sound card (no card in /proc/asound/cards)");
    // A glob in tuning.irqs.sound_names makes the xhci controller's IRQ the sound path's.
    box.e.sound_names = {"xhci*"};
    c = box.check();
    CHECK(c.status == Status::fail); // the HDA IRQ's thread at 41 is not the sound path now
    CHECK(c.reason == "other IRQ threads at or above the sound path's fifo 41: "
                      "'irq/24-snd_hda_' (fifo 41)");
    box.thread_of(90).rt_priority = 39;
    c = box.check();
    CHECK(c.status == Status::ok);
    CHECK(c.reason.starts_with("IRQ 33 'xhci_hcd' (named by tuning.irqs.sound_names): "));
    // A glob that matches nothing is not ok: the profile meant an IRQ the audit cannot see.
    box.e.sound_names = {"xhci*", "bcm2835-dma-nothing*"};
    c = box.check();
    CHECK(c.status == Status::warn);
    CHECK(c.reason.find("but tuning.irqs.sound_names 'bcm2835-dma-nothing*' matches no IRQ's "
                        "handler (/sys/kernel/irq/*/actions)") != std::string::npos);
    // No ALSA at all: the names still name the sound path, as irq-tune applies them.
    box.e.sound_names = {"xhci*"};
    box.v.sound_cards.value.reset();
    box.v.sound_cards.absent = true;
    c = box.check();
    CHECK(c.status == Status::warn);
    CHECK(c.reason.starts_with("IRQ 33 'xhci_hcd' (named by tuning.irqs.sound_names): "));
    box.v.processes.value.reset();
    box.v.processes.problem = "cannot read '/proc': Permission denied";
    c = box.check();
    CHECK(c.status == Status::warn);
    CHECK(c.reason == "cannot read '/proc': Permission denied");
}

TEST_CASE("shared_by_devices: several devices' handlers, not one driver's several") {
    CHECK_FALSE(shared_by_devices({}));
    CHECK_FALSE(shared_by_devices({"snd_hda_intel:card0"}));
    CHECK_FALSE(shared_by_devices({"dwc_otg", "dwc_otg_pcd", "dwc_otg_hcd:usb1"}));
    CHECK(shared_by_devices({"snd_hda_intel:card0", "ehci_hcd:usb2"}));
    CHECK(shared_by_devices({"snd_hda_intel:card0", "snd_hda_intel:card1"}));
    CHECK(shared_by_devices({"dwc_otg", "dwc_otgx"}));
}

TEST_CASE("sound-irq-shared: profile or not, a card's or a USB controller's line shared with "
          "another device warns, with the fix for each") {
    SoundBox box;
    Check alone = check_sound_irq_sharing(box.v, nullptr);
    CHECK(alone.status == Status::ok);
    CHECK(alone.reason == "no interrupt of the sound path is shared: IRQ 24 (card 0 'Intel'): "
                          "'snd_hda_intel:card0' and IRQ 33 (card 1 'DAC'): 'xhci_hcd'");
    box.v.irq_lines.value->at(0).actions.push_back("ehci_hcd:usb2");
    Check card = check_sound_irq_sharing(box.v, nullptr);
    CHECK(card.status == Status::warn);
    CHECK(card.reason.starts_with("IRQ 24 (card 0 'Intel') is shared by 'snd_hda_intel:card0', "
                                  "'ehci_hcd:usb2': each interrupt runs the other device's "
                                  "handler too"));
    CHECK(card.fix.starts_with("give the card an interrupt of its own: its driver's MSI"));
    CHECK(card.fix.find("lsusb") == std::string::npos);
    // with the profile's IRQ layout, the other handler's thread gets the sound priority
    CHECK(check_sound_irq_sharing(box.v, &box.e).reason.find("with tuning.irqs") !=
          std::string::npos);
    box.v.irq_lines.value->at(0).actions.pop_back();

    // a USB host controller with no card behind it yet, sharing its line
    box.v.irq_lines.value->push_back({16, {"ehci_hcd:usb2", "eth1"}, "IO-APIC", 16});
    box.v.usb_hosts.push_back({2, "0000:00:1d.0", {16}});
    Check usb = check_sound_irq_sharing(box.v, nullptr);
    CHECK(usb.status == Status::warn);
    CHECK(usb.reason.starts_with("IRQ 16 (the host controller of USB bus 2 (0000:00:1d.0)) is "
                                 "shared by 'ehci_hcd:usb2', 'eth1'"));
    CHECK(usb.fix == "plug the USB DAC into a port of a USB controller whose interrupt is not "
                     "shared ('lsusb -t' shows which bus a port is on)");
}

TEST_CASE("sound-irq-shared: no ALSA is ok; a card whose interrupt cannot be found is named, "
          "and when none can be, it warns") {
    SoundBox box;
    box.v.sound_cards = Fact<std::vector<system::SoundCard>>::failed("no ALSA", true);
    Check none = check_sound_irq_sharing(box.v, nullptr);
    CHECK(none.status == Status::ok);
    CHECK(none.reason == "the kernel has no ALSA (/proc/asound/cards is missing), and no USB "
                         "host controller was found");

    system::SoundCard headphones;
    headphones.number = 0;
    headphones.id = "Headphones";
    headphones.device = "/sys/devices/platform/soc/fe00b840.mailbox/bcm2835_audio";
    headphones.problem = "no interrupt was found by device";
    system::SoundCard virtual_card;
    virtual_card.number = 2;
    virtual_card.id = "Loopback";
    virtual_card.problem = "it has no device in sysfs: a virtual card, which no interrupt feeds";
    box.v.sound_cards.value = std::vector<system::SoundCard>{headphones, virtual_card};
    box.v.sound_cards.problem.clear();
    Check unseen = check_sound_irq_sharing(box.v, nullptr);
    CHECK(unseen.status == Status::warn);
    CHECK(unseen.reason == "no sound card's interrupt was found, so whether one is shared cannot "
                           "be seen: card 0 'Headphones': no interrupt was found by device");
    CHECK(unseen.fix.find("tuning.irqs.sound_names") != std::string::npos);
    // the profile names the card's interrupt: then it is judged
    box.e.sound_names = {"xhci_hcd"};
    Check named = check_sound_irq_sharing(box.v, &box.e);
    CHECK(named.status == Status::ok);
    CHECK(named.reason == "no interrupt of the sound path is shared: IRQ 33 (named by "
                          "tuning.irqs.sound_names): 'xhci_hcd'; not judged: card 0 "
                          "'Headphones': no interrupt was found by device");
    // what cannot be read is said, never ok
    box.v.irq_lines = Fact<std::vector<system::IrqLine>>::failed("cannot list '/sys/kernel/irq'");
    CHECK(check_sound_irq_sharing(box.v, nullptr).status == Status::warn);
}
