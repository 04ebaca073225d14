// SPDX-License-Identifier: Apache-2.0
#include "provisioner/live/irq_tune.hpp"

#include "tests/unit/catch.hpp"
#include "tests/unit/temp_dir.hpp"

#include "provisioner/core/fd.hpp"
#include "provisioner/core/text.hpp"

#include <fcntl.h>
#include <sched.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <thread>

#include <filesystem>
#include <map>

using namespace rtprov;
using namespace rtprov::live;

namespace {

// An x86 box with an HDA card on IRQ 35, a network card on IRQ 40 and a disk on 41, all
// threaded; PREEMPT_RT's timer thread for CPU 0; one user process. The kernel calls are
// a table: what sched_setscheduler would set, what the files would hold.
class Box {
  public:
    TempDir dir;
    std::map<int, ThreadSched> sched;
    std::map<std::string, std::string> writes;
    std::map<std::string, int> refuse; // path → errno

    Box() {
        dir.write("proc/asound/cards", " 0 [Intel          ]: HDA-Intel - HDA Intel\n"
                                       "                      HDA Intel at 0xfebf0000 irq 35\n");
        irq(35, "snd_hda_intel:card0");
        irq(40, "enp1s0");
        irq(41, "ahci[0000:00:1f.2]");
        dir.write("sys/devices/pci0000:00/0000:00:04.0/msi_irqs/35", "msi\n");
        std::filesystem::create_directories(dir.path() +
                                            "/sys/devices/pci0000:00/0000:00:04.0/sound/card0");
        std::filesystem::create_directories(dir.path() + "/sys/class/sound");
        std::filesystem::create_symlink("../../devices/pci0000:00/0000:00:04.0/sound/card0",
                                        dir.path() + "/sys/class/sound/card0");
        std::filesystem::create_symlink(
            "../..", dir.path() + "/sys/devices/pci0000:00/0000:00:04.0/sound/card0/device");
        dir.write("sys/devices/pci0000:00/0000:00:04.0/sound/card0/id", "Intel\n");
        kthread(101, "irq/35-snd_hda_", {SCHED_FIFO, 50});
        kthread(102, "irq/40-enp1s0", {SCHED_FIFO, 50});
        kthread(103, "irq/41-ahci[000", {SCHED_FIFO, 50});
        kthread(20, "ktimers/0", {SCHED_FIFO, 1});
        kthread(21, "kworker/0:1", {SCHED_OTHER, 0});
        dir.write("proc/900/comm", "mpd\n");
        dir.write("proc/900/status", "Name:\tmpd\nPPid:\t1\n");
        sched[900] = {SCHED_OTHER, 0};
        dir.write("sys/devices/virtual/workqueue/cpumask", "f\n");
        dir.write("sys/devices/system/cpu/online", "0-3\n");
        // the state's folder, ours and closed to others, as /run/rtprov is
        std::filesystem::create_directory(dir.path() + "/run");
        std::filesystem::permissions(dir.path() + "/run", std::filesystem::perms::owner_all);
    }

    void irq(unsigned n, const std::string& action) const {
        const std::string d = "sys/kernel/irq/" + std::to_string(n) + "/";
        dir.write(d + "actions", action + "\n");
        dir.write(d + "chip_name", "PCI-MSI\n");
        dir.write(d + "hwirq", "0\n");
        dir.write("proc/irq/" + std::to_string(n) + "/smp_affinity_list", "0-3\n");
    }

    void kthread(int pid, const std::string& comm, ThreadSched s) {
        dir.write("proc/" + std::to_string(pid) + "/comm", comm + "\n");
        dir.write("proc/" + std::to_string(pid) + "/status",
                  "Name:\t" + comm + "\nUmask:\t0000\nState:\tS\nPPid:\t2\nTracerPid:\t0\n");
        sched[pid] = s;
    }

    KernelCalls calls() {
        KernelCalls c;
        c.get_sched = [this](int pid) -> std::optional<ThreadSched> {
            auto it = sched.find(pid);
            return it == sched.end() ? std::nullopt : std::optional(it->second);
        };
        c.set_sched = [this](int pid, const ThreadSched& s) -> std::string {
            sched[pid] = s;
            return "";
        };
        c.write = [this](const std::string& path, const std::string& value) -> int {
            const std::string relative = path.substr(dir.path().size() + 1);
            if (refuse.count(relative))
                return refuse[relative];
            writes[relative] = value;
            dir.write(relative, value);
            return 0;
        };
        return c;
    }

    std::string state() const { return dir.path() + "/run/irq-tune.state"; }
};

IrqTuneRequest mpd_layout() {
    IrqTuneRequest r;
    r.sound_priority = 41;
    r.sound_cpus = core::CpuList({0, 1});
    r.other_priority = 39;
    r.timer_priority = 42;
    r.workqueue_cpus = core::CpuList({0, 1});
    return r;
}

} // namespace

TEST_CASE("irq-tune: the card's IRQ thread above MPD, the others below, timers above both") {
    Box box;
    IrqTuneResult r = tune_irqs(box.dir.path(), mpd_layout(), box.calls(), box.state());
    CHECK(r.ok);
    CHECK(r.findings.empty());
    CHECK(box.sched[101] == ThreadSched{SCHED_FIFO, 41});
    CHECK(box.sched[102] == ThreadSched{SCHED_FIFO, 39});
    CHECK(box.sched[103] == ThreadSched{SCHED_FIFO, 39});
    CHECK(box.sched[20] == ThreadSched{SCHED_FIFO, 42});
    CHECK(box.sched[21] == ThreadSched{SCHED_OTHER, 0});  // not an IRQ or timer thread
    CHECK(box.sched[900] == ThreadSched{SCHED_OTHER, 0}); // not a kernel thread
    CHECK(box.writes["proc/irq/35/smp_affinity_list"] == "0-1\n");
    CHECK_FALSE(box.writes.count("proc/irq/40/smp_affinity_list")); // irqaffinity= did those
    CHECK(box.writes["sys/devices/virtual/workqueue/cpumask"] == "3\n");
    REQUIRE(r.cards.size() == 1);
    CHECK(r.done.size() == 6);

    SECTION("a second run changes nothing and keeps the first values saved") {
        box.writes.clear();
        IrqTuneResult again = tune_irqs(box.dir.path(), mpd_layout(), box.calls(), box.state());
        CHECK(again.done.empty());
        CHECK(box.writes.empty());
    }
    SECTION("restore puts back what was there before, byte for byte, and forgets it") {
        // a later run (a USB DAC plugged in) must not overwrite the saved originals
        tune_irqs(box.dir.path(), mpd_layout(), box.calls(), box.state());
        IrqTuneResult back = restore_irqs(box.dir.path(), box.calls(), box.state());
        CHECK(back.ok);
        CHECK(box.sched[101] == ThreadSched{SCHED_FIFO, 50});
        CHECK(box.sched[102] == ThreadSched{SCHED_FIFO, 50});
        CHECK(box.sched[20] == ThreadSched{SCHED_FIFO, 1});
        CHECK(box.dir.read("proc/irq/35/smp_affinity_list") == "0-3\n");
        CHECK(box.dir.read("sys/devices/virtual/workqueue/cpumask") == "f\n");
        CHECK_FALSE(std::filesystem::exists(box.state()));
        CHECK(restore_irqs(box.dir.path(), box.calls(), box.state()).done.empty());
    }
    SECTION("a thread whose pid went to another is left alone on restore") {
        box.kthread(102, "kworker/1:0", {SCHED_OTHER, 0});
        IrqTuneResult back = restore_irqs(box.dir.path(), box.calls(), box.state());
        CHECK(box.sched[102] == ThreadSched{SCHED_OTHER, 0});
        CHECK(back.findings.size() == 1);
        CHECK(back.findings[0].find("'irq/40-enp1s0' (pid 102) has ended") != std::string::npos);
    }
}

TEST_CASE("irq-tune: an IRQ whose affinity cannot change is a finding, not a failure") {
    Box box;
    box.refuse["proc/irq/35/smp_affinity_list"] = EIO;
    IrqTuneResult r = tune_irqs(box.dir.path(), mpd_layout(), box.calls(), box.state());
    CHECK(r.ok);
    REQUIRE(r.findings.size() == 1);
    CHECK(r.findings[0] ==
          "IRQ 35 stays on CPUs 0-3: writing 0-1 to /proc/irq/35/smp_affinity_list "
          "failed (Input/output error); its interrupt controller does not move it");
    CHECK(box.sched[101] == ThreadSched{SCHED_FIFO, 41});
}

TEST_CASE("irq-tune: names, a pattern matching nothing, an unthreaded sound IRQ") {
    Box box;
    IrqTuneRequest req = mpd_layout();
    req.sound_names = {"enp*", "nothing-here"};
    box.irq(50, "snd_usb_fake");
    IrqTuneResult r = tune_irqs(box.dir.path(), req, box.calls(), box.state());
    CHECK(box.sched[102] == ThreadSched{SCHED_FIFO, 41}); // named by the profile
    CHECK(box.sched[103] == ThreadSched{SCHED_FIFO, 39});
    bool unmatched = false;
    for (const std::string& f : r.findings)
        unmatched = unmatched || f.find("'nothing-here' matches no IRQ") != std::string::npos;
    CHECK(unmatched);

    req.sound_names = {"snd_usb_*"};
    r = tune_irqs(box.dir.path(), req, box.calls(), box.state());
    bool unthreaded = false;
    for (const std::string& f : r.findings)
        unthreaded = unthreaded || f.starts_with("IRQ 50 feeds a sound card but has no thread");
    CHECK(unthreaded);
}

TEST_CASE("irq-tune: a state file it cannot write stops it before any change") {
    Box box;
    box.dir.write("run/irq-tune.state.new/x", "a folder in the way\n");
    IrqTuneResult r = tune_irqs(box.dir.path(), mpd_layout(), box.calls(), box.state());
    CHECK_FALSE(r.ok);
    CHECK(box.sched[101] == ThreadSched{SCHED_FIFO, 50});
    CHECK(box.writes.empty());
}

// A state file that is not as rtprov wrote it: refused whole, nothing changed or put
// back, the file left as it was.
void check_refused(Box& box, const std::string& expected) {
    const std::string before = box.dir.read("run/irq-tune.state");
    for (bool restore : {true, false}) {
        IrqTuneResult r = restore
                              ? restore_irqs(box.dir.path(), box.calls(), box.state())
                              : tune_irqs(box.dir.path(), mpd_layout(), box.calls(), box.state());
        CHECK_FALSE(r.ok);
        CHECK(r.done.empty());
        REQUIRE(r.findings.size() == 1);
        CHECK(r.findings[0].find(expected) != std::string::npos);
        CHECK(r.findings[0].find("remove the file and run again") != std::string::npos);
    }
    CHECK(box.sched[101] == ThreadSched{SCHED_FIFO, 50});
    CHECK(box.sched[900] == ThreadSched{SCHED_OTHER, 0});
    CHECK(box.writes.empty());
    CHECK(box.dir.read("run/irq-tune.state") == before);
}

TEST_CASE("irq-tune: a damaged state file is refused whole and kept as it is") {
    Box box;
    // the line is named, not quoted (what a file holds stays out of the journal)
    box.dir.write("run/irq-tune.state",
                  "format 2\nthread 101 irq/35-snd_hda_ 1 60\nthread x y\nend 2\n");
    check_refused(box, box.state() + ":3: not a line rtprov writes;");
}

TEST_CASE("irq-tune: a state file cut short is refused, even where what is left parses") {
    Box box;
    tune_irqs(box.dir.path(), mpd_layout(), box.calls(), box.state());
    const std::string whole = box.dir.read("run/irq-tune.state");
    REQUIRE(whole.ends_with("end 6\n"));
    // back to the originals, by hand, so that check_refused sees them untouched
    for (int pid : {101, 102, 103})
        box.sched[pid] = {SCHED_FIFO, 50};
    box.sched[20] = {SCHED_FIFO, 1};
    box.writes.clear();
    SECTION("cut inside a number") {
        const std::size_t at = whole.find("thread 102 irq/40-enp1s0 1 5") + 28;
        box.dir.write("run/irq-tune.state", whole.substr(0, at));
        check_refused(box, "without the 'end' line rtprov writes last: it was cut short");
    }
    SECTION("cut at a line's end") {
        box.dir.write("run/irq-tune.state", whole.substr(0, whole.find("affinity")));
        check_refused(box, "without the 'end' line rtprov writes last: it was cut short");
    }
    SECTION("empty") {
        box.dir.write("run/irq-tune.state", "");
        check_refused(box, "without the 'end' line rtprov writes last: it was cut short");
    }
    SECTION("the end line's count does not match") {
        std::string text = whole;
        text.erase(text.find("thread 103"),
                   text.find('\n', text.find("thread 103")) - text.find("thread 103") + 1);
        box.dir.write("run/irq-tune.state", text);
        check_refused(box, ": not a line rtprov writes");
    }
}

TEST_CASE("irq-tune: a state folder others may write to is refused") {
    Box box;
    std::filesystem::permissions(box.dir.path() + "/run", std::filesystem::perms::all);
    IrqTuneResult r = tune_irqs(box.dir.path(), mpd_layout(), box.calls(), box.state());
    CHECK_FALSE(r.ok);
    REQUIRE(r.findings.size() == 1);
    CHECK(r.findings[0].find("with mode 0777: it must be a folder of uid") != std::string::npos);
    CHECK(box.writes.empty());
    CHECK(box.sched[101] == ThreadSched{SCHED_FIFO, 50});
    r = restore_irqs(box.dir.path(), box.calls(), box.state());
    CHECK_FALSE(r.ok); // not "nothing to change": it could not see
}

TEST_CASE("irq-tune: a forged state line for a process that is no IRQ thread is refused") {
    Box box;
    box.dir.write("run/irq-tune.state", "format 2\nthread 900 mpd 1 97\nend 1\n");
    check_refused(box, box.state() + ":2: not a line rtprov writes;");
}

TEST_CASE("irq-tune: a state file others may write, or a symlink, is refused") {
    Box box;
    box.dir.write("run/irq-tune.state", "thread 101 irq/35-snd_hda_ 1 60\nend 1\n");
    SECTION("writable by others") {
        std::filesystem::permissions(box.state(), std::filesystem::perms::others_write,
                                     std::filesystem::perm_options::add);
        check_refused(box, "with mode 0646: rtprov writes it as uid " +
                               std::to_string(::geteuid()) + ", writable by no one else");
    }
    SECTION("a symlink to another file") {
        box.dir.write("elsewhere", "root:*:20228:0:99999:7:::\n");
        std::filesystem::remove(box.state());
        std::filesystem::create_symlink(box.dir.path() + "/elsewhere", box.state());
        for (bool restore : {true, false}) {
            IrqTuneResult r =
                restore ? restore_irqs(box.dir.path(), box.calls(), box.state())
                        : tune_irqs(box.dir.path(), mpd_layout(), box.calls(), box.state());
            CHECK_FALSE(r.ok);
            REQUIRE(r.findings.size() == 1);
            CHECK(r.findings[0].find("it is a symlink") != std::string::npos);
            CHECK(r.findings[0].find("root:*") == std::string::npos);
        }
        CHECK(std::filesystem::is_symlink(box.state()));
        CHECK(box.writes.empty());
    }
}

TEST_CASE("irq-tune: a thread the state names that is now a user process is left alone") {
    Box box;
    tune_irqs(box.dir.path(), mpd_layout(), box.calls(), box.state());
    // pid 101 ended and the pid went to a user process that took the IRQ thread's name
    box.dir.write("proc/101/status", "Name:\tirq/35-snd_hda_\nPPid:\t1\n");
    box.sched[101] = {SCHED_OTHER, 0};
    IrqTuneResult back = restore_irqs(box.dir.path(), box.calls(), box.state());
    CHECK(box.sched[101] == ThreadSched{SCHED_OTHER, 0});
    CHECK(box.sched[102] == ThreadSched{SCHED_FIFO, 50});
}

TEST_CASE("irq-tune: CPUs that are not online are refused before any change") {
    Box box;
    IrqTuneRequest req = mpd_layout();
    req.workqueue_cpus = core::CpuList({0, 5});
    IrqTuneResult r = tune_irqs(box.dir.path(), req, box.calls(), box.state());
    CHECK_FALSE(r.ok);
    REQUIRE(r.findings.size() == 1);
    CHECK(r.findings[0] == "the workqueues' CPUs 0,5 include CPUs that are not online (5; "
                           "/sys/devices/system/cpu/online: 0-3); nothing changed: plan for "
                           "this machine's CPUs (board.cpus)");
    CHECK(box.sched[101] == ThreadSched{SCHED_FIFO, 50});
    CHECK(box.writes.empty());
    CHECK_FALSE(std::filesystem::exists(box.state()));
}

TEST_CASE("irq-tune: an IRQ that went away, and a write the kernel refuses otherwise") {
    Box box;
    box.refuse["proc/irq/35/smp_affinity_list"] = ENOENT;
    IrqTuneResult r = tune_irqs(box.dir.path(), mpd_layout(), box.calls(), box.state());
    CHECK(r.ok);
    REQUIRE(r.findings.size() == 1);
    CHECK(r.findings[0] == "IRQ 35 went away with its device before its CPUs were set");

    Box other;
    other.refuse["proc/irq/35/smp_affinity_list"] = EINVAL;
    r = tune_irqs(other.dir.path(), mpd_layout(), other.calls(), other.state());
    CHECK_FALSE(r.ok);
    REQUIRE(r.findings.size() == 1);
    CHECK(r.findings[0].starts_with("cannot write 0-1 to /proc/irq/35/smp_affinity_list: "));
}

TEST_CASE("irq-tune: the done line shows the value it found, a run over a run too") {
    Box box;
    box.sched[101] = {SCHED_FIFO, 60};
    tune_irqs(box.dir.path(), mpd_layout(), box.calls(), box.state());
    IrqTuneRequest req = mpd_layout();
    req.sound_priority = 45;
    IrqTuneResult r = tune_irqs(box.dir.path(), req, box.calls(), box.state());
    REQUIRE(r.done.size() == 1);
    CHECK(r.done[0] == "'irq/35-snd_hda_' fifo 41 -> fifo 45");
    restore_irqs(box.dir.path(), box.calls(), box.state());
    CHECK(box.sched[101] == ThreadSched{SCHED_FIFO, 60}); // the first value seen
}

TEST_CASE("irq-tune: a second run waits for the one holding the state's lock") {
    Box box;
    const std::string lock = box.state() + ".lock";
    core::Fd held(::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
    REQUIRE(::flock(held.get(), LOCK_EX) == 0);
    std::thread releaser([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        // what the first run saved, as it would before letting go
        box.dir.write("run/irq-tune.state", "format 2\nthread 102 irq/40-enp1s0 1 55\nend 1\n");
        held.reset();
    });
    IrqTuneResult r;
    SECTION("a tune") {
        r = tune_irqs(box.dir.path(), mpd_layout(), box.calls(), box.state());
    }
    SECTION("a restore, which finds the state the first run saved meanwhile") {
        box.sched[102] = {SCHED_FIFO, 39};
        r = restore_irqs(box.dir.path(), box.calls(), box.state());
        releaser.join();
        CHECK(r.ok);
        CHECK(box.sched[102] == ThreadSched{SCHED_FIFO, 55});
        return;
    }
    releaser.join();
    CHECK(r.ok);
    // it read the state only once the first run was done: that run's original is kept
    CHECK(box.dir.read("run/irq-tune.state").find("thread 102 irq/40-enp1s0 1 55\n") !=
          std::string::npos);
}

// What the release before format 2 wrote: a header, each name as it was, the end line.
const std::string k_format1_header = "# rtprov irq-tune: the values before rtprov changed them "
                                     "('rtprov rollback --live' puts them back)\n";

TEST_CASE("irq-tune: the PCIe PME thread, named with a space, is saved, read back and restored") {
    // with threadirqs or PREEMPT_RT the PCIe port driver's IRQ has the thread
    // 'irq/122-PCIe PME' (drivers/pci/pcie/pme.c)
    Box box;
    box.irq(122, "PCIe PME");
    box.kthread(122, "irq/122-PCIe PME", {SCHED_FIFO, 50});
    IrqTuneResult r = tune_irqs(box.dir.path(), mpd_layout(), box.calls(), box.state());
    CHECK(r.ok);
    CHECK(r.findings.empty());
    CHECK(box.sched[122] == ThreadSched{SCHED_FIFO, 39});
    CHECK(box.dir.read("run/irq-tune.state").find("\nthread 122 irq/122-PCIe\\x20PME 1 50\n") !=
          std::string::npos);

    // the next run (a sound card appearing, the other instance at boot) reads it
    IrqTuneRequest req = mpd_layout();
    req.other_priority = 38;
    r = tune_irqs(box.dir.path(), req, box.calls(), box.state());
    CHECK(r.ok);
    CHECK(r.findings.empty());
    CHECK(box.sched[122] == ThreadSched{SCHED_FIFO, 38});
    CHECK(std::find(r.done.begin(), r.done.end(), "'irq/122-PCIe PME' fifo 39 -> fifo 38") !=
          r.done.end());

    // and 'rollback --live' puts back what was there before the first
    IrqTuneResult back = restore_irqs(box.dir.path(), box.calls(), box.state());
    CHECK(back.ok);
    CHECK(back.findings.empty());
    CHECK(box.sched[122] == ThreadSched{SCHED_FIFO, 50});
    CHECK(box.sched[102] == ThreadSched{SCHED_FIFO, 50});
    CHECK_FALSE(std::filesystem::exists(box.state()));
}

TEST_CASE("irq-tune: any name the kernel can give round-trips through the state file") {
    // /proc/PID/comm holds any byte but NUL: spaces, tabs, line breaks, bytes that are
    // not UTF-8, a backslash, a name ending in a blank or in a newline of its own
    const std::vector<std::string> names = {
        "irq/60-a b  c",   "irq/61-a\tb",       "irq/62-a\nb",    "irq/63-\xff\xfe\x80\xc2\x9b",
        "irq/64-a\\x20b",  "irq/65-x ",         "irq/66-x\n",     "irq/67-\x01\x1b[2J\x7f",
        "ktimers/\r\n#\n", "irq/68-end 0\nend", "irq/69-Gerät µ", "irq/70-\\",
    };
    Box box;
    for (std::size_t i = 0; i < names.size(); ++i)
        box.kthread(600 + int(i), names[i], {SCHED_FIFO, 10 + int(i)});
    IrqTuneResult r = tune_irqs(box.dir.path(), mpd_layout(), box.calls(), box.state());
    CHECK(r.ok);
    CHECK(r.findings.empty());
    for (std::size_t i = 0; i < names.size(); ++i) {
        INFO(names[i]);
        CHECK(box.sched[600 + int(i)] == ThreadSched{SCHED_FIFO, i == 8 ? 42 : 39});
    }
    // one line per value, each of five fields
    const std::string text = box.dir.read("run/irq-tune.state");
    std::size_t threads = 0;
    for (const std::string& line : core::split(text, '\n'))
        if (line.starts_with("thread ")) {
            ++threads;
            CHECK(core::split(line, ' ').size() == 5);
        }
    CHECK(threads == names.size() + 4);
    // what rtprov says of them stays on one line
    for (const std::string& line : r.done) {
        INFO(line);
        CHECK(line.find_first_of(std::string("\n\r\t\x1b\x7f\0", 6)) == std::string::npos);
    }
    CHECK(std::find(r.done.begin(), r.done.end(), "'irq/62-a\\x0ab' fifo 12 -> fifo 39") !=
          r.done.end());

    // the next run reads it, and the restore puts back each thread by its exact name
    for (std::size_t i = 0; i < names.size(); ++i)
        box.sched[600 + int(i)] = {SCHED_FIFO, 20};
    r = tune_irqs(box.dir.path(), mpd_layout(), box.calls(), box.state());
    CHECK(r.ok);
    CHECK(r.findings.empty());
    CHECK(box.dir.read("run/irq-tune.state") == text); // the first values kept
    box.kthread(606, "irq/66-x", {SCHED_FIFO, 39});    // pid 606 now another name
    IrqTuneResult back = restore_irqs(box.dir.path(), box.calls(), box.state());
    CHECK(back.ok);
    for (std::size_t i = 0; i < names.size(); ++i) {
        INFO(names[i]);
        CHECK(box.sched[600 + int(i)] == ThreadSched{SCHED_FIFO, i == 6 ? 39 : 10 + int(i)});
    }
    REQUIRE(back.findings.size() == 1);
    CHECK(back.findings[0] == "'irq/66-x\\x0a' (pid 606) has ended: nothing of it to put back");
}

TEST_CASE("irq-tune: a name in the state file is read only as rtprov writes it") {
    Box box;
    const auto with = [&](const std::string& field) {
        box.dir.write("run/irq-tune.state",
                      k_format1_header + "format 2\nthread 101 " + field + " 1 60\nend 1\n");
    };
    SECTION("as written, it is read") {
        with("irq/35-snd\\x20hda\\x0a\\xff");
        restore_irqs(box.dir.path(), box.calls(), box.state());
        CHECK_FALSE(std::filesystem::exists(box.state())); // read, nothing to put back
        return;
    }
    SECTION("upper-case hex") {
        with("irq/35-snd\\x0Ahda");
    }
    SECTION("a byte escaped that needs none") {
        with("irq/35-snd\\x5fhda");
    }
    SECTION("a raw byte that is escaped when written") {
        with("irq/35-snd\xffhda");
    }
    SECTION("an escape cut short") {
        with("irq/35-snd\\x2");
    }
    SECTION("another escape") {
        with("irq/35-snd\\nhda");
    }
    SECTION("a NUL") {
        with("irq/35-snd\\x00hda");
    }
    check_refused(box, box.state() + ":3: not a line rtprov writes;");
}

TEST_CASE("irq-tune: a state format it does not know, or a format line out of place") {
    Box box;
    SECTION("a newer format") {
        box.dir.write("run/irq-tune.state", k_format1_header + "format 3\nend 0\n");
        check_refused(box, box.state() +
                               ":2: a state format this rtprov does not read (it reads 2, and "
                               "an earlier rtprov's without a 'format' line): a newer rtprov "
                               "wrote it;");
    }
    SECTION("after a value") {
        box.dir.write("run/irq-tune.state",
                      "affinity 35 0-3\nformat 2\nthread 101 irq/35-snd\\x20 1 60\nend 2\n");
        check_refused(box, box.state() + ":2: not a line rtprov writes (the file has no 'format' "
                                         "line: an earlier rtprov's, whose thread names could "
                                         "not hold a line break);");
    }
    SECTION("a comment below the first line") {
        box.dir.write("run/irq-tune.state",
                      "format 2\n# x\nthread 101 irq/35-snd_hda_ 1 60\nend 1\n");
        check_refused(box, box.state() + ":2: not a line rtprov writes;");
    }
    SECTION("an empty line") {
        box.dir.write("run/irq-tune.state", "format 2\n\nthread 101 irq/35-snd_hda_ 1 60\nend 1\n");
        check_refused(box, box.state() + ":2: not a line rtprov writes;");
    }
}

TEST_CASE("irq-tune: the earlier release's state file is read, a name with a space too") {
    // That release wrote 'thread PID NAME POLICY PRIORITY' with NAME as it was, and then
    // refused its own file when NAME held a space; this reads it.
    Box box;
    box.irq(122, "PCIe PME");
    box.kthread(122, "irq/122-PCIe PME", {SCHED_FIFO, 39});
    box.kthread(123, "irq/123-a  b\tc", {SCHED_FIFO, 39});
    box.sched[101] = {SCHED_FIFO, 41};
    box.dir.write("proc/irq/35/smp_affinity_list", "0-1\n");
    const std::string old = k_format1_header + "thread 101 irq/35-snd_hda_ 1 50\n" +
                            "thread 122 irq/122-PCIe PME 1 50\n" +
                            "thread 123 irq/123-a  b\tc 1 51\n" + "affinity 35 0-3\n" +
                            "workqueue f\n" + "end 5\n";
    box.dir.write("run/irq-tune.state", old);
    std::filesystem::permissions(box.state(), std::filesystem::perms::owner_read |
                                                  std::filesystem::perms::owner_write);
    SECTION("a restore puts back every value it saved") {
        IrqTuneResult back = restore_irqs(box.dir.path(), box.calls(), box.state());
        CHECK(back.ok);
        CHECK(back.findings.empty());
        CHECK(box.sched[101] == ThreadSched{SCHED_FIFO, 50});
        CHECK(box.sched[122] == ThreadSched{SCHED_FIFO, 50});
        CHECK(box.sched[123] == ThreadSched{SCHED_FIFO, 51});
        CHECK(box.dir.read("proc/irq/35/smp_affinity_list") == "0-3\n");
        CHECK_FALSE(std::filesystem::exists(box.state()));
    }
    SECTION("a tune over it keeps its values and writes them in this format") {
        IrqTuneResult r = tune_irqs(box.dir.path(), mpd_layout(), box.calls(), box.state());
        CHECK(r.ok);
        CHECK(r.findings.empty());
        const std::string now = box.dir.read("run/irq-tune.state");
        CHECK(now.find("\nformat 2\n") != std::string::npos);
        CHECK(now.find("\nthread 122 irq/122-PCIe\\x20PME 1 50\n") != std::string::npos);
        CHECK(now.find("\nthread 123 irq/123-a\\x20\\x20b\\x09c 1 51\n") != std::string::npos);
        CHECK(now.find("\naffinity 35 0-3\n") != std::string::npos);
        restore_irqs(box.dir.path(), box.calls(), box.state());
        CHECK(box.sched[122] == ThreadSched{SCHED_FIFO, 50});
        CHECK(box.sched[20] == ThreadSched{SCHED_FIFO, 1});
    }
}

TEST_CASE("irq-tune: the earlier release's file is refused where a line break split a name") {
    Box box;
    SECTION("the rest of the name a line of its own") {
        box.dir.write("run/irq-tune.state",
                      k_format1_header + "thread 101 irq/35-a\nb 1 50\nend 1\n");
        check_refused(box, box.state() + ":2: not a line rtprov writes (the file has no 'format' "
                                         "line: an earlier rtprov's, whose thread names could "
                                         "not hold a line break);");
    }
    SECTION("a line that parses, and the rest of the name a comment") {
        box.dir.write("run/irq-tune.state",
                      k_format1_header + "thread 101 irq/35-a 1 5\n# 1 50\nend 1\n");
        check_refused(box, box.state() + ":3: not a line rtprov writes (");
    }
    SECTION("two lines that parse: the count does not match") {
        box.dir.write("run/irq-tune.state", k_format1_header +
                                                "thread 101 irq/35-a 1 5\nthread 102 irq/40-b 1 "
                                                "50\nend 1\n");
        check_refused(box, box.state() + ":4: not a line rtprov writes (");
    }
}
