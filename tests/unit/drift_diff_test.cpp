// SPDX-License-Identifier: Apache-2.0
#include "provisioner/pipeline/drift_diff.hpp"

#include "provisioner/cli/render.hpp"
#include "provisioner/core/sha256.hpp"
#include "tests/unit/catch.hpp"
#include "tests/unit/temp_dir.hpp"

#include <algorithm>
#include <filesystem>

using namespace rtprov;
using namespace rtprov::target;
using namespace rtprov::fs;
namespace stdfs = std::filesystem;

namespace {

const std::string k_owned = core::owned_file_header("test") + "[Service]\nCPUAffinity=3\n";
const std::string k_cmdline = "console=tty1 root=ROOTDEV rootwait\n";
const ApplyInfo k_info{"test", std::string(64, 'f'), "2026-11-29T00:00:00Z", "rpi-firmware"};

// A root with a command line rtprov edits and a drop-in it creates, applied.
core::Plan applied(const TempDir& dir, Root& root) {
    dir.write("boot/firmware/cmdline.txt", k_cmdline);
    stdfs::create_directories(dir.path() + "/var/lib");
    stdfs::create_directories(dir.path() + "/etc");
    core::Plan plan;
    core::FileState cmdline = *root.read("/boot/firmware/cmdline.txt", caps::k_cmdline);
    core::FileState next = cmdline;
    next.content = "console=tty1 root=ROOTDEV rootwait isolcpus=3 nohz=on\n";
    plan.changes.push_back({"/boot/firmware/cmdline.txt", cmdline, next, "test"});
    plan.cmdline_edits["/boot/firmware/cmdline.txt"] = {
        true, {"isolcpus", "nohz"}, {"isolcpus=3", "nohz=on"}};
    plan.changes.push_back({"/etc/systemd/system/mpd.service.d/50-rtprov.conf",
                            std::nullopt,
                            {k_owned, 0644, 0, 0, std::nullopt},
                            "test"});
    apply_plan(root, RootLock(root), plan, k_info);
    return plan;
}

} // namespace

TEST_CASE("status --diff shows a hand edit of a file rtprov created, rebuilt from the plan") {
    TempDir dir;
    Root root(dir.path());
    core::Plan plan = applied(dir, root);
    dir.write("etc/systemd/system/mpd.service.d/50-rtprov.conf",
              core::owned_file_header("test") + "[Service]\nCPUAffinity=2\n");
    Status status = read_status(root);
    std::vector<pipeline::DriftDiff> diffs = pipeline::drift_diffs(root, status, {{plan}, ""});
    REQUIRE(diffs.size() == 1);
    CHECK(diffs[0].path == "/etc/systemd/system/mpd.service.d/50-rtprov.conf");
    CHECK(diffs[0].drift == Drift::modified);
    const std::string header_lines = core::owned_file_header("test");
    const auto header_count = std::count(header_lines.begin(), header_lines.end(), '\n');
    // the header's last lines as context, then exactly the edit
    CHECK(diffs[0].diff.rfind("--- /etc/systemd/system/mpd.service.d/50-rtprov.conf (as rtprov "
                              "wrote it)\n+++ /etc/systemd/system/mpd.service.d/50-rtprov.conf "
                              "(now)\n@@ ",
                              0) == 0);
    CHECK(diffs[0].diff.find("\n-CPUAffinity=3\n+CPUAffinity=2\n") != std::string::npos);
    CHECK(std::count(diffs[0].diff.begin(), diffs[0].diff.end(), '\n') ==
          3 + std::min<long>(3, header_count + 1) + 2);
    CHECK(diffs[0].note == "rebuilt by planning the applied profile again; its sha256 is the "
                           "one recorded");
}

TEST_CASE("status --diff rebuilds a command line from its original and rtprov's part") {
    TempDir dir;
    Root root(dir.path());
    applied(dir, root);
    dir.write("boot/firmware/cmdline.txt",
              "console=tty1 root=ROOTDEV rootwait isolcpus=2 nohz=on\n");
    // no plan: only the original in backup.tar and the recorded part
    std::vector<pipeline::DriftDiff> diffs = pipeline::drift_diffs(root, read_status(root), {});
    REQUIRE(diffs.size() == 1);
    CHECK(diffs[0].diff == "--- /boot/firmware/cmdline.txt (as rtprov wrote it)\n"
                           "+++ /boot/firmware/cmdline.txt (now)\n"
                           "@@ -1 +1 @@\n"
                           "-console=tty1 root=ROOTDEV rootwait isolcpus=3 nohz=on\n"
                           "+console=tty1 root=ROOTDEV rootwait isolcpus=2 nohz=on\n");
    CHECK(diffs[0].note.rfind("rebuilt from its original (backup.tar)", 0) == 0);
}

TEST_CASE("status --diff says so when what rtprov wrote cannot be rebuilt, and invents nothing") {
    TempDir dir;
    Root root(dir.path());
    applied(dir, root);
    dir.write("etc/systemd/system/mpd.service.d/50-rtprov.conf", "mine now\n");
    Status status = read_status(root);
    const std::string sha = status.files[1].file.sha256;
    // a plan whose drop-in is not what was written (the profile changed since)
    core::Plan other;
    other.changes.push_back({"/etc/systemd/system/mpd.service.d/50-rtprov.conf",
                             std::nullopt,
                             {"something else\n", 0644, 0, 0, std::nullopt},
                             "test"});
    auto diffs = pipeline::drift_diffs(root, status, {{other}, "the applied profile is gone"});
    REQUIRE(diffs.size() == 1);
    CHECK(diffs[0].diff.empty());
    CHECK(diffs[0].note == "changed; rtprov keeps no copy of what it wrote, only its sha256 (" +
                               sha + "), and could not rebuild it: the applied profile is gone");
}

TEST_CASE("status --diff shows a missing file as removed, and nothing for files as written") {
    TempDir dir;
    Root root(dir.path());
    core::Plan plan = applied(dir, root);
    CHECK(pipeline::drift_diffs(root, read_status(root), {{plan}, ""}).empty());
    stdfs::remove(dir.path() + "/etc/systemd/system/mpd.service.d/50-rtprov.conf");
    auto diffs = pipeline::drift_diffs(root, read_status(root), {{plan}, ""});
    REQUIRE(diffs.size() == 1);
    CHECK(diffs[0].drift == Drift::missing);
    CHECK(diffs[0].diff.find("+++ /dev/null\n") != std::string::npos);
    CHECK(diffs[0].diff.find("\n-CPUAffinity=3\n") != std::string::npos);
}

TEST_CASE("status counts drift as modified or missing files, not edits beside rtprov's part") {
    TempDir dir;
    Root root(dir.path());
    applied(dir, root);
    CHECK(cli::drifted_files(read_status(root)) == 0);
    // others' token: a foreign edit, kept by rollback, not drift
    dir.write("boot/firmware/cmdline.txt",
              "console=tty1 root=PARTUUID=1 rootwait isolcpus=3 nohz=on\n");
    CHECK(read_status(root).files[0].drift == Drift::foreign_edit);
    CHECK(cli::drifted_files(read_status(root)) == 0);
    stdfs::remove(dir.path() + "/etc/systemd/system/mpd.service.d/50-rtprov.conf");
    CHECK(cli::drifted_files(read_status(root)) == 1);
}

TEST_CASE("status --json carries each drifted file's diff and note, and the drift count") {
    TempDir dir;
    Root root(dir.path());
    core::Plan plan = applied(dir, root);
    dir.write("boot/firmware/cmdline.txt", "console=tty1 root=ROOTDEV rootwait nohz=on\n");
    Status status = read_status(root);
    auto diffs = pipeline::drift_diffs(root, status, {{plan}, ""});
    const std::string json = cli::status_json(status, dir.path(), {}, {}, &diffs);
    CHECK(json.find("\"drifted\": 1") != std::string::npos);
    CHECK(json.find("\"diff\": \"--- /boot/firmware/cmdline.txt (as rtprov wrote it)\\n+++ "
                    "/boot/firmware/cmdline.txt (now)\\n@@ -1 +1 @@\\n-console=tty1 "
                    "root=ROOTDEV rootwait isolcpus=3 nohz=on\\n+console=tty1 root=ROOTDEV "
                    "rootwait nohz=on\\n\"") != std::string::npos);
    // the drop-in is as written: empty diff and note
    CHECK(json.find("\"diff\": \"\", \"diff_note\": \"\"}") != std::string::npos);
    // without --diff, no diff keys
    CHECK(cli::status_json(status, dir.path()).find("\"diff\"") == std::string::npos);
}

TEST_CASE("status shows a token others put in a command line on one line, a line break too") {
    // /etc/kernel/cmdline is read whole: a quoted value may hold a line break
    TempDir dir;
    Root root(dir.path());
    dir.write("etc/kernel/cmdline", "root=/dev/vda1 ro\n");
    stdfs::create_directories(dir.path() + "/var/lib");
    core::Plan plan;
    core::FileState cmdline = *root.read("/etc/kernel/cmdline", caps::k_cmdline);
    core::FileState next = cmdline;
    next.content = "root=/dev/vda1 ro isolcpus=3\n";
    plan.changes.push_back({"/etc/kernel/cmdline", cmdline, next, "test"});
    plan.cmdline_edits["/etc/kernel/cmdline"] = {false, {"isolcpus"}, {"isolcpus=3"}};
    apply_plan(root, RootLock(root), plan, k_info);
    dir.write("etc/kernel/cmdline", "root=/dev/vda1 ro isolcpus=3 x=\"a\nresult: passed\"\n");
    Status status = read_status(root);
    REQUIRE(status.files[0].drift == Drift::foreign_edit);
    CHECK(status.files[0].detail == "put in 'x=\"a\\x0aresult: passed\"'");
    const std::string text = cli::status_text(status, dir.path());
    CHECK(text.find("\nresult: passed") == std::string::npos);
}
