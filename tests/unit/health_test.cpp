// SPDX-License-Identifier: Apache-2.0
// pipeline/health.cpp: the health gate's verdict rule, its children and time bound, the
// verdict it keeps, and what --boot does, on a temporary root that is its own sysroot.
#include "provisioner/pipeline/health.hpp"

#include "provisioner/core/json.hpp"
#include "provisioner/core/sha256.hpp"
#include "provisioner/profile/profile_loader.hpp"
#include "tests/unit/catch.hpp"
#include "tests/unit/flow_fakes.hpp"
#include "tests/unit/temp_dir.hpp"

#include <filesystem>

using namespace rtprov;
using namespace flow_fakes;
using pipeline::HealthVerdict;

namespace {

const std::string k_source = RTPROV_SOURCE_DIR;
const std::string k_boot_id = "5b3c2a9e-0000-4000-8000-000000000002";
const std::string k_efivar =
    "sys/firmware/efi/efivars/LoaderBootCountPath-4a67b082-0a4c-41cf-b6c7-440b29bb8c4f";

// The bytes efivarfs shows for a loader variable holding 'path': 4 bytes of attributes
// (non-volatile, boot service and runtime access: 7), then the path in UTF-16LE with its
// NUL.
std::string efi_variable(const std::string& path) {
    std::string bytes("\x07\x00\x00\x00", 4);
    for (char c : path + '\0')
        bytes += std::string{c, '\0'};
    return bytes;
}

// A running system with the built-in x86-debian13 profile applied (with 'sets'), or none.
struct Box {
    TempDir dir;
    fs::Root root{dir.path()};
    fs::RootLock lock{root};
    FakeRtprov rtprov;
    FakeManager manager;
    RecordingLog log;
    pipeline::Machine machine = machine_on(root, lock, rtprov, manager, log);

    explicit Box(bool applied = true, std::vector<std::string> sets = {}) {
        dir.write("proc/sys/kernel/random/boot_id", k_boot_id + "\n");
        dir.write("var/lib/rtprov/.keep", "");
        if (!applied)
            return;
        std::vector<profile::Override> overrides;
        for (std::string& set : sets)
            overrides.push_back({std::move(set)});
        core::Profile p = profile::load_profile(
            "x86-debian13", {{k_source + "/board-profiles", "built-in"}}, overrides);
        dir.write("etc/rtprov/profile.yaml", profile::to_yaml(p));
    }
    std::string reports() const { return dir.path() + core::k_health_dir; }
    core::JsonValue verdict() const {
        core::JsonParse parsed = core::parse_json(dir.read("var/lib/rtprov/health/verdict.json"));
        INFO(parsed.problem.message);
        REQUIRE(parsed.value);
        return *parsed.value;
    }
    pipeline::Health run(pipeline::HealthRequest request = {}) {
        return pipeline::run_health(machine, request);
    }
    pipeline::Health run_boot() {
        pipeline::HealthRequest request;
        request.on_failure = pipeline::OnFailure::reboot_if_counted;
        pipeline::Health health = pipeline::run_health(machine, request);
        pipeline::reboot_if_decided(machine, health);
        return health;
    }
};

// An audit's JSON report (as 'audit --json' prints it) with these checks failing.
std::string audit_json(const std::vector<std::pair<std::string, std::string>>& failing) {
    std::string checks = "{\"id\": \"cmdline\", \"subject\": \"\", \"title\": \"t\", "
                         "\"status\": \"ok\", \"reason\": \"fine\", \"fix\": \"\"}";
    for (const auto& [id, reason] : failing)
        checks += ", {\"id\": \"" + id + "\", \"subject\": \"mpd.service\", \"title\": \"t\", " +
                  "\"status\": \"fail\", \"reason\": \"" + reason + "\", \"fix\": \"f\"}";
    return "{\"schema\": \"rtprov.audit\", \"schema_version\": 1, \"profile\": null, "
           "\"result\": \"fail\", \"checks\": [" +
           checks + "]}\n";
}

const std::string& text(const core::JsonValue& object, const char* key) {
    const core::JsonValue* value = object.find(key);
    REQUIRE(value);
    REQUIRE(value->kind == core::JsonValue::Kind::string);
    return value->text;
}

} // namespace

TEST_CASE("the verdict rule: healthy when both pass, not healthy on a 3 without an error, "
          "else could not judge") {
    using pipeline::health_verdict;
    const std::optional<int> none;
    // every pair of: passed, did not pass, an error, a usage error, a signal, not run
    const std::vector<std::optional<int>> codes = {0, 3, 1, 2, 128 + 9, none};
    for (const std::optional<int>& selftest : codes)
        for (const std::optional<int>& audit : codes) {
            INFO("self-test " << (selftest ? std::to_string(*selftest) : "none") << ", audit "
                              << (audit ? std::to_string(*audit) : "none"));
            const bool judged = selftest && audit && (*selftest == 0 || *selftest == 3) &&
                                (*audit == 0 || *audit == 3);
            const HealthVerdict want = !judged ? HealthVerdict::could_not_judge
                                       : *selftest == 0 && *audit == 0 ? HealthVerdict::healthy
                                                                       : HealthVerdict::not_healthy;
            CHECK(health_verdict(selftest, audit) == want);
        }
    CHECK(health_verdict(0, 0) == HealthVerdict::healthy);
    CHECK(health_verdict(3, 0) == HealthVerdict::not_healthy);
    CHECK(health_verdict(3, 3) == HealthVerdict::not_healthy);
    CHECK(health_verdict(3, 1) == HealthVerdict::could_not_judge);
    CHECK(health_verdict(0, none) == HealthVerdict::could_not_judge);
    CHECK(pipeline::health_exit_code(HealthVerdict::healthy) == 0);
    CHECK(pipeline::health_exit_code(HealthVerdict::not_healthy) == 3);
    CHECK(pipeline::health_exit_code(HealthVerdict::could_not_judge) == 1);
    CHECK(std::string(pipeline::health_word(HealthVerdict::healthy)) == "healthy");
    CHECK(std::string(pipeline::health_word(HealthVerdict::not_healthy)) == "not-healthy");
    CHECK(std::string(pipeline::health_word(HealthVerdict::could_not_judge)) == "could-not-judge");
}

TEST_CASE("a healthy system: the children as the profile asks, the verdict kept and told") {
    Box box(true, {"tuning.selftest.duration_s=30"});
    const pipeline::Health health = box.run();
    CHECK(health.verdict == HealthVerdict::healthy);
    const std::string tree = box.dir.path(), reports = box.reports();
    REQUIRE(box.rtprov.runs.size() == 2);
    CHECK(box.rtprov.runs[0].args == std::vector<std::string>{"selftest", "--duration", "30",
                                                              "--json", reports + "/selftest.json",
                                                              "--sysroot", tree, "--history",
                                                              tree + "/var/lib/rtprov/selftest"});
    CHECK(box.rtprov.runs[0].stdout_path == reports + "/selftest.txt");
    CHECK(box.rtprov.runs[1].args ==
          std::vector<std::string>{"audit", "--json", "--sysroot", tree});
    CHECK(box.rtprov.runs[1].stdout_path == reports + "/.audit.json.tmp");
    CHECK(box.dir.exists("var/lib/rtprov/health/audit.json"));
    CHECK_FALSE(box.dir.exists("var/lib/rtprov/health/.audit.json.tmp"));
    // Both under one deadline: 30 s of self-test and 120 s (core::health_timeout_s).
    CHECK(health.timeout_s == 150);
    REQUIRE(box.rtprov.runs[0].deadline);
    CHECK(box.rtprov.runs[0].deadline == box.rtprov.runs[1].deadline);
    CHECK(*box.rtprov.runs[0].deadline - std::chrono::steady_clock::now() <=
          std::chrono::seconds(150));
    CHECK(*box.rtprov.runs[0].deadline - std::chrono::steady_clock::now() >
          std::chrono::seconds(140));

    const core::JsonValue v = box.verdict();
    CHECK(text(v, "schema") == "rtprov.health");
    CHECK(v.find("schema_version")->whole() == 1u);
    CHECK(text(v, "verdict") == "healthy");
    CHECK(v.find("exit_code")->whole() == 0u);
    CHECK(text(v, "boot_id") == k_boot_id);
    CHECK(text(v, "time") == k_now);
    REQUIRE(v.find("profile")->kind == core::JsonValue::Kind::object);
    CHECK(text(*v.find("profile"), "name") == "x86-debian13");
    CHECK(text(*v.find("profile"), "sha256") ==
          core::sha256_hex(box.dir.read("etc/rtprov/profile.yaml")));
    CHECK(text(v, "judged") == "the applied profile 'x86-debian13': the audit against it, the "
                               "self-test with its limits (30 s)");
    CHECK(v.find("reasons")->items.empty());
    CHECK(v.find("seconds")->kind == core::JsonValue::Kind::number);
    CHECK(v.find("timeout_seconds")->whole() == 150u);
    CHECK(v.find("selftest")->find("exit_code")->whole() == 0u);
    CHECK(text(*v.find("selftest"), "outcome") == "passed");
    CHECK(text(*v.find("audit"), "outcome") == "passed");
    CHECK(text(v, "reports") == "/var/lib/rtprov/health");
    CHECK(v.find("boot")->kind == core::JsonValue::Kind::null);

    REQUIRE(box.log.events.size() == 1);
    CHECK(box.log.events[0].event == pipeline::FlowEvent::health_healthy);
    CHECK(box.log.events[0].priority == pipeline::Priority::info);
    CHECK(box.log.events[0].message.rfind("healthy: profile 'x86-debian13': self-test and audit "
                                          "passed (",
                                          0) == 0);
    CHECK(box.manager.reboots.empty());
}

TEST_CASE("a system that does not pass is not healthy, and the reasons quote both reports") {
    Box box;
    box.rtprov.codes = {{"selftest", 3}, {"audit", 3}};
    box.rtprov.output = {
        {"selftest", "CPU 1  reserved  max 912 us\n  CPU 1: over its limit of 500 us\nok\n"},
        {"audit", audit_json({{"threads", "runs on 0-3"}, {"rt-push-ipi", "NO_RT_PUSH_IPI"}})}};
    const pipeline::Health health = box.run();
    CHECK(health.verdict == HealthVerdict::not_healthy);
    CHECK(health.reasons ==
          std::vector<std::string>{"self-test did not pass: CPU 1: over its limit of 500 us",
                                   "audit did not pass: threads (mpd.service): runs on 0-3; "
                                   "rt-push-ipi (mpd.service): NO_RT_PUSH_IPI"});
    const core::JsonValue v = box.verdict();
    CHECK(text(v, "verdict") == "not-healthy");
    CHECK(v.find("exit_code")->whole() == 3u);
    REQUIRE(v.find("reasons")->items.size() == 2);
    CHECK(v.find("reasons")->items[0].text == health.reasons[0]);
    CHECK(v.find("audit")->find("exit_code")->whole() == 3u);
    CHECK(text(*v.find("audit"), "outcome") == "did not pass");
    REQUIRE(box.log.events.size() == 1);
    CHECK(box.log.events[0].event == pipeline::FlowEvent::health_not_healthy);
    CHECK(box.log.events[0].priority == pipeline::Priority::warning);
    CHECK(box.log.events[0].message.rfind("not healthy: profile 'x86-debian13': self-test did "
                                          "not pass: CPU 1: over its limit of 500 us; audit",
                                          0) == 0);
}

TEST_CASE("the self-test's reason is its own verdict and the parts that failed") {
    Box box;
    box.rtprov.codes = {{"selftest", 3}};
    box.rtprov.output = {
        {"selftest",
         "CPU  role  idle  cycles  missed  over  result\n"
         "  1  reserved  default  9901  99  9901  FAIL\n"
         "(µs; 'over': samples above the limit)\n"
         "PI-boost probe: 4 SCHED_OTHER workers ...; waited 20000 µs at worst: FAIL\n"
         "CPU 1, idle default: over its limit of 1 µs or missing wake-ups in 2 of 1 s\n"
         "verdict: not safe for audio yet: CPU 1 (reserved, idle default) woke 3413 µs late\n"
         "result: did not pass\n"}};
    const pipeline::Health health = box.run();
    CHECK(health.reasons ==
          std::vector<std::string>{"self-test did not pass: PI-boost probe: 4 SCHED_OTHER "
                                   "workers ...; waited 20000 µs at worst: FAIL; not safe for "
                                   "audio yet: CPU 1 (reserved, idle default) woke 3413 µs late"});
}

TEST_CASE("a child that errs, dies or cannot start leaves the gate unable to judge") {
    SECTION("an error, with a pass beside it") {
        Box box;
        box.rtprov.codes = {{"audit", 1}};
        const pipeline::Health health = box.run();
        CHECK(health.verdict == HealthVerdict::could_not_judge);
        CHECK(health.reasons == std::vector<std::string>{"audit error (exit 1)"});
        CHECK(health.audit.outcome == "error");
        REQUIRE(box.log.events.size() == 1);
        CHECK(box.log.events[0].event == pipeline::FlowEvent::health_could_not_judge);
        CHECK(box.log.events[0].priority == pipeline::Priority::error);
    }
    SECTION("a signal, with a failure beside it") {
        Box box;
        box.rtprov.codes = {{"selftest", 128 + 9}, {"audit", 3}};
        const pipeline::Health health = box.run();
        CHECK(health.verdict == HealthVerdict::could_not_judge);
        CHECK(health.reasons.front() == "self-test ended by signal 9");
    }
    SECTION("a child that cannot be started") {
        Box box;
        box.rtprov.effects["selftest"] = [] { throw Error("fork failed"); };
        const pipeline::Health health = box.run();
        CHECK(health.verdict == HealthVerdict::could_not_judge);
        CHECK(health.selftest.outcome == "error");
        CHECK(health.reasons.front() == "cannot run the self-test: fork failed");
    }
}

TEST_CASE("without an applied profile the gate judges the generic checks, and says so") {
    Box box(false);
    const pipeline::Health health = box.run();
    CHECK(health.verdict == HealthVerdict::healthy);
    CHECK_FALSE(health.profile);
    CHECK(health.judged == "no profile applied: the generic checks (the audit's checks that "
                           "need no profile, the self-test with the default limits, 10 s)");
    CHECK(health.timeout_s == core::health_timeout_s({}));
    REQUIRE(box.rtprov.runs.size() == 2);
    CHECK(box.rtprov.runs[0].args[2] == "10");
    const core::JsonValue v = box.verdict();
    CHECK(v.find("profile")->kind == core::JsonValue::Kind::null);
    CHECK(text(v, "judged") == health.judged);
    REQUIRE(box.log.events.size() == 1);
    CHECK(box.log.events[0].message.rfind("healthy: no profile applied: ", 0) == 0);
}

TEST_CASE("the gate is bounded in time: a child past the deadline is could not judge, exit 1") {
    SECTION("the self-test still running at the deadline: stopped, and no audit") {
        Box box;
        box.rtprov.codes = {{"selftest", pipeline::k_child_timed_out}};
        pipeline::HealthRequest request;
        request.timeout_s = 45;
        const pipeline::Health health = box.run(request);
        CHECK(health.verdict == HealthVerdict::could_not_judge);
        CHECK(pipeline::health_exit_code(health.verdict) == 1);
        CHECK(box.rtprov.verbs() == std::vector<std::string>{"selftest"});
        CHECK(health.reasons == std::vector<std::string>{
                                    "timed out after 45 s",
                                    "self-test was still running at the deadline and was stopped",
                                    "audit did not run"});
        CHECK(health.selftest.outcome == "timed out");
        CHECK(health.audit.outcome == "not run");
        const core::JsonValue v = box.verdict();
        CHECK(text(v, "verdict") == "could-not-judge");
        CHECK(v.find("selftest")->find("exit_code")->kind == core::JsonValue::Kind::null);
        CHECK(text(*v.find("selftest"), "outcome") == "timed out");
        REQUIRE(box.log.events.size() == 1);
        CHECK(box.log.events[0].message.rfind(
                  "could not judge: profile 'x86-debian13': timed out after 45 s; self-test", 0) ==
              0);
    }
    SECTION("the audit past it") {
        Box box;
        box.rtprov.codes = {{"audit", pipeline::k_child_timed_out}};
        CHECK(box.run().verdict == HealthVerdict::could_not_judge);
    }
    SECTION("the time up before a child starts: it does not run") {
        Box box;
        pipeline::HealthRequest request;
        request.at_most_s = 0; // a caller's bound (a trial's deadline) that has run out
        const pipeline::Health health = box.run(request);
        CHECK(health.verdict == HealthVerdict::could_not_judge);
        CHECK(box.rtprov.runs.empty());
        CHECK(health.timeout_s == 0);
    }
}

TEST_CASE("a verdict that cannot be kept is never a pass") {
    SECTION("the reports folder cannot be made: nothing runs") {
        Box box;
        box.dir.write("var/lib/rtprov/health", "a file where the folder goes\n");
        const pipeline::Health health = box.run();
        CHECK(health.verdict == HealthVerdict::could_not_judge);
        CHECK(box.rtprov.runs.empty());
        REQUIRE_FALSE(health.reasons.empty());
        CHECK(health.reasons.front().rfind("the reports cannot be kept in /var/lib/rtprov/health: ",
                                           0) == 0);
    }
    SECTION("verdict.json cannot be written after both children passed") {
        Box box;
        // the disk fills while the audit runs: here, a folder where verdict.json goes
        box.rtprov.effects["audit"] = [&box] {
            std::filesystem::create_directories(box.reports() + "/verdict.json/x");
        };
        const pipeline::Health health = box.run();
        CHECK(health.selftest.outcome == "passed");
        CHECK(health.audit.outcome == "passed");
        CHECK(health.verdict == HealthVerdict::could_not_judge);
        REQUIRE(health.reasons.size() == 1);
        CHECK(health.reasons[0].rfind(
                  "the verdict cannot be kept in /var/lib/rtprov/health/verdict.json: ", 0) == 0);
        REQUIRE(box.log.events.size() == 1);
        CHECK(box.log.events[0].event == pipeline::FlowEvent::health_could_not_judge);
    }
    SECTION("an applied profile that cannot be read: nothing runs") {
        Box box;
        box.dir.write("etc/rtprov/profile.yaml", "name: [unclosed\n");
        const pipeline::Health health = box.run();
        CHECK(health.verdict == HealthVerdict::could_not_judge);
        CHECK(box.rtprov.runs.empty());
        CHECK(health.reasons.front().rfind("the applied profile cannot be read: ", 0) == 0);
    }
}

TEST_CASE("each run's reports are its own: the last run's are gone before it starts") {
    Box box;
    box.dir.write("var/lib/rtprov/health/audit.json", "{\"from\": \"an earlier run\"}\n");
    box.dir.write("var/lib/rtprov/health/verdict.json", "{\"verdict\": \"healthy\"}\n");
    box.rtprov.codes = {{"selftest", pipeline::k_child_timed_out}};
    box.rtprov.effects["selftest"] = [&box] {
        CHECK_FALSE(box.dir.exists("var/lib/rtprov/health/verdict.json"));
    };
    box.run();
    CHECK_FALSE(box.dir.exists("var/lib/rtprov/health/audit.json")); // the audit did not run
    CHECK(text(box.verdict(), "verdict") == "could-not-judge");
}

TEST_CASE("--boot reboots a boot that is not healthy only where the loader counts its tries") {
    SECTION("counted, tries left, not healthy: a reboot, told") {
        Box box;
        box.dir.write(k_efivar, efi_variable("\\loader\\entries\\debian-6.12+2-1.conf"));
        box.rtprov.codes = {{"selftest", 3}};
        const pipeline::Health health = box.run_boot();
        CHECK(health.verdict == HealthVerdict::not_healthy);
        REQUIRE(health.boot);
        CHECK(health.boot->counted);
        CHECK(health.boot->entry == "\\loader\\entries\\debian-6.12+2-1.conf");
        CHECK(health.boot->reboot);
        CHECK(box.manager.reboots == std::vector<std::string>{""});
        REQUIRE(box.log.events.size() == 2);
        CHECK(box.log.events[1].event == pipeline::FlowEvent::health_reboot);
        CHECK(box.log.events[1].message ==
              "rebooting: the boot loader counts tries of '\\loader\\entries\\debian-6.12+2-1."
              "conf' (2 left): it tries the entry again, and once its tries are spent falls "
              "back to another");
        const core::JsonValue v = box.verdict();
        REQUIRE(v.find("boot")->kind == core::JsonValue::Kind::object);
        CHECK(v.find("boot")->find("reboot")->boolean);
        CHECK(v.find("boot")->find("counted")->boolean);
        CHECK(text(*v.find("boot"), "entry") == health.boot->entry);
    }
    SECTION("counted and healthy: no reboot") {
        Box box;
        box.dir.write(k_efivar, efi_variable("/loader/entries/debian+2-1.conf"));
        const pipeline::Health health = box.run_boot();
        CHECK(health.verdict == HealthVerdict::healthy);
        CHECK_FALSE(health.boot);
        CHECK(box.manager.reboots.empty());
    }
    SECTION("not counted (a blessed system) and not healthy: no reboot, only the exit code") {
        Box box;
        box.rtprov.codes = {{"audit", 3}};
        const pipeline::Health health = box.run_boot();
        CHECK(health.verdict == HealthVerdict::not_healthy);
        REQUIRE(health.boot);
        CHECK_FALSE(health.boot->counted);
        CHECK_FALSE(health.boot->reboot);
        CHECK(health.boot->why.rfind("not rebooted: the boot loader does not count tries", 0) == 0);
        CHECK(box.manager.reboots.empty());
        CHECK(box.verdict().find("boot")->find("entry")->kind == core::JsonValue::Kind::null);
    }
    SECTION("could not judge on a counted boot: a reboot too") {
        Box box;
        box.dir.write(k_efivar, efi_variable("/loader/entries/debian+1-2.conf"));
        box.rtprov.codes = {{"selftest", pipeline::k_child_timed_out}};
        CHECK(box.run_boot().verdict == HealthVerdict::could_not_judge);
        CHECK(box.manager.reboots.size() == 1);
    }
    SECTION("without --boot, never a reboot") {
        Box box;
        box.dir.write(k_efivar, efi_variable("/loader/entries/debian+2-1.conf"));
        box.rtprov.codes = {{"selftest", 3}};
        const pipeline::Health health = box.run();
        pipeline::reboot_if_decided(box.machine, health);
        CHECK_FALSE(health.boot);
        CHECK(box.manager.reboots.empty());
    }
    SECTION("not the running system: no reboot") {
        Box box;
        box.machine.running = false;
        box.dir.write(k_efivar, efi_variable("/loader/entries/debian+2-1.conf"));
        box.rtprov.codes = {{"selftest", 3}};
        CHECK(box.run_boot().boot->why == "not rebooted: not the running system");
        CHECK(box.manager.reboots.empty());
    }
}

TEST_CASE("--boot on an entry whose tries are spent reboots once, then not again: no loop") {
    Box box;
    box.rtprov.codes = {{"selftest", 3}};
    // the last try: a reboot, so that the loader falls back
    box.dir.write(k_efivar, efi_variable("/loader/entries/debian+0-3.conf"));
    pipeline::Health first = box.run_boot();
    CHECK(first.boot->reboot);
    CHECK(first.boot->why == "rebooting once: the tries of '/loader/entries/debian+0-3.conf' are "
                             "spent, so the boot loader falls back to another entry");
    CHECK(box.manager.reboots.size() == 1);
    // booted again all the same (nothing to fall back to): no second reboot
    box.dir.write(k_efivar, efi_variable("/loader/entries/debian+0-4.conf"));
    pipeline::Health again = box.run_boot();
    CHECK_FALSE(again.boot->reboot);
    CHECK(
        again.boot->why.rfind("not rebooted again: the tries of '/loader/entries/debian+0-4.conf' "
                              "are spent, and the boot loader booted it again",
                              0) == 0);
    CHECK(box.manager.reboots.size() == 1);
    // a healthy boot ends the episode: a later update's spent entry gets its reboot again
    box.rtprov.codes.clear();
    CHECK(box.run_boot().verdict == HealthVerdict::healthy);
    box.rtprov.codes = {{"selftest", 3}};
    box.dir.write(k_efivar, efi_variable("/loader/entries/debian+0-3.conf"));
    CHECK(box.run_boot().boot->reboot);
    CHECK(box.manager.reboots.size() == 2);
}

TEST_CASE("--boot: an episode of spent tries ends with a boot that is counted with tries left, "
          "or not counted, healthy or not") {
    Box box;
    box.rtprov.codes = {{"selftest", 3}};
    // an update's entry spent: its one reboot, recorded
    box.dir.write(k_efivar, efi_variable("/EFI/Linux/debian+0-3.efi"));
    CHECK(box.run_boot().boot->reboot);
    SECTION("the loader fell back to a blessed entry that fails its gate too") {
        std::filesystem::remove(box.dir.path() + "/" + k_efivar);
        CHECK_FALSE(box.run_boot().boot->reboot);
    }
    SECTION("a later update's entry, counted with tries left, fails") {
        box.dir.write(k_efivar, efi_variable("/EFI/Linux/debian+1-2.efi"));
        CHECK(box.run_boot().boot->reboot);
    }
    const std::size_t before = box.manager.reboots.size();
    // the later update's entry (the same name without its counter) spent: its own one
    // reboot, not refused as if the loader had booted the first one again
    box.dir.write(k_efivar, efi_variable("/EFI/Linux/debian+0-3.efi"));
    pipeline::Health spent = box.run_boot();
    CHECK(spent.boot->reboot);
    CHECK(box.manager.reboots.size() == before + 1);
}

TEST_CASE("--boot: an entry booted again with the same tries left after the gate's reboot is "
          "not rebooted again: a loader that does not count them would loop") {
    Box box;
    box.rtprov.codes = {{"selftest", 3}};
    box.dir.write(k_efivar, efi_variable("/loader/entries/debian+2-1.conf"));
    CHECK(box.run_boot().boot->reboot);
    // the same name, the same count: the try was not counted (a stale or forged variable,
    // a loader that does not rename the entry)
    pipeline::Health again = box.run_boot();
    CHECK_FALSE(again.boot->reboot);
    CHECK(again.boot->why.rfind("not rebooted again: ", 0) == 0);
    CHECK(box.manager.reboots.size() == 1);
    // counted on: the next try gets its reboot
    box.dir.write(k_efivar, efi_variable("/loader/entries/debian+1-2.conf"));
    CHECK(box.run_boot().boot->reboot);
    CHECK(box.manager.reboots.size() == 2);
}
