// SPDX-License-Identifier: Apache-2.0
// pipeline/firstboot.cpp: first boot on a fixture system that is its own sysroot, with
// its children (apply, selftest, audit) and its reboot faked.
#include "provisioner/pipeline/firstboot.hpp"

#include "provisioner/core/error.hpp"
#include "provisioner/profile/profile_loader.hpp"
#include "provisioner/target/trial_record.hpp"
#include "tests/unit/audit_fixture.hpp"
#include "tests/unit/catch.hpp"
#include "tests/unit/flow_fakes.hpp"

#include <algorithm>

using namespace rtprov;
using namespace flow_fakes;

namespace {

const std::string k_source = RTPROV_SOURCE_DIR;
// The machine as first boot describes it (core::describe of its board facts).
const std::string k_board = "product 'Standard PC (Q35 + ICH9, 2009)', OS debian, 4 CPUs";

// A 4-CPU x86 machine running Debian (audit_fixture's), on its first boot: its child
// 'rtprov apply' writes the applied profile as a real apply would.
struct FirstBoot {
    audit_fixture::FakeSystem sys;
    fs::Root root{sys.dir.path()};
    fs::RootLock lock{root};
    FakeRtprov rtprov;
    FakeManager manager;
    RecordingLog log;
    pipeline::Machine machine = machine_on(root, lock, rtprov, manager, log);
    const pipeline::FirstbootData data{k_source + "/board-profiles",
                                       k_source + "/board-profiles/apps",
                                       std::chrono::steady_clock::now(),
                                       {}};

    FirstBoot() {
        sys.write("etc/os-release", "ID=debian\nVERSION_ID=\"13\"\n");
        sys.write("sys/class/dmi/id/product_name", "Standard PC (Q35 + ICH9, 2009)\n");
        rtprov.effects["apply"] = [this] {
            std::vector<profile::Override> overrides;
            for (std::size_t i = 0; i + 1 < rtprov.runs.back().args.size(); ++i)
                if (rtprov.runs.back().args[i] == "--set")
                    overrides.push_back({rtprov.runs.back().args[i + 1]});
            core::Profile p = profile::load_profile(
                "x86-debian13", {{k_source + "/board-profiles", "built-in"}}, overrides);
            sys.write("etc/rtprov/profile.yaml", profile::to_yaml(p));
        };
    }
    target::FirstbootState state() const { return *target::read_firstboot_state(root); }
    std::vector<std::string> events() const {
        std::vector<std::string> out;
        for (const Told& t : log.events)
            out.push_back(t.message);
        return out;
    }
};

bool has(const std::vector<std::string>& lines, const std::string& line) {
    return std::find(lines.begin(), lines.end(), line) != lines.end();
}

} // namespace

TEST_CASE("first boot detects the board, applies its profile live, self-tests, audits, records") {
    FirstBoot boot;
    pipeline::Firstboot done = pipeline::run_firstboot(boot.machine, boot.data);
    CHECK(done.outcome == pipeline::FirstbootOutcome::passed);
    REQUIRE(boot.rtprov.runs.size() == 3);
    CHECK(boot.rtprov.runs[0].args == std::vector<std::string>{"apply", "--live", "--profile",
                                                               "x86-debian13",
                                                               "--regenerate-boot=now", "--trial"});
    const std::string reports = boot.sys.dir.path() + "/var/lib/rtprov/firstboot";
    CHECK(boot.rtprov.runs[1].args == std::vector<std::string>{"selftest", "--duration", "5",
                                                               "--pi-probe", "2", "--json",
                                                               reports + "/selftest.json"});
    CHECK(boot.rtprov.runs[2].args == std::vector<std::string>{"audit", "--json"});
    CHECK(boot.rtprov.runs[2].stdout_path == reports + "/.audit.json.tmp");
    CHECK(boot.sys.dir.exists("var/lib/rtprov/firstboot/audit.json")); // renamed when done
    CHECK_FALSE(boot.sys.dir.exists("var/lib/rtprov/firstboot/.audit.json.tmp"));
    CHECK(boot.manager.reboots.empty());

    const target::FirstbootState state = boot.state();
    CHECK(state == done.state);
    CHECK(state.phase == "done");
    CHECK(state.profile == "x86-debian13");
    CHECK(state.cmdline == "ok");
    CHECK(state.selftest == "passed");
    CHECK(state.audit == "passed");
    CHECK(state.updated_at == k_now);
    CHECK(boot.sys.dir.exists("var/lib/rtprov/firstboot/done"));

    CHECK(boot.log.progress_lines ==
          std::vector<std::string>{"choosing the profile for " + k_board, "self-test", "audit"});
    REQUIRE(boot.log.events.size() == 3);
    CHECK(boot.log.events[0].event == pipeline::FlowEvent::firstboot_start);
    CHECK(boot.log.events[0].message == "applying profile 'x86-debian13' on " + k_board);
    CHECK(boot.log.events[1].event == pipeline::FlowEvent::firstboot_applied);
    CHECK_THAT(boot.log.events[1].message, Catch::StartsWith("profile 'x86-debian13' applied in "));
    CHECK_THAT(boot.log.events[1].field, Catch::StartsWith("RTPROV_ELAPSED_MS="));
    CHECK(boot.log.events[2].event == pipeline::FlowEvent::firstboot_done);
    CHECK(boot.log.events[2].priority == pipeline::Priority::info);
    CHECK(boot.log.events[2].message ==
          "done: profile 'x86-debian13', kernel command line ok, self-test passed, audit passed; "
          "reports in /var/lib/rtprov/firstboot");

    // a second run (the unit's condition aside) does nothing
    boot.rtprov.runs.clear();
    pipeline::Firstboot again = pipeline::run_firstboot(boot.machine, boot.data);
    CHECK(again.outcome == pipeline::FirstbootOutcome::already_ran);
    CHECK(again.state.phase == "done");
    CHECK(boot.rtprov.runs.empty());
}

TEST_CASE("first boot takes its profile, --set and switches from firstboot.yaml") {
    FirstBoot boot;
    boot.sys.write("etc/rtprov/firstboot.yaml",
                   "profile: x86-debian13\nset:\n  - tuning.services.mpd.limit_rtprio=50\n"
                   "trial: false\ninstall_packages: true\nselftest_s: 0\n");
    pipeline::Firstboot done = pipeline::run_firstboot(boot.machine, boot.data);
    CHECK(done.outcome == pipeline::FirstbootOutcome::passed);
    CHECK(boot.rtprov.verbs() == std::vector<std::string>{"apply", "audit"}); // no self-test
    CHECK(boot.rtprov.runs[0].args ==
          std::vector<std::string>{"apply", "--live", "--profile", "x86-debian13",
                                   "--regenerate-boot=now", "--set",
                                   "tuning.services.mpd.limit_rtprio=50", "--install-packages"});
    CHECK(boot.log.progress_lines.front() == "choosing the profile for " + k_board);
    CHECK(boot.state().selftest == "not run");
}

TEST_CASE("first boot reboots once for parameters the running kernel lacks, then goes on") {
    FirstBoot boot;
    boot.sys.write("proc/cmdline", "BOOT_IMAGE=/boot/vmlinuz root=UUID=1234 ro quiet\n");
    pipeline::Firstboot first = pipeline::run_firstboot(boot.machine, boot.data);
    CHECK(first.outcome == pipeline::FirstbootOutcome::rebooting);
    CHECK(boot.manager.reboots == std::vector<std::string>{""});
    CHECK(boot.rtprov.verbs() == std::vector<std::string>{"apply"});
    target::FirstbootState state = boot.state();
    CHECK(state.phase == "rebooting");
    CHECK(state.reboots == 1);
    CHECK_THAT(state.reboot_cause, Catch::StartsWith("the running kernel lacks "));
    CHECK_THAT(state.reboot_cause, Catch::Contains("isolcpus="));
    CHECK(boot.log.events.back().event == pipeline::FlowEvent::firstboot_reboot);
    CHECK(boot.log.events.back().priority == pipeline::Priority::notice);
    CHECK(boot.log.events.back().message == "rebooting once: " + state.reboot_cause);

    // After the reboot the parameters are still missing: no second reboot, no second
    // apply; done, and not passed.
    boot.rtprov.runs.clear();
    pipeline::Firstboot second = pipeline::run_firstboot(boot.machine, boot.data);
    CHECK(second.outcome == pipeline::FirstbootOutcome::not_passed);
    CHECK(boot.manager.reboots.size() == 1);
    CHECK(boot.rtprov.verbs() == std::vector<std::string>{"selftest", "audit"});
    state = boot.state();
    CHECK(state.phase == "done");
    CHECK(state.cmdline != "ok");
    CHECK(boot.log.events.back().priority == pipeline::Priority::warning);
}

TEST_CASE("a failed first boot is recorded, and thrown on unless it was told") {
    FirstBoot boot;
    boot.rtprov.codes["apply"] = 1;
    const std::string why =
        "'rtprov apply' failed (exit 1); its messages are in 'journalctl -u rtprov-firstboot'; "
        "fix the cause, then 'rm -r /var/lib/rtprov/firstboot' and reboot to run first boot "
        "again";
    SECTION("on a terminal, the error goes on to be printed") {
        CHECK_THROWS_WITH(pipeline::run_firstboot(boot.machine, boot.data), why);
    }
    SECTION("where the journal has it, first boot ends failed") {
        boot.log.failure_told = true;
        CHECK(pipeline::run_firstboot(boot.machine, boot.data).outcome ==
              pipeline::FirstbootOutcome::failed);
    }
    CHECK(boot.log.failures == std::vector<std::string>{why});
    CHECK(boot.state().phase == "failed");
    CHECK(boot.state().reason == why);
    CHECK(boot.sys.dir.exists("var/lib/rtprov/firstboot/done"));
    CHECK(boot.rtprov.verbs() == std::vector<std::string>{"apply"});
}

TEST_CASE("first boot leaves out a profile that cannot be read, with a warning") {
    FirstBoot boot;
    boot.sys.write("etc/rtprov/profiles/broken.yaml", "name: broken\nnosuch: 1\n");
    pipeline::Firstboot done = pipeline::run_firstboot(boot.machine, boot.data);
    CHECK(done.state.profile == "x86-debian13");
    REQUIRE(boot.log.warnings.size() == 1);
    CHECK_THAT(boot.log.warnings[0],
               Catch::StartsWith("profile 'broken' left out of board detection: "));
}

TEST_CASE("first boot takes back the trial its apply armed when no reboot tries it") {
    FirstBoot boot;
    boot.rtprov.effects["apply"] = [&boot, write = boot.rtprov.effects["apply"]] {
        write();
        if (std::find(boot.rtprov.runs.back().args.begin(), boot.rtprov.runs.back().args.end(),
                      "--trial") == boot.rtprov.runs.back().args.end())
            return;
        boot.sys.write("proc/sys/kernel/random/boot_id", "boot-1\n");
        target::TrialRecord record;
        record.phase = "armed";
        record.id = "5eed1d";
        record.profile = "x86-debian13";
        record.loader = "grub";
        record.armed_at = record.updated_at = "2026-12-24T17:00:00Z";
        record.armed_boot = "boot-1";
        boot.sys.write("var/lib/rtprov/.keep", "");
        target::write_trial_record(boot.root, record);
    };
    pipeline::Firstboot done = pipeline::run_firstboot(boot.machine, boot.data);
    CHECK(done.outcome == pipeline::FirstbootOutcome::passed);
    // the trial's apply, then the plain one that takes it back, then the checks
    CHECK(boot.rtprov.verbs() == std::vector<std::string>{"apply", "apply", "selftest", "audit"});
    CHECK(has(boot.log.progress_lines,
              "taking back the trial: " + target::decide_reboot({}, "", true).untried));
    CHECK(target::read_trial_record(boot.root)->phase == "aborted");
    CHECK(boot.state().trial == "not run: " + target::decide_reboot({}, "", true).untried);
}
