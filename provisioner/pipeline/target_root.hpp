// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/core/plan.hpp"
#include "provisioner/fs/root.hpp"
#include "provisioner/target/journal.hpp"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

// The root a command works on, and how commands run in it: the rules every command and
// first boot share.
namespace rtprov::pipeline {

// The target: 'root' (--root DIR), or with 'live' (--live) this machine's '/'. The
// running system is recognised by what it is (fs::is_running_system: device and
// inode), not by how it is spelled: '/.', '//', a symlink, /proc/self/root and a bind
// mount of '/' all are; as --root it is refused, so that only --live changes this
// machine. Returns nullptr when neither is given and 'required' is false. Throws
// UsageError for --live with another root or no root where one is required, Error for
// --root naming the running system. 'display' is the root's display name (fs::Root): an
// image's mounted root is named as the image.
std::unique_ptr<fs::Root> open_target(const std::string& root, bool live, bool required,
                                      std::optional<std::string> display = std::nullopt);

// --regenerate-boot's 'word' (now, first-boot, never); "" is the default: offline first
// boot (update-grub needs the image's devices for grub-probe), live now.
core::Regenerate regenerate_mode(std::string_view word, bool live);

// Runs a command in 'root' (through a chroot offline, directly live), and tells 'say'
// what it runs and, after, how long the command took apart from rtprov (first boot's
// benchmark reads that line from the journal). 'root' must outlive the runner.
target::CommandRunner command_runner(const fs::Root& root, bool live,
                                     std::function<void(const std::string&)> say);

} // namespace rtprov::pipeline
