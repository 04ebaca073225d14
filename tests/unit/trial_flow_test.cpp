// SPDX-License-Identifier: Apache-2.0
// pipeline/trial.cpp: what 'trial check', 'trial commit', 'trial abort' and first boot do
// with an armed trial, on a temporary root that is its own sysroot.
#include "provisioner/pipeline/trial.hpp"

#include "provisioner/boot/grub.hpp"
#include "provisioner/core/error.hpp"
#include "provisioner/core/plan.hpp"
#include "tests/unit/catch.hpp"
#include "tests/unit/flow_fakes.hpp"
#include "tests/unit/temp_dir.hpp"

using namespace rtprov;
using namespace flow_fakes;

namespace {

std::string grub_block(const std::string& lines) {
    std::string block = "# GRUB Environment Block\n" + lines;
    return block + std::string(1024 - block.size(), '#');
}

// A root with a GRUB trial of profile 'x86-debian13' armed in boot 'boot-1' (next_entry
// set), and a /proc for the boot 'cmdline' of boot 'boot_id'.
struct ArmedTrial {
    TempDir dir;
    ArmedTrial(const std::string& cmdline = "root=/dev/vda1 ro quiet",
               const std::string& boot_id = "boot-2") {
        dir.write("boot/grub/grubenv", grub_block("next_entry=rtprov-trial\n"));
        dir.write("proc/cmdline", cmdline + "\n");
        dir.write("proc/sys/kernel/random/boot_id", boot_id + "\n");
        dir.write("var/lib/rtprov/.keep", "");
        fs::Root root(dir.path());
        target::write_trial_record(root, record());
    }
    static target::TrialRecord record() {
        target::TrialRecord r;
        r.phase = "armed";
        r.id = "5eed1d";
        r.profile = "x86-debian13";
        r.loader = "grub";
        r.armed_at = "2026-12-24T17:00:00Z";
        r.armed_boot = "boot-1";
        r.updated_at = r.armed_at;
        return r;
    }
    target::TrialRecord now() const { return *target::read_trial_record(fs::Root(dir.path())); }
    bool next_entry_armed() const {
        return dir.read("boot/grub/grubenv").find("next_entry=rtprov-trial") != std::string::npos;
    }
};

const std::string k_trial_boot = "root=/dev/vda1 ro rtprov.trial=5eed1d";

struct Flow {
    explicit Flow(const ArmedTrial& trial) : root(trial.dir.path()), lock(root) {}
    fs::Root root;
    fs::RootLock lock;
    FakeRtprov rtprov;
    FakeManager manager;
    RecordingLog log;
    pipeline::Machine machine(target::CommandRunner run = {}) {
        return machine_on(root, lock, rtprov, manager, log, std::move(run));
    }
};

} // namespace

TEST_CASE("a boot that is not the trial's disarms it, then records and tells that it fell back") {
    ArmedTrial trial;
    Flow flow(trial);
    pipeline::Machine machine = flow.machine();
    pipeline::TrialView seen;
    CHECK(pipeline::check_trial(machine, seen) == pipeline::TrialCheck::did_not_come_up);
    CHECK(seen.boot == target::TrialBoot::did_not_start);
    CHECK_FALSE(trial.next_entry_armed());
    const target::TrialRecord now = trial.now();
    CHECK(now.phase == "fell-back");
    CHECK(now.updated_at == k_now);
    CHECK(now.reason ==
          "did not come up: this boot is not the trial's (no rtprov.trial=5eed1d on the kernel "
          "command line): the trial boot panicked, hung and was reset, did not finish its check "
          "in time, or was not booted; the default boot configuration stays (the rest of the "
          "profile stays applied: 'rtprov status')");
    REQUIRE(flow.log.events.size() == 1);
    CHECK(flow.log.events[0].event == pipeline::FlowEvent::trial_fell_back);
    CHECK(flow.log.events[0].priority == pipeline::Priority::warning);
    CHECK(flow.log.events[0].message == "fell back: " + now.reason);
    CHECK(flow.rtprov.runs.empty());
    CHECK(flow.manager.reboots.empty());
}

TEST_CASE("nothing is judged without an armed trial, in its own boot, or on an image") {
    SECTION("the boot it was armed in") {
        ArmedTrial trial("root=/dev/vda1 ro", "boot-1");
        Flow flow(trial);
        pipeline::Machine machine = flow.machine();
        pipeline::TrialView seen;
        CHECK(pipeline::check_trial(machine, seen) == pipeline::TrialCheck::nothing);
        CHECK(seen.boot == target::TrialBoot::not_yet);
        CHECK(trial.now() == ArmedTrial::record());
    }
    SECTION("an image, whose next boot is the trial") {
        ArmedTrial trial(k_trial_boot); // its /proc is no boot's
        Flow flow(trial);
        pipeline::Machine machine = flow.machine();
        machine.booted = false;
        pipeline::TrialView seen;
        CHECK(pipeline::check_trial(machine, seen) == pipeline::TrialCheck::nothing);
        CHECK(seen.boot == target::TrialBoot::not_yet);
        CHECK(flow.rtprov.runs.empty());
    }
    SECTION("no trial") {
        ArmedTrial trial;
        std::filesystem::remove(trial.dir.path() + core::k_trial_record_path);
        Flow flow(trial);
        pipeline::Machine machine = flow.machine();
        pipeline::TrialView seen;
        CHECK(pipeline::check_trial(machine, seen) == pipeline::TrialCheck::nothing);
        CHECK_FALSE(seen.record);
        CHECK(trial.next_entry_armed());
    }
}

TEST_CASE("a trial boot that passes the self-test and the audit is committed by a plain apply") {
    ArmedTrial trial(k_trial_boot);
    Flow flow(trial);
    pipeline::Machine machine = flow.machine();
    pipeline::TrialView seen;
    CHECK(pipeline::check_trial(machine, seen) == pipeline::TrialCheck::committed);
    // The health gate's children (pipeline/health.cpp), on the test's tree as the sysroot.
    const std::string tree = trial.dir.path(), reports = tree + core::k_trial_reports_dir;
    REQUIRE(flow.rtprov.runs.size() == 3);
    CHECK(flow.rtprov.runs[0].args == std::vector<std::string>{"selftest", "--duration", "10",
                                                               "--json", reports + "/selftest.json",
                                                               "--sysroot", tree, "--history",
                                                               tree + "/var/lib/rtprov/selftest"});
    CHECK(flow.rtprov.runs[0].stdout_path == reports + "/selftest.txt");
    CHECK(flow.rtprov.runs[1].args ==
          std::vector<std::string>{"audit", "--json", "--sysroot", tree});
    CHECK(flow.rtprov.runs[1].stdout_path == reports + "/.audit.json.tmp");
    CHECK(std::filesystem::exists(reports + "/audit.json"));
    CHECK(std::filesystem::exists(reports + "/verdict.json"));
    // Without /proc/uptime, the gate's own bound: the profile's (none: the defaults).
    REQUIRE(flow.rtprov.runs[0].deadline);
    CHECK(*flow.rtprov.runs[0].deadline - std::chrono::steady_clock::now() <=
          std::chrono::seconds(core::health_timeout_s({})));
    CHECK(flow.rtprov.runs[2].args == std::vector<std::string>{"apply", "--live", "--profile",
                                                               "/etc/rtprov/profile.yaml",
                                                               "--regenerate-boot=now"});
    const target::TrialRecord now = trial.now();
    CHECK(now.phase == "committed");
    CHECK(now.selftest == "passed");
    CHECK(now.audit == "passed");
    REQUIRE(flow.log.events.size() == 1);
    CHECK(flow.log.events[0].event == pipeline::FlowEvent::trial_committed);
    CHECK(flow.log.events[0].priority == pipeline::Priority::info);
    CHECK(flow.log.events[0].message ==
          "committed profile 'x86-debian13': its boot configuration is the default");
    CHECK(flow.manager.reboots.empty());
}

TEST_CASE("a trial boot that does not pass falls back, names what failed and reboots") {
    ArmedTrial trial(k_trial_boot);
    Flow flow(trial);
    flow.rtprov.codes = {{"selftest", 3}, {"audit", 1}};
    flow.rtprov.output = {
        {"selftest", "CPU 2  reserved  max 912 us\n  CPU 2: over its limit of 500 us\nok line\n"},
        {"audit", "ok   cmdline\nFAIL threads   mpd.service runs on 0-3\n"}};
    pipeline::Machine machine = flow.machine();
    pipeline::TrialView seen;
    CHECK(pipeline::check_trial(machine, seen) == pipeline::TrialCheck::fell_back);
    CHECK(flow.rtprov.verbs() == std::vector<std::string>{"selftest", "audit"}); // no commit
    const target::TrialRecord now = trial.now();
    CHECK(now.phase == "fell-back");
    CHECK(now.selftest == "did not pass");
    CHECK(now.audit == "error");
    const std::string why = "self-test did not pass: CPU 2: over its limit of 500 us; audit "
                            "error (exit 1)";
    CHECK(now.reason == why + " (reports in /var/lib/rtprov/trial-reports)");
    REQUIRE(flow.log.events.size() == 1);
    CHECK(flow.log.events[0].event == pipeline::FlowEvent::trial_fell_back);
    CHECK(flow.log.events[0].message ==
          "fell back: " + why + "; rebooting into the default boot configuration");
    CHECK(flow.manager.reboots == std::vector<std::string>{""});
}

TEST_CASE("a trial boot judges before its deadline target would reboot, leaving the commit time") {
    // 900 s from the start of the boot (rtprov-trial-deadline.target), 120 s of it the
    // commit's: at 700 s up, the gate has 80 s; at 800 s, none, and nothing is judged.
    ArmedTrial trial(k_trial_boot);
    trial.dir.write("proc/uptime", "700.25 1300.50\n");
    Flow flow(trial);
    pipeline::Machine machine = flow.machine();
    pipeline::TrialView seen;
    CHECK(pipeline::check_trial(machine, seen) == pipeline::TrialCheck::committed);
    REQUIRE(flow.rtprov.runs.size() == 3);
    REQUIRE(flow.rtprov.runs[0].deadline);
    const auto left = *flow.rtprov.runs[0].deadline - std::chrono::steady_clock::now();
    CHECK(left <= std::chrono::seconds(79));
    CHECK(left > std::chrono::seconds(70));

    ArmedTrial late(k_trial_boot);
    late.dir.write("proc/uptime", "800.00 1500.00\n");
    Flow late_flow(late);
    pipeline::Machine late_machine = late_flow.machine();
    CHECK(pipeline::check_trial(late_machine, seen) == pipeline::TrialCheck::fell_back);
    CHECK(late_flow.rtprov.runs.empty());
    const target::TrialRecord now = late.now();
    CHECK(now.phase == "fell-back");
    CHECK(now.selftest == "not run");
    CHECK(now.audit == "not run");
    CHECK(now.reason == "timed out after 0 s; self-test did not run; audit did not run (reports "
                        "in /var/lib/rtprov/trial-reports)");
    CHECK(late_flow.manager.reboots == std::vector<std::string>{""});
}

TEST_CASE("a trial boot the gate cannot judge in time falls back, and says so") {
    ArmedTrial trial(k_trial_boot);
    Flow flow(trial);
    flow.rtprov.codes = {{"selftest", pipeline::k_child_timed_out}};
    pipeline::Machine machine = flow.machine();
    pipeline::TrialView seen;
    CHECK(pipeline::check_trial(machine, seen) == pipeline::TrialCheck::fell_back);
    CHECK(flow.rtprov.verbs() == std::vector<std::string>{"selftest"}); // no audit, no commit
    const target::TrialRecord now = trial.now();
    CHECK(now.selftest == "timed out");
    CHECK(now.audit == "not run");
    CHECK(now.reason == "timed out after " + std::to_string(core::health_timeout_s({})) +
                            " s; self-test was still running at the deadline and was stopped; "
                            "audit did not run (reports in /var/lib/rtprov/trial-reports)");
}

TEST_CASE("a trial boot whose commit fails is recorded as such, and the box stays up") {
    ArmedTrial trial(k_trial_boot);
    Flow flow(trial);
    flow.rtprov.codes = {{"apply", 1}};
    pipeline::Machine machine = flow.machine();
    pipeline::TrialView seen;
    CHECK(pipeline::check_trial(machine, seen) == pipeline::TrialCheck::commit_failed);
    const target::TrialRecord now = trial.now();
    CHECK(now.phase == "commit-failed");
    CHECK(now.reason ==
          "the trial boot passed, but committing it failed ('rtprov apply --live' exit 1, see "
          "'journalctl -u rtprov-trial'); what it wrote is recorded: run 'rtprov apply --live "
          "--profile /etc/rtprov/profile.yaml' to finish it, or 'rtprov rollback --live' to undo "
          "everything; not rebooted");
    REQUIRE(flow.log.events.size() == 1);
    CHECK(flow.log.events[0].priority == pipeline::Priority::error);
    CHECK(flow.log.events[0].message == "commit failed: " + now.reason);
    CHECK(flow.manager.reboots.empty());
}

TEST_CASE("a trial boot is judged and committed only on the running system") {
    ArmedTrial trial(k_trial_boot);
    Flow flow(trial);
    pipeline::Machine machine = flow.machine();
    machine.running = false;
    pipeline::TrialView seen;
    CHECK_THROWS_WITH(pipeline::check_trial(machine, seen),
                      "--root: a trial boot is checked on the running system: run 'rtprov trial "
                      "check' without --root and --sysroot");
    CHECK_THROWS_WITH(pipeline::commit_trial(machine, seen),
                      "--root: a trial is committed on the running system, from its own /proc: "
                      "leave out --root and --sysroot");
    CHECK(flow.rtprov.runs.empty());
    CHECK(trial.now() == ArmedTrial::record());
}

TEST_CASE("a trial is committed by hand only in its own boot") {
    ArmedTrial other;
    Flow flow(other);
    pipeline::Machine machine = flow.machine();
    pipeline::TrialView seen;
    CHECK_FALSE(pipeline::commit_trial(machine, seen));
    CHECK(seen.boot == target::TrialBoot::did_not_start);
    CHECK(flow.rtprov.runs.empty());
    CHECK(other.now() == ArmedTrial::record());

    ArmedTrial trial(k_trial_boot);
    Flow in_trial(trial);
    pipeline::Machine trial_machine = in_trial.machine();
    CHECK(pipeline::commit_trial(trial_machine, seen) == pipeline::TrialCheck::committed);
    CHECK(in_trial.rtprov.verbs() == std::vector<std::string>{"apply"}); // no self-test
    CHECK(trial.now().phase == "committed");
}

TEST_CASE("aborting a trial disarms it, says so and records it; its files stay") {
    ArmedTrial trial;
    Flow flow(trial);
    pipeline::Machine machine = flow.machine();
    pipeline::TrialAbort aborted = pipeline::abort_trial(machine);
    CHECK(aborted.aborted);
    CHECK_FALSE(trial.next_entry_armed());
    CHECK(flow.log.lines == std::vector<std::string>{"took next_entry out of " + trial.dir.path() +
                                                     "/boot/grub/grubenv: the next boot is the "
                                                     "default"});
    CHECK(trial.now().phase == "aborted");
    CHECK(trial.now().reason == "aborted by hand ('rtprov trial abort')");

    pipeline::TrialAbort again = pipeline::abort_trial(machine);
    CHECK_FALSE(again.aborted);
    REQUIRE(again.record);
    CHECK(again.record->phase == "aborted");
}

TEST_CASE("a damaged trial record is aborted anyway, every loader that may be armed disarmed") {
    ArmedTrial trial;
    trial.dir.write("var/lib/rtprov/trial", "garbage\n");
    trial.dir.write("usr/bin/bootctl", ""); // systemd-boot may have armed it
    Flow flow(trial);
    std::vector<std::vector<std::string>> commands;
    pipeline::Machine machine = flow.machine([&](const std::vector<std::string>& argv) {
        commands.push_back(argv);
        return 0;
    });
    pipeline::TrialAbort aborted = pipeline::abort_trial(machine);
    CHECK(aborted.aborted);
    REQUIRE(flow.log.warnings.size() == 1);
    CHECK_THAT(flow.log.warnings[0], Catch::Contains("garbage"));
    CHECK_FALSE(trial.next_entry_armed());
    CHECK(commands == std::vector<std::vector<std::string>>{{"bootctl", "set-oneshot", ""}});
    CHECK(flow.log.lines.size() == 2);
    CHECK(trial.now().phase == "aborted");
    CHECK(trial.now().loader == "unknown");
}

TEST_CASE("a trial armed by a command is disarmed by the loader's command, only where it may run") {
    TempDir dir;
    fs::Root root(dir.path());
    CHECK(pipeline::disarm_trial(root, "systemd-boot", {}) == "");
    std::vector<std::string> ran;
    int answer = 0;
    target::CommandRunner run = [&](const std::vector<std::string>& argv) {
        ran = argv;
        return answer;
    };
    CHECK(pipeline::disarm_trial(root, "systemd-boot", run) ==
          "removed systemd-boot's one-shot entry (LoaderEntryOneShot)");
    CHECK(ran == std::vector<std::string>{"bootctl", "set-oneshot", ""});
    answer = 1;
    CHECK_THROWS_WITH(pipeline::disarm_trial(root, "systemd-boot", run),
                      "'bootctl set-oneshot \"\"' failed: the one-shot entry may still be set; "
                      "run it by hand before the next reboot");
    CHECK(pipeline::disarm_trial(root, "grub", run) == ""); // no environment block
}

TEST_CASE("first boot takes back a trial it does not reboot into: disarmed, recorded, applied") {
    ArmedTrial trial("root=/dev/vda1 ro", "boot-1");
    Flow flow(trial);
    pipeline::Machine machine = flow.machine();
    pipeline::take_back_trial(machine, "the running kernel has every planned parameter");
    CHECK_FALSE(trial.next_entry_armed());
    CHECK(trial.now().phase == "aborted");
    CHECK(trial.now().reason ==
          "taken back by first boot: the running kernel has every planned parameter; no boot "
          "tried it, and a plain apply makes the profile's boot configuration the default");
    CHECK(flow.rtprov.verbs() == std::vector<std::string>{"apply"});

    flow.rtprov.runs.clear();
    pipeline::take_back_trial(machine, "again"); // no armed trial: nothing
    CHECK(flow.rtprov.runs.empty());

    ArmedTrial failing("root=/dev/vda1 ro", "boot-1");
    Flow failing_flow(failing);
    failing_flow.rtprov.codes = {{"apply", 1}};
    pipeline::Machine failing_machine = failing_flow.machine();
    CHECK_THROWS_WITH(
        pipeline::take_back_trial(failing_machine, "a reboot is not allowed"),
        "'rtprov apply --live --profile /etc/rtprov/profile.yaml', which makes the profile's boot "
        "configuration the default instead of the trial first boot took back (a reboot is not "
        "allowed), failed (exit 1); its messages are in 'journalctl -u rtprov-firstboot'; fix "
        "the cause and run it again, or 'rtprov rollback --live' to undo everything");
}
