// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/system/processes.hpp"
#include "provisioner/system/sysroot.hpp"

#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

// The running system's loop devices and swap files, as /sys/block and /proc/swaps show
// them, read through a SysRoot: what target::ImageSession asks when a disk image's loop
// devices stay attached.
namespace rtprov::system {

// An attached loop device: its name and the file it holds.
struct AttachedLoop {
    std::string device; // "/dev/loop3"
    FileId file;
};

// Asks the loop device 'device' ("/dev/loop3") which file it holds; nullopt when it
// cannot be asked. loop_file() asks the kernel; tests ask a table.
using LoopFileQuery = std::function<std::optional<FileId>(const std::string& device)>;

// The file the loop device 'device' holds, by device and inode (LOOP_GET_STATUS64,
// loop(4)), as losetup asks it.
std::optional<FileId> loop_file(const std::string& device);

// The attached loop devices (/sys/block/loopN/loop/backing_file is there), each with its
// file as 'ask' says: the path in sysfs is the one the process that attached it saw,
// which in another mount namespace (a container, a bind mount gone) names another file
// or none here. The path is the fallback where the device cannot be asked (not for a
// file deleted since).
std::vector<AttachedLoop> attached_loops(const SysRoot& sys, const LoopFileQuery& ask = loop_file);

// "/dev/loop3": the block device 'device' (/sys/dev/block/MAJOR:MINOR); "" when unknown.
std::string block_device_path(const SysRoot& sys, dev_t device);

// Whether the loop device 'loop' ("/dev/loop3") frees itself once nothing uses it
// (/sys/block/loop3/loop/autoclear, as rtprov attaches its own).
bool autoclears(const SysRoot& sys, const std::string& loop);

// The swap files /proc/swaps names (swap_file_names); none when it cannot be read.
std::vector<std::string> swap_files(const SysRoot& sys);

// The swap files in /proc/swaps ('text', proc(5)), their names unescaped (the kernel
// writes a space, tab, newline or backslash in one as \040, \011, \012, \134). Pure.
std::vector<std::string> swap_file_names(std::string_view text);

} // namespace rtprov::system
