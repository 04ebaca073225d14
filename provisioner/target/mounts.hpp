// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/core/plan.hpp"

#include <optional>
#include <string>
#include <vector>

// Mount facts through libmount: the target's fstab and the running system's mount table.
namespace rtprov::target {

// The source of the entry of fstab text 'fstab' (read through the target's Root: a
// regular file of bounded size) that mounts on 'mount_point' (as written in that fstab,
// e.g. '/boot/firmware'); nullopt when there is none or the text does not parse.
std::optional<std::string> fstab_source(const std::string& fstab, const std::string& mount_point);

// Every entry of fstab text 'fstab', in order; empty when it does not parse.
struct FstabEntry {
    std::string source;
    std::string target;
    std::string fstype;
};
std::vector<FstabEntry> fstab_entries(const std::string& fstab);

// Whether something is mounted exactly on 'host_path' now (/proc/self/mountinfo).
bool is_mount_point(const std::string& host_path);

// The mount that holds 'host_path' now (its source device and file system type, from
// /proc/self/mountinfo); nullopt when the path or the table cannot be read.
std::optional<core::MountFact> mount_containing(const std::string& host_path);

} // namespace rtprov::target
