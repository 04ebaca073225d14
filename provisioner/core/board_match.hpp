// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/core/profile.hpp"

#include <optional>
#include <string>
#include <vector>

namespace rtprov::core {

// What identifies the machine rtprov runs on, for choosing a profile at first boot.
struct BoardFacts {
    std::optional<std::string> device_tree_model; // /proc/device-tree/model (Pi, arm boards)
    std::optional<std::string> dmi_product_name;  // /sys/class/dmi/id/product_name (x86)
    std::vector<std::string> os_ids;              // os-release ID, then ID_LIKE
    unsigned cpu_count = 0;
};

// How well 'match' fits 'facts': nullopt when a criterion the profile gives does not hold
// (glob lists match with fnmatch(3)); otherwise the number of criteria given, so that a
// profile naming the board's model wins over one naming only the OS. Pure.
std::optional<unsigned> match_score(const BoardMatch& match, const BoardFacts& facts);

// One profile that could be chosen.
struct BoardCandidate {
    std::string name;
    BoardMatch match;
};

// The candidate that fits 'facts' best. Throws rtprov::Error when none fits, or when
// several fit equally well, naming them and what to do. Pure.
std::string choose_board(const std::vector<BoardCandidate>& candidates, const BoardFacts& facts);

// "model 'Raspberry Pi 4 Model B Rev 1.5', OS debian, 4 CPUs". Pure.
std::string describe(const BoardFacts& facts);

} // namespace rtprov::core
