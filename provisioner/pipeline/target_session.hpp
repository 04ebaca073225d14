// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/core/plan.hpp"
#include "provisioner/fs/root.hpp"
#include "provisioner/fs/root_lock.hpp"
#include "provisioner/pipeline/apply.hpp"
#include "provisioner/target/disk_image.hpp"
#include "provisioner/target/journal.hpp"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

// The target of a command as the user named it (--root DIR, --live or --image FILE), open
// until the command ends, and what a disk image adds to plan, apply, status and rollback:
// it is looked at read-only first and written only when there is something to write, and
// it is written back and unmounted before the command says it succeeded.
namespace rtprov::pipeline {

// A whole disk image opened as a target: target::ImageSession in rtprov (open_disk_image),
// a folder standing in for it in the tests.
class DiskImage {
  public:
    virtual ~DiskImage() = default;
    virtual const std::string& image() const = 0; // the image file, as named
    virtual const std::string& root() const = 0;  // where its root is mounted
    // One line per mounted partition: "partition 2 (ext4 'rootfs', 1.9 GiB) on /".
    virtual const std::vector<std::string>& mounted() const = 0;
    // What the read-only look may miss (a file system not cleanly unmounted).
    virtual const std::vector<std::string>& warnings() const = 0;
    virtual target::ImageSession::Room room(const std::string& path) const = 0;
    virtual std::string mount_of(const std::string& path) const = 0;
    // Mounts it again read-write; throws rtprov::Error having mounted nothing.
    virtual void make_writable() = 0;
    // Writes everything back and unmounts; throws rtprov::Error when it could not.
    virtual void close() = 0;
};

// Opens 'image' as target::ImageSession does (see there for what it throws).
std::unique_ptr<DiskImage> open_disk_image(const std::string& image, bool writable);
using ImageOpener =
    std::function<std::unique_ptr<DiskImage>(const std::string& image, bool writable)>;

// The options that name a command's target.
struct TargetSpec {
    std::string root;  // --root DIR
    std::string image; // --image FILE
    bool live = false; // --live
};

// What a command may do to its target: read it (plan, status, profiles), or write it
// (apply, rollback: an image is opened so that it can be made writable, and held).
enum class Access { read_only, writable };

class TargetSession {
  public:
    // The target of 'spec': open_target's rules for --root and --live (nullptr root when
    // neither is given and 'required' is false), or the root of --image FILE, opened
    // with 'open_image' for 'access' and mounted read-only. Throws UsageError for --image
    // with --root or --live, and what open_target and 'open_image' throw.
    static TargetSession open(const TargetSpec& spec, bool required,
                              Access access = Access::read_only,
                              const ImageOpener& open_image = open_disk_image);

    // nullptr when no target was named and none was required.
    fs::Root* root() const { return m_root.get(); }
    // The disk image (--image), nullptr otherwise.
    const DiskImage* image() const { return m_image.get(); }
    bool live() const { return m_spec.live; }

    // What a command calls its target: the image file, or the root folder.
    std::string name() const;
    // The target in a sentence: "this machine", "root '/mnt/x'" or "image 'x.img'".
    std::string described() const;
    // The options that name the target, as a command rtprov prints for the user takes
    // them: --live, --image FILE or --root DIR.
    std::vector<std::string> options() const;

    // An image's root, read so far, opened again with its file systems read-write. The
    // lock on the image is held throughout: what was read is what is written. The root
    // opened before is let go first (its read-only mounts go).
    void reopen_writable();

    // Writes an image back and unmounts it; nothing without one. The root and 'lock' go
    // first: a descriptor open in a file system keeps it from being unmounted. A failure
    // is the command's, told after what was done: "DONE, but ...". Without 'done' the
    // image's own error is thrown as it is.
    void close(std::optional<fs::RootLock>* lock = nullptr, const std::string& done = "");

  private:
    TargetSpec m_spec;
    std::unique_ptr<DiskImage> m_image; // declared first: the root in it goes before it
    std::unique_ptr<fs::Root> m_root;
};

// Refuses an apply of 'plan' the image's file systems have no room for, before anything
// is written: each file rtprov writes takes whole 4 KiB blocks, twice while the new one
// replaces the old, and its state and backups (/var/lib/rtprov) take more on the root.
// Throws rtprov::Error naming the file system, what it has and what to do.
void check_image_space(const DiskImage& image, const core::Plan& plan);

// An apply on an image, before anything is written: planned read-only first, so that a
// refused plan, one its file systems have no room for, or one that changes nothing leaves
// every byte of it as it was. 'refused' and 'nothing_to_change' carry that plan, and the
// image stays read-only; 'reopened': the apply goes on, the target reopened writable (its
// plan is made again, under the lock). A journal not yet replayed is seen only read-write:
// with warnings() the apply goes on even when the read-only look saw nothing to change.
// Throws what target::check_apply and check_image_space throw.
struct ImageApply {
    enum class Outcome { refused, nothing_to_change, reopened } outcome = Outcome::reopened;
    std::optional<Planned> planned; // refused, nothing_to_change
};
ImageApply prepare_image_apply(TargetSession& target, const PlanRequest& request);

// A rollback on an image: written only when there is something to roll back. True when
// there is nothing (the image stays read-only); else target::check_rollback (which throws
// what it refuses) and the target reopened writable.
bool prepare_image_rollback(TargetSession& target, target::DriftPolicy drift);

} // namespace rtprov::pipeline
