// SPDX-License-Identifier: Apache-2.0
#include "provisioner/pipeline/target_session.hpp"

#include "provisioner/core/error.hpp"
#include "provisioner/core/sha256.hpp"
#include "tests/unit/catch.hpp"
#include "tests/unit/temp_dir.hpp"

#include <filesystem>

using namespace rtprov;

namespace {

const std::string k_source = RTPROV_SOURCE_DIR;

std::string fixture_copy(const TempDir& dir, const std::string& name) {
    const std::string root = dir.path() + "/" + name;
    std::filesystem::copy(k_source + "/tests/fixtures/roots/" + name, root,
                          std::filesystem::copy_options::recursive);
    return root;
}

// What a fake image was asked to do.
struct ImageLog {
    int opened = 0;
    bool writable = false;
    int made_writable = 0;
    int closed = 0;
    bool lock_free_at_close = false; // the command's lock on the root was let go first
};

// A folder standing in for a disk image: its root is the folder, every path is on "/"
// unless it starts with /boot/firmware, and each file system has 'room'.
class FakeImage final : public pipeline::DiskImage {
  public:
    FakeImage(std::string root, ImageLog& log) : m_root(std::move(root)), m_log(log) {}
    const std::string& image() const override { return m_image; }
    const std::string& root() const override { return m_root; }
    const std::vector<std::string>& mounted() const override { return m_mounted; }
    const std::vector<std::string>& warnings() const override { return m_warnings; }
    target::ImageSession::Room room(const std::string& path) const override {
        return path == "/" ? root_room : boot_room;
    }
    std::string mount_of(const std::string& path) const override {
        return path.starts_with("/boot/firmware/") ? "/boot/firmware" : "/";
    }
    void make_writable() override { ++m_log.made_writable; }
    void close() override {
        ++m_log.closed;
        try {
            fs::Root root(m_root);
            fs::RootLock lock(root);
            m_log.lock_free_at_close = true;
        } catch (const Error&) {
            m_log.lock_free_at_close = false;
        }
        if (!close_error.empty())
            throw Error(close_error);
    }

    std::vector<std::string> m_warnings;
    target::ImageSession::Room root_room{1u << 30, 1000}, boot_room{1u << 30, 1000};
    std::string close_error;

  private:
    std::string m_image = "x.img";
    std::string m_root;
    std::vector<std::string> m_mounted = {"partition 2 (ext4 'rootfs', 1.9 GiB) on /"};
    ImageLog& m_log;
};

// Opens FakeImages over 'root', each set up by 'setup'.
pipeline::ImageOpener fake_opener(const std::string& root, ImageLog& log,
                                  std::function<void(FakeImage&)> setup = {}) {
    return [root, &log, setup](const std::string&, bool writable) {
        ++log.opened;
        log.writable = writable;
        auto image = std::make_unique<FakeImage>(root, log);
        if (setup)
            setup(*image);
        return std::unique_ptr<pipeline::DiskImage>(std::move(image));
    };
}

pipeline::PlanRequest request() {
    pipeline::PlanRequest r;
    r.profile = "x86-debian13";
    r.sets = {"board.cpus=4"};
    r.options.regenerate = core::Regenerate::never;
    r.builtin_profiles = k_source + "/board-profiles";
    r.apps = k_source + "/board-profiles/apps";
    return r;
}

class NoManager final : public pipeline::ServiceManager {
  public:
    systemd::OnlineResult tell(const systemd::OnlineActions&) override { return {}; }
    live::IrqTuneResult restore_irqs() override { return {}; }
    void reboot(const std::string&) override {}
};

// The profile applied to 'root' as 'rtprov apply --root' applies it.
void apply_to(const std::string& root_path) {
    fs::Root root(root_path);
    fs::RootLock lock(root);
    pipeline::Planned p = pipeline::make_plan(request(), root);
    NoManager manager;
    pipeline::apply(
        root, lock, p,
        {p.profile.name, core::sha256_hex(p.profile_yaml), "2026-12-01T00:00:00Z", "grub"}, {}, {},
        manager, [](const systemd::OnlineResult&) {});
}

// A change of 'path' to 'size' bytes.
core::FileChange change_of(const std::string& path, std::size_t size) {
    core::FileChange change;
    change.path = path;
    change.next.content = std::string(size, 'x');
    return change;
}

} // namespace

TEST_CASE("--image with --root or --live is refused before the image is opened") {
    TempDir dir;
    ImageLog log;
    for (pipeline::TargetSpec spec : {pipeline::TargetSpec{dir.path(), "x.img", false},
                                      pipeline::TargetSpec{"", "x.img", true}}) {
        try {
            pipeline::TargetSession::open(spec, true, pipeline::Access::read_only,
                                          fake_opener(dir.path(), log));
            FAIL("not refused");
        } catch (const UsageError& e) {
            CHECK(std::string(e.what()) == "--image: --image FILE is the target; drop --root or "
                                           "--live");
        }
    }
    CHECK(log.opened == 0);
}

TEST_CASE("a target is named as the commands name it: root, image or this machine") {
    TempDir dir;
    ImageLog log;
    auto root = pipeline::TargetSession::open({dir.path(), "", false}, true);
    CHECK(root.image() == nullptr);
    CHECK(root.name() == dir.path());
    CHECK(root.described() == "root '" + dir.path() + "'");
    CHECK(root.options() == std::vector<std::string>{"--root", dir.path()});

    auto image = pipeline::TargetSession::open(
        {"", "x.img", false}, true, pipeline::Access::read_only, fake_opener(dir.path(), log));
    REQUIRE(image.image() != nullptr);
    CHECK(image.root()->path() == dir.path()); // the image's mounted root
    CHECK(image.name() == "x.img");
    CHECK(image.described() == "image 'x.img'");
    CHECK(image.options() == std::vector<std::string>{"--image", "x.img"});

    auto live = pipeline::TargetSession::open({"", "", true}, true);
    CHECK(live.root()->path() == "/");
    CHECK(live.described() == "this machine");
    CHECK(live.options() == std::vector<std::string>{"--live"});

    CHECK(pipeline::TargetSession::open({}, false).root() == nullptr);
}

TEST_CASE("an image is opened to be written only for a command that writes") {
    TempDir dir;
    ImageLog log;
    pipeline::TargetSession::open({"", "x.img", false}, true, pipeline::Access::read_only,
                                  fake_opener(dir.path(), log));
    CHECK(log.writable == false);
    pipeline::TargetSession::open({"", "x.img", false}, true, pipeline::Access::writable,
                                  fake_opener(dir.path(), log));
    CHECK(log.writable == true);
    CHECK(log.made_writable == 0); // held, still read-only until reopened
}

TEST_CASE("closing a target writes the image back once its root and lock are let go") {
    TempDir dir;
    ImageLog log;
    auto target = pipeline::TargetSession::open(
        {"", "x.img", false}, true, pipeline::Access::writable, fake_opener(dir.path(), log));
    std::optional<fs::RootLock> lock;
    lock.emplace(*target.root());
    target.close(&lock, "apply wrote 3 files into the image");
    CHECK(log.closed == 1);
    CHECK(log.lock_free_at_close);
    CHECK_FALSE(lock);
    CHECK(target.root() == nullptr);
    CHECK(target.name() == "x.img"); // still named in what the command says next

    // a root folder has nothing to write back
    auto root = pipeline::TargetSession::open({dir.path(), "", false}, true);
    root.close();
    CHECK(root.root() != nullptr);
}

TEST_CASE("an image that cannot be written back fails the command, after what was done") {
    TempDir dir;
    ImageLog log;
    auto failing = [](FakeImage& image) { image.close_error = "fsync: Input/output error"; };
    auto target =
        pipeline::TargetSession::open({"", "x.img", false}, true, pipeline::Access::writable,
                                      fake_opener(dir.path(), log, failing));
    std::optional<fs::RootLock> lock;
    CHECK_THROWS_WITH(target.close(&lock, "apply wrote 3 files into the image"),
                      "apply wrote 3 files into the image, but fsync: Input/output error");
    auto plain =
        pipeline::TargetSession::open({"", "x.img", false}, true, pipeline::Access::read_only,
                                      fake_opener(dir.path(), log, failing));
    CHECK_THROWS_WITH(plain.close(), "fsync: Input/output error");
}

TEST_CASE("an apply the image's file systems have no room for is refused with what to do") {
    TempDir dir;
    ImageLog log;
    FakeImage image(dir.path(), log);
    // "/": 256 KiB and 16 files for the state and backups, then each file twice, in whole
    // 4 KiB blocks and one more
    core::Plan plan;
    plan.changes = {change_of("/etc/a", 1), change_of("/boot/firmware/cmdline.txt", 4097)};
    image.root_room = {262144 + 16384, 18};
    image.boot_room = {2 * 3 * 4096, 2};
    CHECK_NOTHROW(pipeline::check_image_space(image, plan));

    image.root_room.inodes = 17;
    CHECK_THROWS_WITH(pipeline::check_image_space(image, plan),
                      "the image's file system on / can make 17 more files, and the changes need "
                      "about 18: free some, or make the file system with more inodes; nothing "
                      "was written");
    image.root_room.inodes = 18;
    image.boot_room.bytes = 2 * 3 * 4096 - 1;
    CHECK_THROWS_WITH(pipeline::check_image_space(image, plan),
                      "the image's file system on /boot/firmware has 24575 bytes free, and the "
                      "changes need about 24576: grow it first (the image file: 'truncate -s "
                      "+64M x.img', then the partition and its file system, e.g. with growpart "
                      "and resize2fs); nothing was written");
}

TEST_CASE("an apply on an image is planned read-only, and the image written only to change it") {
    TempDir dir;
    ImageLog log;
    const std::string root = fixture_copy(dir, "debian13");
    auto open = [&](std::function<void(FakeImage&)> setup = {}) {
        return pipeline::TargetSession::open({"", "x.img", false}, true, pipeline::Access::writable,
                                             fake_opener(root, log, setup));
    };

    SECTION("a refused plan leaves it read-only") {
        auto target = open();
        pipeline::PlanRequest trial = request();
        trial.options.trial = true; // a GRUB trial without grubenv is refused
        pipeline::ImageApply prepared = pipeline::prepare_image_apply(target, trial);
        CHECK(prepared.outcome == pipeline::ImageApply::Outcome::refused);
        REQUIRE(prepared.planned);
        CHECK(prepared.planned->plan.refused());
        CHECK(log.made_writable == 0);
    }
    SECTION("a plan it has no room for leaves it read-only") {
        auto target = open([](FakeImage& image) { image.root_room.bytes = 4096; });
        CHECK_THROWS_WITH(pipeline::prepare_image_apply(target, request()),
                          Catch::Contains("the image's file system on / has 4096 bytes free"));
        CHECK(log.made_writable == 0);
    }
    SECTION("a plan that changes something reopens it writable") {
        auto target = open();
        const fs::Root* before = target.root();
        pipeline::ImageApply prepared = pipeline::prepare_image_apply(target, request());
        CHECK(prepared.outcome == pipeline::ImageApply::Outcome::reopened);
        CHECK_FALSE(prepared.planned);
        CHECK(log.made_writable == 1);
        REQUIRE(target.root() != nullptr);
        CHECK(target.root()->path() == root);
        (void)before;
    }
    SECTION("a plan that changes nothing leaves it read-only, unless the look may have missed "
            "something") {
        apply_to(root);
        auto target = open();
        pipeline::ImageApply prepared = pipeline::prepare_image_apply(target, request());
        CHECK(prepared.outcome == pipeline::ImageApply::Outcome::nothing_to_change);
        REQUIRE(prepared.planned);
        CHECK(prepared.planned->profile.name == "x86-debian13");
        CHECK(log.made_writable == 0);

        auto unclean = open(
            [](FakeImage& image) { image.m_warnings = {"partition 2 was not cleanly unmounted"}; });
        CHECK(pipeline::prepare_image_apply(unclean, request()).outcome ==
              pipeline::ImageApply::Outcome::reopened);
        CHECK(log.made_writable == 1);
    }
}

TEST_CASE("a rollback on an image writes it only when there is something to roll back") {
    TempDir dir;
    ImageLog log;
    const std::string root = fixture_copy(dir, "debian13");
    auto open = [&] {
        return pipeline::TargetSession::open({"", "x.img", false}, true, pipeline::Access::writable,
                                             fake_opener(root, log));
    };
    {
        auto target = open();
        CHECK(pipeline::prepare_image_rollback(target, target::DriftPolicy::refuse));
        CHECK(log.made_writable == 0);
    }
    apply_to(root);
    std::filesystem::path profile = root + "/etc/rtprov/profile.yaml";
    std::ofstream(profile, std::ios::app) << "edited: true\n";
    {
        auto target = open();
        CHECK_THROWS_WITH(pipeline::prepare_image_rollback(target, target::DriftPolicy::refuse),
                          Catch::Contains("run 'rtprov rollback --force'"));
        CHECK(log.made_writable == 0);
    }
    {
        auto target = open();
        CHECK_FALSE(pipeline::prepare_image_rollback(target, target::DriftPolicy::overwrite));
        CHECK(log.made_writable == 1);
    }
}
