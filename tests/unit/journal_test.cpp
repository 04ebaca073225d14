// SPDX-License-Identifier: Apache-2.0
#include "provisioner/target/journal.hpp"

#include "provisioner/core/error.hpp"
#include "tests/unit/catch.hpp"
#include "tests/unit/temp_dir.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

using namespace rtprov;
using namespace rtprov::target;
using namespace rtprov::fs;
namespace stdfs = std::filesystem;

namespace {

// A minimal system root with one file rtprov will change and none it will create.
void make_system(const TempDir& dir) {
    dir.write("etc/default/grub", "GRUB_CMDLINE_LINUX_DEFAULT=\"quiet\"\n");
    stdfs::create_directories(dir.path() + "/var/lib");
    ::chmod((dir.path() + "/etc/default/grub").c_str(), 0640);
    if (::geteuid() == 0)
        REQUIRE(::chown((dir.path() + "/etc/default/grub").c_str(), 123, 456) == 0);
}

// A file rtprov owns starts with its header (core::owned_file_header).
const std::string k_owned = core::owned_file_header("test") + "owned\n";

core::Plan two_changes(const Root& root) {
    core::Plan plan;
    core::FileState grub = *root.read("/etc/default/grub", rtprov::fs::caps::k_config);
    core::FileState next = grub;
    next.content = "GRUB_CMDLINE_LINUX_DEFAULT=\"quiet isolcpus=3\"\n";
    plan.changes.push_back({"/etc/default/grub", grub, next, "test"});
    plan.changes.push_back(
        {"/etc/rtprov/sub/owned.conf", std::nullopt, {k_owned, 0644, 0, 0, std::nullopt}, "test"});
    return plan;
}

const ApplyInfo k_info{"test", std::string(64, 'f'), "2026-11-29T00:00:00Z", "grub"};

// path -> "type mode uid gid content" for every entry below 'dir'.
std::map<std::string, std::string> snapshot(const std::string& dir) {
    std::map<std::string, std::string> out;
    for (const auto& entry : stdfs::recursive_directory_iterator(dir)) {
        struct stat st {};
        ::lstat(entry.path().c_str(), &st);
        std::string line = std::to_string(st.st_mode) + " " + std::to_string(st.st_uid) + " " +
                           std::to_string(st.st_gid);
        if (S_ISREG(st.st_mode))
            line += " " + TempDir::read_host_file(entry.path().string());
        out[entry.path().string().substr(dir.size())] = line;
    }
    return out;
}

} // namespace

TEST_CASE("apply then rollback leaves the tree byte-identical, mode and owner included") {
    TempDir dir;
    make_system(dir);
    auto before = snapshot(dir.path());
    Root root(dir.path());
    ApplyResult applied = apply_plan(root, RootLock(root), two_changes(root), k_info);
    CHECK(applied.written.size() == 2);
    CHECK(dir.read("etc/rtprov/sub/owned.conf") == k_owned);
    CHECK(snapshot(dir.path()) != before);

    RollbackResult rolled = rollback(root, RootLock(root), DriftPolicy::refuse);
    CHECK(rolled.restored == std::vector<std::string>{"/etc/default/grub"});
    CHECK(snapshot(dir.path()) == before);
}

TEST_CASE("the state records the profile, created folders and checksums") {
    TempDir dir;
    make_system(dir);
    Root root(dir.path());
    apply_plan(root, RootLock(root), two_changes(root), k_info);
    auto state = read_state(root);
    REQUIRE(state);
    CHECK(state->status == ApplyStatus::applied);
    CHECK(state->profile == "test");
    CHECK(state->state_dir_created);
    CHECK(state->created_dirs == std::vector<std::string>{"/etc/rtprov", "/etc/rtprov/sub"});
    REQUIRE(state->files.size() == 2);
    CHECK_FALSE(state->files[0].created);
    CHECK(state->files[1].created);
}

TEST_CASE("a second apply of the same plan changes nothing") {
    TempDir dir;
    make_system(dir);
    Root root(dir.path());
    apply_plan(root, RootLock(root), two_changes(root), k_info);
    auto after_first = snapshot(dir.path());
    core::Plan same; // what plan() gives once the target matches
    same.unchanged = {"/etc/default/grub", "/etc/rtprov/sub/owned.conf"};
    ApplyResult again = apply_plan(root, RootLock(root), same, k_info);
    CHECK(again.nothing_to_do);
    CHECK(snapshot(dir.path()) == after_first);
}

TEST_CASE("a later apply keeps the original from before the first apply") {
    TempDir dir;
    make_system(dir);
    auto before = snapshot(dir.path());
    Root root(dir.path());
    apply_plan(root, RootLock(root), two_changes(root), k_info);
    core::Plan second;
    core::FileState grub = *root.read("/etc/default/grub", rtprov::fs::caps::k_config);
    core::FileState next = grub;
    next.content = "GRUB_CMDLINE_LINUX_DEFAULT=\"quiet isolcpus=2-3\"\n";
    second.changes.push_back({"/etc/default/grub", grub, next, "test"});
    apply_plan(root, RootLock(root), second, k_info);
    rollback(root, RootLock(root), DriftPolicy::refuse);
    CHECK(snapshot(dir.path()) == before);
}

TEST_CASE("rollback refuses to lose hand edits unless forced") {
    TempDir dir;
    make_system(dir);
    auto before = snapshot(dir.path());
    Root root(dir.path());
    apply_plan(root, RootLock(root), two_changes(root), k_info);
    dir.write("etc/rtprov/sub/owned.conf", "edited by hand\n");
    auto edited = snapshot(dir.path());
    try {
        rollback(root, RootLock(root), DriftPolicy::refuse);
        FAIL("rollback did not refuse");
    } catch (const Error& e) {
        CHECK(std::string(e.what()) ==
              "rollback refused: '" + dir.path() +
                  "/etc/rtprov/sub/owned.conf' was changed by hand since rtprov wrote it, and "
                  "rolling back would lose those changes; save them, then run 'rtprov rollback "
                  "--force' on the same target. Nothing was changed");
    }
    CHECK(snapshot(dir.path()) == edited);
    rollback(root, RootLock(root), DriftPolicy::overwrite);
    CHECK(snapshot(dir.path()) == before);
}

TEST_CASE("status reports drift by checksum") {
    TempDir dir;
    make_system(dir);
    Root root(dir.path());
    apply_plan(root, RootLock(root), two_changes(root), k_info);
    CHECK(read_status(root).files[0].drift == Drift::none);
    dir.write("etc/default/grub", "changed\n");
    stdfs::remove(dir.path() + "/etc/rtprov/sub/owned.conf");
    Status status = read_status(root);
    CHECK(status.files[0].drift == Drift::modified);
    CHECK(status.files[1].drift == Drift::missing);
}

TEST_CASE("an existing state folder is kept by rollback") {
    TempDir dir;
    make_system(dir);
    dir.write("var/lib/rtprov/selftest/keep.json", "{}");
    auto before = snapshot(dir.path());
    Root root(dir.path());
    apply_plan(root, RootLock(root), two_changes(root), k_info);
    CHECK_FALSE(read_state(root)->state_dir_created);
    rollback(root, RootLock(root), DriftPolicy::refuse);
    CHECK(snapshot(dir.path()) == before);
}

TEST_CASE("a corrupted state file stops apply and rollback and is left as it is") {
    TempDir dir;
    make_system(dir);
    Root root(dir.path());
    apply_plan(root, RootLock(root), two_changes(root), k_info);
    std::string state = dir.read("var/lib/rtprov/state");
    state[state.find("status applied") + 7] = 'X';
    dir.write("var/lib/rtprov/state", state);
    auto corrupted = snapshot(dir.path());
    CHECK_THROWS_AS(rollback(root, RootLock(root), DriftPolicy::overwrite), Error);
    CHECK_THROWS_AS(apply_plan(root, RootLock(root), two_changes(root), k_info), Error);
    CHECK_THROWS_AS(read_status(root), Error);
    CHECK(snapshot(dir.path()) == corrupted);
}

TEST_CASE("a root without /etc or /var/lib is refused") {
    TempDir dir;
    stdfs::create_directories(dir.path() + "/etc");
    Root root(dir.path());
    try {
        apply_plan(root, RootLock(root), core::Plan{}, k_info);
        FAIL("no error");
    } catch (const Error& e) {
        CHECK(std::string(e.what()) ==
              "target root '" + dir.path() +
                  "' has no '/var/lib', so it is not the root of an installed system; pass the "
                  "folder that holds etc/, usr/ and var/ (in a pi-gen stage: \"${ROOTFS_DIR}\")");
    }
}

TEST_CASE("rollback with nothing applied does nothing") {
    TempDir dir;
    make_system(dir);
    auto before = snapshot(dir.path());
    Root root(dir.path());
    CHECK(rollback(root, RootLock(root), DriftPolicy::refuse).nothing_to_do);
    CHECK(snapshot(dir.path()) == before);
}

TEST_CASE("a failing command stays pending and the next plan runs it again") {
    TempDir dir;
    make_system(dir);
    Root root(dir.path());
    core::Plan plan = two_changes(root);
    plan.commands.push_back({{"update-grub"}, "test", true, {}});
    std::vector<std::string> ran;
    auto failing = [&](const std::vector<std::string>& argv) {
        ran.push_back(argv[0]);
        return 1;
    };
    CHECK_THROWS_AS(apply_plan(root, RootLock(root), plan, k_info, failing), Error);
    auto state = read_state(root);
    REQUIRE(state);
    CHECK(state->pending == std::vector<std::vector<std::string>>{{"update-grub"}});
    CHECK(state->ran.empty());

    core::Plan retry; // what the planner makes of it: no file changes, the command again
    retry.commands.push_back({{"update-grub"}, "retry", true, {}});
    auto working = [&](const std::vector<std::string>& argv) {
        ran.push_back(argv[0]);
        return 0;
    };
    apply_plan(root, RootLock(root), retry, k_info, working);
    state = read_state(root);
    CHECK(state->pending.empty());
    CHECK(state->ran == std::vector<std::vector<std::string>>{{"update-grub"}});
    CHECK(ran == std::vector<std::string>{"update-grub", "update-grub"});
}

TEST_CASE("a failed update-grub left to first boot leaves the pending list, its grub.cfg kept") {
    TempDir dir;
    make_system(dir);
    dir.write("boot/grub/grub.cfg", "original grub.cfg\n");
    auto before = snapshot(dir.path());
    Root root(dir.path());
    core::Plan plan = two_changes(root);
    plan.commands.push_back({{"update-grub"}, "test", true, {"/boot/grub/grub.cfg"}});
    auto failing = [&](const std::vector<std::string>&) {
        dir.write("boot/grub/grub.cfg", "half made\n"); // killed or failed half way
        return 1;
    };
    CHECK_THROWS_AS(apply_plan(root, RootLock(root), plan, k_info, failing), Error);
    REQUIRE(read_state(root)->pending == std::vector<std::vector<std::string>>{{"update-grub"}});

    // What the planner makes of it offline (--regenerate-boot=first-boot): the first-boot
    // record as a file change, the command left to first boot.
    core::Plan later;
    later.unchanged = {"/etc/default/grub", "/etc/rtprov/sub/owned.conf"};
    later.changes.push_back(
        {core::k_pending_regeneration_path,
         std::nullopt,
         {core::owned_file_header("test") + "update-grub\n", 0644, 0, 0, std::nullopt},
         "test"});
    later.recorded_for_first_boot = {{"update-grub"}};
    CHECK_FALSE(apply_changes_nothing(root, later));
    ApplyResult result = apply_plan(root, RootLock(root), later, k_info);
    CHECK(result.recorded == std::vector<std::string>{"update-grub"});
    std::optional<State> state = read_state(root); // and it reads as a state rtprov wrote
    REQUIRE(state);
    CHECK(state->pending.empty());
    CHECK(state->made == std::vector<std::vector<std::string>>{{"update-grub"}});
    REQUIRE(state->find("/boot/grub/grub.cfg"));
    CHECK(state->find("/boot/grub/grub.cfg")->sha256.empty());
    // Recorded already: a plan that records it again changes nothing.
    core::Plan again = later;
    again.unchanged.push_back(core::k_pending_regeneration_path);
    again.changes.clear();
    CHECK(apply_changes_nothing(root, again));
    CHECK(apply_plan(root, RootLock(root), again, k_info).nothing_to_do);

    // Rolled back before first boot: grub.cfg's original comes back, nothing runs.
    int runs = 0;
    RollbackResult rolled = rollback(root, RootLock(root), DriftPolicy::refuse,
                                     [&](const std::vector<std::string>&) { return ++runs, 0; });
    CHECK(runs == 0);
    CHECK(rolled.ran.empty());
    CHECK(snapshot(dir.path()) == before);
}

TEST_CASE("a pending command whose record for first boot is written already leaves the list") {
    TempDir dir;
    make_system(dir);
    Root root(dir.path());
    core::Plan plan = two_changes(root);
    plan.changes.push_back(
        {core::k_pending_regeneration_path,
         std::nullopt,
         {core::owned_file_header("test") + "update-grub\n", 0644, 0, 0, std::nullopt},
         "test"});
    plan.commands.push_back({{"update-grub"}, "test", true, {}});
    CHECK_THROWS_AS(apply_plan(root, RootLock(root), plan, k_info,
                               [](const std::vector<std::string>&) { return 1; }),
                    Error);
    // The record is there and the command still pending, as after a run killed between
    // writing the one and taking the other off the list.
    core::Plan later;
    later.unchanged = {"/etc/default/grub", "/etc/rtprov/sub/owned.conf",
                       core::k_pending_regeneration_path};
    later.recorded_for_first_boot = {{"update-grub"}};
    CHECK_FALSE(apply_changes_nothing(root, later));
    ApplyResult result = apply_plan(root, RootLock(root), later, k_info);
    CHECK_FALSE(result.nothing_to_do);
    CHECK(result.recorded == std::vector<std::string>{"update-grub"});
    CHECK(read_state(root)->pending.empty());
}

TEST_CASE("a file a command generated is put back byte for byte, or made again if changed") {
    TempDir dir;
    make_system(dir);
    dir.write("boot/grub/grub.cfg", "original grub.cfg\n");
    auto before = snapshot(dir.path());
    Root root(dir.path());
    core::Plan plan = two_changes(root);
    plan.commands.push_back({{"update-grub"}, "test", true, {"/boot/grub/grub.cfg"}});
    std::vector<std::string> ran;
    auto update_grub = [&](const std::vector<std::string>& argv) {
        ran.push_back(argv[0]);
        dir.write("boot/grub/grub.cfg", "generated with " + dir.read("etc/default/grub"));
        return 0;
    };
    apply_plan(root, RootLock(root), plan, k_info, update_grub);
    CHECK(dir.read("boot/grub/grub.cfg").rfind("generated with", 0) == 0);

    // Untouched since: restored from the backup, no need to run it again.
    rollback(root, RootLock(root), DriftPolicy::refuse, update_grub);
    CHECK(snapshot(dir.path()) == before);
    CHECK(ran.size() == 1);

    // Regenerated by someone else since (a kernel update): made again from the restored input.
    core::Plan again = two_changes(root);
    again.commands.push_back({{"update-grub"}, "test", true, {"/boot/grub/grub.cfg"}});
    apply_plan(root, RootLock(root), again, k_info, update_grub);
    CHECK(ran.size() == 2);
    dir.write("boot/grub/grub.cfg", "regenerated by a kernel update\n");
    rollback(root, RootLock(root), DriftPolicy::refuse, update_grub);
    CHECK(ran.size() == 3);
    CHECK(dir.read("boot/grub/grub.cfg") ==
          "generated with GRUB_CMDLINE_LINUX_DEFAULT=\"quiet\"\n");
}

TEST_CASE("a grub.cfg rtprov's command created is removed, or made again once GRUB reads it") {
    auto run_case = [](const std::string& there) {
        TempDir dir;
        make_system(dir);
        if (!there.empty())
            dir.write(there, "x\n");
        Root root(dir.path());
        core::Plan plan = two_changes(root);
        plan.commands.push_back({{"update-grub"}, "test", true, {"/boot/grub/grub.cfg"}});
        int runs = 0;
        auto update_grub = [&](const std::vector<std::string>&) {
            ++runs;
            dir.write("boot/grub/grub.cfg", "generated with " + dir.read("etc/default/grub"));
            return 0;
        };
        apply_plan(root, RootLock(root), plan, k_info, update_grub);
        REQUIRE(read_state(root)->find("/boot/grub/grub.cfg")->created);
        RollbackResult result = rollback(root, RootLock(root), DriftPolicy::refuse, update_grub);
        return std::tuple{dir.exists("boot/grub/grub.cfg") ? dir.read("boot/grub/grub.cfg")
                                                           : std::string("(none)"),
                          runs, result.ran};
    };
    // Nothing reads it, or only an environment block (grub-editenv makes one anywhere).
    for (const std::string there : {"", "boot/grub/grubenv"}) {
        auto [without, runs_without, ran_without] = run_case(there);
        CHECK(without == "(none)");
        CHECK(runs_without == 1);
        CHECK(ran_without.empty());
    }
    // GRUB installed (an image's grub-install): removing it would leave a grub> prompt.
    auto [with, runs_with, ran_with] = run_case("boot/grub/i386-pc/normal.mod");
    CHECK(with == "generated with GRUB_CMDLINE_LINUX_DEFAULT=\"quiet\"\n");
    CHECK(runs_with == 2);
    CHECK(ran_with == std::vector<std::string>{"update-grub"});
}

TEST_CASE("a file the profile no longer wants is removed, or gets its original back") {
    TempDir dir;
    make_system(dir);
    auto before = snapshot(dir.path());
    Root root(dir.path());
    apply_plan(root, RootLock(root), two_changes(root), k_info);
    core::Plan neither; // the profile no longer wants either file
    ApplyResult result = apply_plan(root, RootLock(root), neither, k_info);
    CHECK(result.retired ==
          std::vector<std::string>{"/etc/default/grub", "/etc/rtprov/sub/owned.conf"});
    CHECK(read_state(root)->files.empty());
    CHECK(read_state(root)->created_dirs.empty());
    rollback(root, RootLock(root), DriftPolicy::refuse);
    CHECK(snapshot(dir.path()) == before);
}

TEST_CASE("rollback gives a symlink it replaced its own time back") {
    TempDir dir;
    make_system(dir);
    stdfs::create_directories(dir.path() + "/etc/systemd/system");
    const std::string link = dir.path() + "/etc/systemd/system/x.service";
    stdfs::create_symlink("/lib/systemd/system/x.service", link);
    const timespec times[2] = {{0, UTIME_OMIT}, {1234567890, 0}};
    REQUIRE(::utimensat(AT_FDCWD, link.c_str(), times, AT_SYMLINK_NOFOLLOW) == 0);
    Root root(dir.path());
    core::Plan plan;
    plan.changes.push_back({"/etc/systemd/system/x.service",
                            root.read_entry("/etc/systemd/system/x.service", caps::k_managed),
                            core::symlink_to("/etc/rtprov/x.service"), "test"});
    apply_plan(root, RootLock(root), plan, k_info);
    rollback(root, RootLock(root), DriftPolicy::refuse);
    CHECK(stdfs::read_symlink(link) == "/lib/systemd/system/x.service");
    struct stat st {};
    REQUIRE(::lstat(link.c_str(), &st) == 0);
    CHECK(st.st_mtim.tv_sec == 1234567890);
}

TEST_CASE("a state copied from another root is refused, and nothing changes") {
    TempDir one, two;
    make_system(one);
    make_system(two);
    Root a(one.path()), b(two.path());
    apply_plan(a, RootLock(a), two_changes(a), k_info);
    stdfs::copy(one.path() + "/var/lib/rtprov", two.path() + "/var/lib/rtprov",
                stdfs::copy_options::recursive);
    auto before = snapshot(two.path());
    try {
        rollback(b, RootLock(b), DriftPolicy::overwrite);
        FAIL("a foreign state was rolled back");
    } catch (const Error& e) {
        CHECK(std::string(e.what()).find("does not belong to this root: it lists 2 files rtprov "
                                         "wrote, and none of them holds what rtprov wrote") !=
              std::string::npos);
    }
    CHECK_THROWS_AS(apply_plan(b, RootLock(b), two_changes(b), k_info), Error);
    CHECK_FALSE(read_status(b).foreign.empty());
    CHECK(read_status(a).foreign.empty());
    CHECK(snapshot(two.path()) == before);
}

TEST_CASE("a rollback killed after its first change is finished by the next one") {
    TempDir dir;
    make_system(dir);
    auto before = snapshot(dir.path());
    Root root(dir.path());
    apply_plan(root, RootLock(root), two_changes(root), k_info);
    // Killed right after it restored the files, before it removed its state: every file
    // holds its original, as on a root that never had this state, but the state says
    // the rollback was under way.
    int steps = 0;
    root.set_step_hook([&] {
        if (++steps == 4)
            throw std::runtime_error("killed");
    });
    CHECK_THROWS(rollback(root, RootLock(root), DriftPolicy::refuse));
    root.set_step_hook({});
    CHECK(read_state(root)->status == ApplyStatus::rolling_back);
    rollback(root, RootLock(root), DriftPolicy::refuse);
    CHECK(snapshot(dir.path()) == before);
}

TEST_CASE("a state naming a command rtprov never plans is refused before anything runs") {
    TempDir dir;
    make_system(dir);
    Root root(dir.path());
    apply_plan(root, RootLock(root), two_changes(root), k_info);
    State forged = *read_state(root);
    forged.ran.push_back({"sh", "-c", "touch /pwned"});
    root.write(k_state_file, core::FileState{serialize_state(forged), 0600, 0, 0, std::nullopt});
    bool ran = false;
    CHECK_THROWS_AS(rollback(root, RootLock(root), DriftPolicy::refuse,
                             [&](const std::vector<std::string>&) {
                                 ran = true;
                                 return 0;
                             }),
                    Error);
    CHECK_FALSE(ran);
}

TEST_CASE("an enable link rtprov created is its own when it points to one of rtprov's units") {
    const std::string wants = "/etc/systemd/system/multi-user.target.wants/";
    auto rolls_back = [&](const std::string& name, const std::string& target) {
        TempDir dir;
        make_system(dir);
        stdfs::create_directories(dir.path() + wants);
        Root root(dir.path());
        core::Plan plan = two_changes(root);
        plan.changes.push_back({wants + name, std::nullopt, core::symlink_to(target), "test"});
        apply_plan(root, RootLock(root), plan, k_info);
        try {
            rollback(root, RootLock(root), DriftPolicy::refuse);
        } catch (const Error& e) {
            return std::string(e.what()).find("does not carry rtprov's mark") == std::string::npos
                       ? std::string(e.what())
                       : std::string("refused as not rtprov's");
        }
        return std::string(stdfs::is_symlink(dir.path() + wants + name) ? "kept" : "removed");
    };
    CHECK(rolls_back("rtprov-cpu-governor.service",
                     "/etc/systemd/system/rtprov-cpu-governor.service") == "removed");
    // The first-boot unit of rtprov's package, where systemctl finds it.
    for (const char* dir :
         {"/etc/systemd/system", "/usr/local/lib/systemd/system", "/usr/lib/systemd/system"})
        CHECK(rolls_back("rtprov-firstboot.service",
                         std::string(dir) + "/rtprov-firstboot.service") == "removed");
    // Any other unit's link is never rtprov's, whatever a state says (forged or damaged).
    CHECK(rolls_back("ssh.service", "/usr/lib/systemd/system/ssh.service") ==
          "refused as not rtprov's");
    CHECK(rolls_back("rtprov-firstboot.service", "/usr/lib/systemd/system/other.service") ==
          "refused as not rtprov's");
}
