// SPDX-License-Identifier: Apache-2.0
#include "provisioner/pipeline/target_session.hpp"

#include "provisioner/core/error.hpp"
#include "provisioner/core/text.hpp"
#include "provisioner/pipeline/target_root.hpp"

#include <map>

namespace rtprov::pipeline {

namespace {

class ImageSessionDisk final : public DiskImage {
  public:
    ImageSessionDisk(const std::string& image, bool writable) : m_session(image, writable) {}
    const std::string& image() const override { return m_session.image(); }
    const std::string& root() const override { return m_session.root(); }
    const std::vector<std::string>& mounted() const override { return m_session.mounted(); }
    const std::vector<std::string>& warnings() const override { return m_session.warnings(); }
    target::ImageSession::Room room(const std::string& path) const override {
        return m_session.room(path);
    }
    std::string mount_of(const std::string& path) const override {
        return m_session.mount_of(path);
    }
    void make_writable() override { m_session.make_writable(); }
    void close() override { m_session.close(); }

  private:
    target::ImageSession m_session;
};

} // namespace

std::unique_ptr<DiskImage> open_disk_image(const std::string& image, bool writable) {
    return std::make_unique<ImageSessionDisk>(image, writable);
}

TargetSession TargetSession::open(const TargetSpec& spec, bool required, Access access,
                                  const ImageOpener& open_image) {
    TargetSession session;
    session.m_spec = spec;
    if (spec.image.empty()) {
        session.m_root = open_target(spec.root, spec.live, required);
        return session;
    }
    if (!spec.root.empty() || spec.live)
        throw UsageError("--image", "--image FILE is the target; drop --root or --live");
    session.m_image = open_image(spec.image, access == Access::writable);
    session.m_root = open_target(session.m_image->root(), false, required, spec.image);
    return session;
}

std::string TargetSession::name() const {
    return m_image ? m_spec.image : m_root->path();
}

std::string TargetSession::described() const {
    if (m_spec.live)
        return "this machine";
    return (m_image ? "image '" : "root '") + name() + "'";
}

std::vector<std::string> TargetSession::options() const {
    if (m_spec.live)
        return {"--live"};
    return m_image ? std::vector<std::string>{"--image", m_spec.image}
                   : std::vector<std::string>{"--root", m_root->path()};
}

void TargetSession::reopen_writable() {
    m_root.reset(); // lets go of the read-only mounts
    m_image->make_writable();
    m_root = open_target(m_image->root(), false, true, m_spec.image);
}

void TargetSession::close(std::optional<fs::RootLock>* lock, const std::string& done) {
    if (!m_image)
        return;
    if (lock)
        lock->reset();
    m_root.reset();
    if (done.empty()) {
        m_image->close();
        return;
    }
    try {
        m_image->close();
    } catch (const Error& e) {
        throw Error(done + ", but " + e.what());
    }
}

void check_image_space(const DiskImage& image, const core::Plan& plan) {
    constexpr std::uint64_t k_block = 4096, k_state = 256 * 1024;
    std::map<std::string, std::uint64_t> needed{{"/", k_state}};
    std::map<std::string, std::uint64_t> files{{"/", 16}}; // the state, its backups, folders
    for (const core::FileChange& change : plan.changes) {
        needed[image.mount_of(change.path)] +=
            2 * ((change.next.content.size() + k_block - 1) / k_block + 1) * k_block;
        files[image.mount_of(change.path)] += 2;
    }
    for (const auto& [mount, count] : files)
        if (const std::uint64_t free = image.room(mount).inodes; free < count)
            throw Error("the image's file system on " + mount + " can make " +
                        std::to_string(free) + " more files, and the changes need about " +
                        std::to_string(count) +
                        ": free some, or make the file system with more "
                        "inodes; nothing was written");
    for (const auto& [mount, bytes] : needed)
        if (const std::uint64_t free = image.room(mount).bytes; free < bytes)
            throw Error("the image's file system on " + mount + " has " + std::to_string(free) +
                        " bytes free, and the changes need about " + std::to_string(bytes) +
                        ": grow it first (the image file: '" +
                        core::shell_command({"truncate", "-s", "+64M", image.image()}) +
                        "', then the partition and its file system, e.g. with growpart and "
                        "resize2fs); nothing was written");
}

ImageApply prepare_image_apply(TargetSession& target, const PlanRequest& request) {
    ImageApply out;
    Planned p = make_plan(request, *target.root());
    if (p.plan.refused()) {
        out.outcome = ImageApply::Outcome::refused;
        out.planned = std::move(p);
        return out;
    }
    // (what a journal not yet replayed holds is seen only read-write)
    if (target.image()->warnings().empty() &&
        target::apply_changes_nothing(*target.root(), p.plan)) {
        out.outcome = ImageApply::Outcome::nothing_to_change;
        out.planned = std::move(p);
        return out;
    }
    target::check_apply(*target.root(), p.plan);
    check_image_space(*target.image(), p.plan);
    target.reopen_writable();
    return out;
}

bool prepare_image_rollback(TargetSession& target, target::DriftPolicy drift) {
    if (target.image()->warnings().empty() && target::rollback_changes_nothing(*target.root()))
        return true;
    target::check_rollback(*target.root(), drift);
    target.reopen_writable();
    return false;
}

} // namespace rtprov::pipeline
