// SPDX-License-Identifier: Apache-2.0
#include "provisioner/pipeline/apply.hpp"

#include "provisioner/core/error.hpp"
#include "provisioner/core/sha256.hpp"
#include "tests/unit/catch.hpp"
#include "tests/unit/temp_dir.hpp"

#include <algorithm>

using namespace rtprov;

namespace {

const std::string k_source = RTPROV_SOURCE_DIR;

// A copy of a fixture root (tests/fixtures/roots/NAME).
std::string fixture_copy(const TempDir& dir, const std::string& name) {
    const std::string root = dir.path() + "/" + name;
    std::filesystem::copy(k_source + "/tests/fixtures/roots/" + name, root,
                          std::filesystem::copy_options::recursive);
    return root;
}

pipeline::PlanRequest request(core::Regenerate regenerate = core::Regenerate::never) {
    pipeline::PlanRequest r;
    r.profile = "x86-debian13";
    r.sets = {"board.cpus=4"};
    r.options.regenerate = regenerate;
    r.builtin_profiles = k_source + "/board-profiles";
    r.apps = k_source + "/board-profiles/apps";
    return r;
}

// Records what it is told; answers with 'failure' ("" = every step done).
class FakeManager final : public pipeline::ServiceManager {
  public:
    explicit FakeManager(std::string failure = "") : m_failure(std::move(failure)) {}
    systemd::OnlineResult tell(const systemd::OnlineActions& actions) override {
        told.push_back(actions);
        systemd::OnlineResult result;
        (m_failure.empty() ? result.done : result.not_done) = systemd::online_steps(actions);
        result.failure = m_failure;
        return result;
    }
    live::IrqTuneResult restore_irqs() override {
        ++irq_restores;
        return {};
    }
    void reboot(const std::string&) override { FAIL("apply and rollback never reboot"); }
    std::vector<systemd::OnlineActions> told;
    int irq_restores = 0;

  private:
    std::string m_failure;
};

bool restarts(const systemd::OnlineActions& actions, const std::string& unit) {
    return std::find(actions.restart.begin(), actions.restart.end(), unit) != actions.restart.end();
}

target::ApplyInfo info(const pipeline::Planned& p) {
    return {p.profile.name, core::sha256_hex(p.profile_yaml), "2026-12-01T00:00:00Z", "grub"};
}

const auto no_report = [](const systemd::OnlineResult&) {};

} // namespace

TEST_CASE("make_plan loads the profile with its --set, probes the root and resolves the cores") {
    TempDir dir;
    fs::Root root(fixture_copy(dir, "debian13"));
    pipeline::Planned p = pipeline::make_plan(request(), root);
    CHECK(p.profile.name == "x86-debian13");
    CHECK(p.profile_yaml.find("cpus: 4") != std::string::npos);
    REQUIRE(p.cores);
    CHECK(p.cores->reserved.to_string() == "2-3");
    CHECK_FALSE(p.plan.refused());
    CHECK(std::any_of(p.plan.changes.begin(), p.plan.changes.end(), [](const auto& change) {
        return change.path == "/etc/rtprov/profile.yaml";
    }));
}

TEST_CASE("an applied profile that cannot be read is a warning of the plan, not an error") {
    TempDir dir;
    const std::string path = fixture_copy(dir, "debian13");
    std::filesystem::create_directories(path + "/etc/rtprov");
    { std::ofstream(path + "/etc/rtprov/profile.yaml") << "name: [unclosed\n"; }
    fs::Root root(path);
    pipeline::Planned p = pipeline::make_plan(request(), root);
    auto warning =
        std::find_if(p.plan.findings.begin(), p.plan.findings.end(),
                     [](const core::Finding& f) { return f.code == "applied-profile-unreadable"; });
    REQUIRE(warning != p.plan.findings.end());
    CHECK(warning->severity == core::Severity::warning);
    CHECK(warning->message.find("keys it set that the new profile drops stay") !=
          std::string::npos);
}

TEST_CASE("apply tells the service manager what changed only on the running system") {
    TempDir dir;
    fs::Root root(fixture_copy(dir, "debian13"));
    fs::RootLock lock(root);
    pipeline::Planned p = pipeline::make_plan(request(), root);

    FakeManager offline;
    pipeline::Applied applied =
        pipeline::apply(root, lock, p, info(p), {}, {false, false}, offline, no_report);
    CHECK_FALSE(applied.result.written.empty());
    CHECK(offline.told.empty());
    CHECK(applied.online.complete());

    // The same files again, live: nothing to write, and systemd is still told (it may
    // not have been the first time).
    FakeManager live;
    applied = pipeline::apply(root, lock, p, info(p), {}, {true, false}, live, no_report);
    REQUIRE(live.told.size() == 1);
    CHECK(live.told[0].reload);
    CHECK(restarts(live.told[0], "rtprov-sched-features.service"));
    CHECK(live.told[0].runtime_allowed_cpus.empty()); // no --runtime
    CHECK(applied.online.complete());
}

TEST_CASE("a service manager that refuses leaves the files written and says what was not done") {
    TempDir dir;
    fs::Root root(fixture_copy(dir, "debian13"));
    fs::RootLock lock(root);
    pipeline::Planned p = pipeline::make_plan(request(), root);
    FakeManager refusing("systemd: daemon-reload failed: Access denied");
    pipeline::Applied applied =
        pipeline::apply(root, lock, p, info(p), {}, {true, false}, refusing, no_report);
    CHECK_FALSE(applied.result.written.empty());
    CHECK_FALSE(applied.online.complete());
    CHECK(applied.online.failure == "systemd: daemon-reload failed: Access denied");
    CHECK_FALSE(applied.online.not_done.empty());
}

TEST_CASE("when a command fails after the files, systemd is told about them and the error stays") {
    TempDir dir;
    const std::string path = fixture_copy(dir, "debian13");
    dir.write("debian13/usr/sbin/update-grub", "#!/bin/sh\n"); // so that it is planned
    fs::Root root(path);
    fs::RootLock lock(root);
    pipeline::Planned p = pipeline::make_plan(request(core::Regenerate::now), root);
    REQUIRE_FALSE(p.plan.commands.empty());
    FakeManager live;
    int reports = 0;
    auto failing = [](const std::vector<std::string>&) { return 1; };
    CHECK_THROWS_AS(pipeline::apply(root, lock, p, info(p), failing, {true, false}, live,
                                    [&](const systemd::OnlineResult& r) {
                                        ++reports;
                                        CHECK(r.complete());
                                    }),
                    Error);
    CHECK(reports == 1);
    REQUIRE(live.told.size() == 1);
    CHECK(restarts(live.told[0], "rtprov-sched-features.service"));
}

TEST_CASE("rollback tells the service manager which units went, live only") {
    TempDir dir;
    fs::Root root(fixture_copy(dir, "debian13"));
    fs::RootLock lock(root);
    pipeline::Planned p = pipeline::make_plan(request(), root);
    FakeManager unused;
    pipeline::apply(root, lock, p, info(p), {}, {false, false}, unused, no_report);

    FakeManager offline;
    pipeline::RolledBack rolled =
        pipeline::rollback(root, lock, target::DriftPolicy::refuse, {}, false, offline);
    CHECK_FALSE(rolled.result.removed.empty());
    CHECK(offline.told.empty());

    pipeline::apply(root, lock, p, info(p), {}, {false, false}, unused, no_report);
    FakeManager live;
    rolled = pipeline::rollback(root, lock, target::DriftPolicy::refuse, {}, true, live);
    CHECK_FALSE(rolled.result.removed.empty());
    REQUIRE(live.told.size() == 1);
    CHECK(live.told[0].reload);
    CHECK(std::find(live.told[0].stop.begin(), live.told[0].stop.end(),
                    "rtprov-sched-features.service") != live.told[0].stop.end());
    CHECK(rolled.online.complete());
}
