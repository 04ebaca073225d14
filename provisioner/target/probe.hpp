// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/core/plan.hpp"
#include "provisioner/fs/root.hpp"

namespace rtprov::target {

// Reads what plan() needs to know about the target root, and nothing else: os-release,
// the kernels in /boot and their configs, installed packages, the boot loader's files
// (for the Pi, where the boot partition is and whether it is mounted), the files plan()
// may write, and the originals of files rtprov changed before. Read-only. Throws
// rtprov::Error for a damaged state file or backup. The running system's CPUs are not
// the root's: pipeline::probe adds them for a live target.
// 'trial' (apply --trial) also reads which file system GRUB's environment block is on.
core::TargetFacts probe(const fs::Root& root, const core::Profile& profile, core::TargetMode mode,
                        bool trial = false);

// The players' files (player::visit_player_files: MPD's configuration and what it
// includes, squeezelite's options, PipeWire's and WirePlumber's files, the JACK units
// among 'units'), the programs that show them installed, and the marks of distros that
// rebuild them, into 'facts'. probe() calls it when the profile writes the players'
// buffers. Throws rtprov::Error for a file that is there but cannot be read.
void probe_players(const fs::Root& root, const std::vector<std::string>& units,
                   core::TargetFacts& facts);

} // namespace rtprov::target
