// SPDX-License-Identifier: Apache-2.0
#include "provisioner/pipeline/apply.hpp"

#include "provisioner/core/error.hpp"
#include "provisioner/core/sha256.hpp"
#include "provisioner/profile/firstboot_config.hpp"
#include "provisioner/target/journal.hpp"
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

namespace {

const std::string k_firstboot_link =
    "/etc/systemd/system/multi-user.target.wants/rtprov-firstboot.service";

// A copy of the debian13 fixture with rtprov's package's first-boot unit, and 'earlier' as
// a firstboot.yaml an image builder wrote before rtprov ("": none).
std::string image_with_unit(const TempDir& dir, const std::string& earlier = "") {
    const std::string path = fixture_copy(dir, "debian13");
    dir.write("debian13/usr/lib/systemd/system/rtprov-firstboot.service",
              "[Install]\nWantedBy=multi-user.target\n");
    if (!earlier.empty())
        dir.write("debian13/etc/rtprov/firstboot.yaml", earlier);
    return path;
}

pipeline::PlanRequest firstboot_request(std::vector<std::string> settings = {}) {
    pipeline::PlanRequest r = request();
    r.firstboot = std::move(settings);
    return r;
}

const core::FileChange* planned(const core::Plan& plan, const std::string& path) {
    for (const core::FileChange& change : plan.changes)
        if (change.path == path)
            return &change;
    return nullptr;
}

} // namespace

TEST_CASE("apply --firstboot writes what first boot reads as the apply's own profile and sets") {
    TempDir dir;
    fs::Root root(image_with_unit(dir, "profile: pi4 # the image builder's\n"));
    fs::RootLock lock(root);
    pipeline::PlanRequest r = firstboot_request({"trial=false", "selftest_s=9"});
    r.sets.push_back("description='it''s: a \"box\" # 1, [x]'"); // YAML inside YAML
    pipeline::Planned p = pipeline::make_plan(r, root);
    CHECK_FALSE(p.plan.refused());
    const core::FileChange* config = planned(p.plan, core::k_firstboot_config_path);
    REQUIRE(config);
    CHECK(config->next.content.starts_with(
        "# Written by rtprov from profile 'x86-debian13'. Do not edit;"));
    CHECK(config->next.content == pipeline::firstboot_config(r, "x86-debian13"));
    profile::FirstbootConfig back =
        profile::parse_firstboot_config(config->next.content, "firstboot.yaml");
    CHECK(back.profile == "x86-debian13");
    CHECK(back.sets == r.sets);
    CHECK_FALSE(back.trial);
    CHECK(back.selftest_s == 9);
    CHECK(back.reboot); // the default, written out
    const core::FileChange* link = planned(p.plan, k_firstboot_link);
    REQUIRE(link);
    CHECK(link->next.symlink);
    CHECK(link->next.content == "/usr/lib/systemd/system/rtprov-firstboot.service");

    FakeManager unused;
    pipeline::apply(root, lock, p, info(p), {}, {false, false}, unused, no_report);
    CHECK(dir.read("debian13/etc/rtprov/firstboot.yaml") == config->next.content);
    CHECK(std::filesystem::read_symlink(dir.path() + "/debian13" + k_firstboot_link) ==
          "/usr/lib/systemd/system/rtprov-firstboot.service");
    // The same apply again has nothing to do.
    CHECK(target::apply_changes_nothing(root, pipeline::make_plan(r, root).plan));

    // Rollback takes both out, and puts back the firstboot.yaml that was there before.
    pipeline::rollback(root, lock, target::DriftPolicy::refuse, {}, false, unused);
    CHECK(dir.read("debian13/etc/rtprov/firstboot.yaml") == "profile: pi4 # the image builder's\n");
    CHECK_FALSE(std::filesystem::is_symlink(dir.path() + "/debian13" + k_firstboot_link));
}

TEST_CASE("an apply without --firstboot retires first boot's files offline and keeps them live") {
    TempDir dir;
    fs::Root root(image_with_unit(dir));
    fs::RootLock lock(root);
    FakeManager unused;
    pipeline::Planned with = pipeline::make_plan(firstboot_request(), root);
    pipeline::apply(root, lock, with, info(with), {}, {false, false}, unused, no_report);

    // First boot's own apply of the running system (or its trial's commit) runs without
    // --firstboot, before first boot has finished: the files stay rtprov's, as they are.
    pipeline::PlanRequest live = request();
    live.live = true;
    pipeline::Planned kept = pipeline::make_plan(live, root);
    CHECK_FALSE(planned(kept.plan, core::k_firstboot_config_path));
    CHECK_FALSE(planned(kept.plan, k_firstboot_link));
    CHECK(kept.plan.kept ==
          std::vector<std::string>{core::k_firstboot_config_path, k_firstboot_link});
    CHECK(target::stale_entries(root, *target::read_state(root), kept.plan).empty());
    // Carried out (the plan above is this machine's, whose CPUs may not fit the profile: the
    // offline plan with what a live one adds), a hand edit on the box is kept and stays
    // drift, not taken for what rtprov wrote.
    const std::string written = dir.read("debian13/etc/rtprov/firstboot.yaml");
    dir.write("debian13/etc/rtprov/firstboot.yaml", "profile: pi4 # edited on the box\n");
    core::Plan as_live = pipeline::make_plan(request(), root).plan;
    as_live.kept = kept.plan.kept;
    target::ApplyResult result = target::apply_plan(root, lock, as_live, info(with));
    CHECK(result.retired.empty());
    CHECK(dir.read("debian13/etc/rtprov/firstboot.yaml") == "profile: pi4 # edited on the box\n");
    CHECK(std::filesystem::is_symlink(dir.path() + "/debian13" + k_firstboot_link));
    target::Drift drift = target::Drift::none;
    for (const target::FileStatus& file : target::read_status(root).files)
        if (file.file.path == core::k_firstboot_config_path)
            drift = file.drift;
    CHECK(drift == target::Drift::modified);
    // An offline apply without --firstboot would retire it and lose the edit: refused.
    pipeline::Planned without = pipeline::make_plan(request(), root);
    CHECK_THROWS_WITH(
        pipeline::apply(root, lock, without, info(without), {}, {false, false}, unused, no_report),
        Catch::Matchers::Contains("/etc/rtprov/firstboot.yaml', which the profile no longer "
                                  "needs, was changed by hand"));
    dir.write("debian13/etc/rtprov/firstboot.yaml", written);

    // An image builder's apply without it: first boot is no longer wanted, and goes as a
    // file a profile no longer needs goes.
    without = pipeline::make_plan(request(), root);
    std::vector<std::string> stale;
    for (const target::ManagedFile& file :
         target::stale_entries(root, *target::read_state(root), without.plan))
        stale.push_back(file.path);
    CHECK(stale == std::vector<std::string>{core::k_firstboot_config_path, k_firstboot_link});
    pipeline::Applied applied =
        pipeline::apply(root, lock, without, info(without), {}, {false, false}, unused, no_report);
    CHECK(applied.result.retired == stale);
    CHECK_FALSE(root.exists(core::k_firstboot_config_path));
    CHECK_FALSE(std::filesystem::is_symlink(dir.path() + "/debian13" + k_firstboot_link));
}

TEST_CASE("--firstboot is refused where first boot would not apply the same profile") {
    TempDir dir;
    fs::Root root(image_with_unit(dir));
    auto refusal = [](const core::Plan& plan) {
        for (const core::Finding& f : plan.findings)
            if (f.code == "firstboot-profile" && f.severity == core::Severity::error)
                return f.message;
        return std::string("none");
    };
    // A profile file of the build host: first boot looks profiles up by name in the image.
    pipeline::PlanRequest by_path = firstboot_request();
    by_path.profile = k_source + "/board-profiles/x86-debian13.yaml";
    CHECK(refusal(pipeline::make_plan(by_path, root).plan) ==
          "--firstboot: first boot looks the profile up by the name firstboot.yaml records, in "
          "the image's /etc/rtprov/profiles, then among rtprov's built-in profiles, and '" +
              by_path.profile +
              "' is a file of this machine: put it in the image as "
              "'/etc/rtprov/profiles/x86-debian13.yaml' and pass --profile 'x86-debian13'");
    // One found in --profile-dir, which the image does not have.
    dir.write("dirs/studio.yaml", "extends: x86-debian13\ndescription: a studio box\n");
    pipeline::PlanRequest from_dir = firstboot_request();
    from_dir.profile = "studio";
    from_dir.profile_dirs = {dir.path() + "/dirs"};
    CHECK(refusal(pipeline::make_plan(from_dir, root).plan) ==
          "--firstboot: first boot looks the profile up by the name firstboot.yaml records, in "
          "the image's /etc/rtprov/profiles, then among rtprov's built-in profiles, and would "
          "not get the profile 'studio' this apply takes from --profile-dir: put it in the image "
          "as '/etc/rtprov/profiles/studio.yaml'");
    // ... or one there that hides another of the same name.
    dir.write("dirs/x86-debian13.yaml", "extends: x86-debian13\ndescription: another\n");
    pipeline::PlanRequest hiding = firstboot_request();
    hiding.profile_dirs = {dir.path() + "/dirs"};
    CHECK(refusal(pipeline::make_plan(hiding, root).plan)
              .find("would not get the profile "
                    "'x86-debian13'") != std::string::npos);
    // Once it is in the image, the same --profile-dir is fine.
    dir.write("debian13/etc/rtprov/profiles/studio.yaml",
              "extends: x86-debian13\ndescription: a studio box\n");
    CHECK(refusal(pipeline::make_plan(from_dir, root).plan) == "none");
    // Without --firstboot nothing of this is asked.
    from_dir.firstboot.reset();
    by_path.firstboot.reset();
    CHECK(refusal(pipeline::make_plan(by_path, root).plan) == "none");
}

TEST_CASE("--firstboot refuses a priority only --force-priority lets through") {
    // First boot's apply gets the profile and --set firstboot.yaml records, not this
    // apply's --force-priority: it would refuse what this apply forced.
    TempDir dir;
    fs::Root root(image_with_unit(dir));
    dir.write("debian13/usr/lib/systemd/system/mpd.service", "[Service]\nExecStart=/usr/bin/mpd\n");
    pipeline::PlanRequest r = firstboot_request();
    r.sets.insert(r.sets.end(),
                  {"tuning.services.mpd.policy=fifo", "tuning.services.mpd.priority=60"});
    r.options.force_priority = true;
    auto refusals = [](const core::Plan& plan) {
        std::vector<std::string> found;
        for (const core::Finding& f : plan.findings)
            if (f.code == "firstboot-force-priority" && f.severity == core::Severity::error)
                found.push_back(f.message);
        return found;
    };
    CHECK(refusals(pipeline::make_plan(r, root).plan) ==
          std::vector<std::string>{
              "--firstboot: first boot applies without --force-priority (firstboot.yaml records "
              "the profile and its --set, not this apply's switches), and would refuse "
              "'mpd.service''s priority, which inverts its app's own: force it in the profile, "
              "which first boot applies too: --set "
              "'tuning.services.mpd.force_priority=true'"});
    // Forced in the profile, first boot forces it too.
    r.sets.push_back("tuning.services.mpd.force_priority=true");
    CHECK(refusals(pipeline::make_plan(r, root).plan).empty());
    // Without --firstboot, --force-priority is this apply's alone.
    r.sets.pop_back();
    r.firstboot.reset();
    CHECK(refusals(pipeline::make_plan(r, root).plan).empty());
    CHECK_FALSE(pipeline::make_plan(r, root).plan.refused());
}

TEST_CASE("--firstboot is for an image, not the running system") {
    TempDir dir;
    fs::Root root(image_with_unit(dir));
    pipeline::PlanRequest r = firstboot_request();
    r.live = true;
    try {
        pipeline::make_plan(r, root);
        FAIL("no error");
    } catch (const UsageError& e) {
        CHECK(std::string(e.what()) ==
              "--firstboot: first boot is set up in an image: use it with --root or --image (on "
              "the running system, first boot has run, or is what runs this apply)");
    }
    // A wrong --firstboot-set stops the plan with its own message.
    CHECK_THROWS_WITH(pipeline::make_plan(firstboot_request({"reboot=later"}), root),
                      "--firstboot-set 'reboot=later': 'reboot' must be true or false, not "
                      "'later'");
}
