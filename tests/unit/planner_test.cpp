// SPDX-License-Identifier: Apache-2.0
#include "provisioner/planner/planner.hpp"

#include "tests/unit/catch.hpp"

using namespace rtprov::core;
using rtprov::planner::plan;

namespace {

Profile four_cores() {
    Profile p;
    p.name = std::string("t"); // not = "t": GCC 12 -Wrestrict false positive (bug 105329)
    p.board.cpus = 4;
    p.board.match.os_id = {"debian"};
    return p;
}

TargetFacts debian() {
    TargetFacts facts;
    facts.os = OsRelease{"debian", {}, "13", "Debian GNU/Linux 13 (trixie)"};
    return facts;
}

const FileChange* change_of(const Plan& p, const std::string& path) {
    for (const FileChange& c : p.changes)
        if (c.path == path)
            return &c;
    return nullptr;
}

bool has_finding(const Plan& plan, const std::string& code, Severity severity) {
    for (const Finding& f : plan.findings)
        if (f.code == code && f.severity == severity)
            return true;
    return false;
}

} // namespace

TEST_CASE("plan writes the resolved profile with rtprov's header") {
    Plan p = plan(four_cores(), "name: t\n", debian());
    const FileChange* c = change_of(p, "/etc/rtprov/profile.yaml");
    REQUIRE(c);
    CHECK(&p.changes[0] == c); // first: everything else is read back from it
    CHECK_FALSE(c->old);
    CHECK(c->next.content == "# Written by rtprov from profile 't'. Do not edit; change the "
                             "profile and run rtprov.\nname: t\n");
    CHECK(c->next.mode == 0644);
    CHECK_FALSE(p.refused());
}

TEST_CASE("plan leaves a file that already matches alone") {
    TargetFacts facts = debian();
    facts.files["/etc/rtprov/profile.yaml"] =
        FileState{owned_file_header("t") + "name: t\n", 0644, 0, 0, std::nullopt};
    Plan p = plan(four_cores(), "name: t\n", facts);
    CHECK_FALSE(change_of(p, "/etc/rtprov/profile.yaml"));
    CHECK(p.unchanged.front() == "/etc/rtprov/profile.yaml");
}

TEST_CASE("plan keeps the mode and owner of a file it replaces") {
    TargetFacts facts = debian();
    facts.files["/etc/rtprov/profile.yaml"] = FileState{"old\n", 0600, 0, 4, std::nullopt};
    Plan p = plan(four_cores(), "name: t\n", facts);
    const FileChange* c = change_of(p, "/etc/rtprov/profile.yaml");
    REQUIRE(c);
    CHECK(c->next.mode == 0600);
    CHECK(c->next.gid == 4u);
}

TEST_CASE("plan refuses a layout beyond the running machine's CPUs") {
    Profile prof = four_cores();
    prof.board.cpus.reset();
    prof.tuning.cores.reserved = CpuList({3});
    prof.origins["tuning.cores.reserved"] = {"p.yaml", 5, 15};
    TargetFacts facts = debian();
    facts.mode = TargetMode::live;
    facts.cpu_count = 2;
    Plan p = plan(prof, "", facts);
    CHECK(p.refused());
    bool found = false;
    for (const Finding& f : p.findings)
        found |= f.message == "p.yaml:5:15: CPU 3 is beyond the board's 2 CPUs (0-1)";
    CHECK(found);
}

TEST_CASE("an auto layout offline is deferred to first boot, and said so") {
    Profile prof = four_cores();
    prof.board.cpus.reset();
    Plan p = plan(prof, "", debian());
    CHECK_FALSE(p.refused());
    CHECK(has_finding(p, "cores-auto", Severity::info));
}

TEST_CASE("a profile for another OS gets a warning") {
    TargetFacts facts;
    facts.os = OsRelease{"ubuntu", {"debian"}, "24.04", "Ubuntu"};
    Profile prof = four_cores();
    prof.board.match.os_id = {"raspbian"};
    CHECK(has_finding(plan(prof, "", facts), "os-mismatch", Severity::warning));
    prof.board.match.os_id = {"debian"}; // ID_LIKE counts
    CHECK_FALSE(has_finding(plan(prof, "", facts), "os-mismatch", Severity::warning));
    CHECK(has_finding(plan(prof, "", TargetFacts{}), "os-unknown", Severity::warning));
}

TEST_CASE("an update-grub the last apply did not finish is run now or recorded for first boot") {
    Profile p = four_cores();
    p.board.boot.loader = BootLoader::grub;
    TargetFacts facts = debian();
    facts.executables = {"/usr/sbin/update-grub"};
    PlanOptions now, first_boot, never;
    now.regenerate = Regenerate::now;
    first_boot.regenerate = Regenerate::first_boot;
    never.regenerate = Regenerate::never;
    // The target as a finished apply left it: every file as planned, nothing to run.
    for (const FileChange& c : plan(p, "", facts, now).changes)
        facts.files[c.path] = c.next;
    REQUIRE(plan(p, "", facts, now).changes.empty());
    REQUIRE(plan(p, "", facts, now).commands.empty());
    REQUIRE(plan(p, "", facts, first_boot).changes.empty());

    facts.pending_commands = {{"update-grub"}};
    Plan ran = plan(p, "", facts, now);
    CHECK(ran.changes.empty());
    REQUIRE(ran.commands.size() == 1);
    CHECK(ran.commands[0].argv == std::vector<std::string>{"update-grub"});
    CHECK(ran.commands[0].reason ==
          "regenerate /boot/grub/grub.cfg; the last apply's did not finish");
    CHECK(ran.commands[0].produces == std::vector<std::string>{"/boot/grub/grub.cfg"});
    CHECK(ran.recorded_for_first_boot.empty());

    Plan recorded = plan(p, "", facts, first_boot);
    CHECK(recorded.commands.empty());
    REQUIRE(recorded.changes.size() == 1);
    CHECK(recorded.changes[0].path == k_pending_regeneration_path);
    CHECK(recorded.changes[0].next.content == owned_file_header("t") + "update-grub\n");
    CHECK(recorded.recorded_for_first_boot ==
          std::vector<std::vector<std::string>>{{"update-grub"}});
    CHECK(has_finding(recorded, "command-pending", Severity::warning));

    // Recorded already (the record is on disk): still handed over, nothing else to write.
    facts.files[k_pending_regeneration_path] = recorded.changes[0].next;
    Plan again = plan(p, "", facts, first_boot);
    CHECK(again.changes.empty());
    CHECK(again.recorded_for_first_boot == std::vector<std::vector<std::string>>{{"update-grub"}});
    facts.files.erase(k_pending_regeneration_path);

    // never: nothing runs or is recorded; the plan says it stays undone.
    Plan left = plan(p, "", facts, never);
    CHECK(left.changes.empty());
    CHECK(left.commands.empty());
    CHECK(left.recorded_for_first_boot.empty());
    CHECK(has_finding(left, "command-pending", Severity::warning));
}
