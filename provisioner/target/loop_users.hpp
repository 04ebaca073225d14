// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/system/loop_devices.hpp"

#include <functional>
#include <string>
#include <string_view>
#include <sys/stat.h>
#include <sys/types.h>
#include <vector>

// What keeps a disk image's loop devices (target::ImageSession) attached after rtprov
// unmounted them: a loop device with a file of the image's file systems attached, or a
// swap file in them; read from /sys/block and /proc/swaps (system::attached_loops,
// system::swap_files: '/' for the running system, a fixture tree in tests), and said as
// what frees them.
namespace rtprov::target {

// The loop devices that have the file 'image' attached: "/dev/loop3".
std::vector<std::string> loops_holding(const system::SysRoot& sys, const system::FileId& image,
                                       const system::LoopFileQuery& ask = system::loop_file);

// The loop devices that have a file on one of the file systems 'devices' attached.
std::vector<std::string> loops_on(const system::SysRoot& sys, const std::vector<dev_t>& devices,
                                  const system::LoopFileQuery& ask = system::loop_file);

// The device numbers of the block devices at 'paths' ("/dev/loop3"); those stat cannot
// read are left out.
std::vector<dev_t> device_numbers(const std::vector<std::string>& paths);

// Calls 'attached' until it returns nothing, at most 'checks' times, with 'pause' between
// two calls: the last pause is followed by a last call. Returns what the last call
// returned.
std::vector<std::string>
wait_until_detached(const std::function<std::vector<std::string>()>& attached, int checks,
                    const std::function<void()>& pause);

// A swap file in the image that is on.
struct ImageSwap {
    std::string listed; // as /proc/swaps names it; under the mount folder as the image's
    std::string path;   // in the file system that holds it: "/swapfile"
    std::string loop;   // that file system's loop device: "/dev/loop5"
};

// The swap files /proc/swaps names that are files of the image's file systems, mounted
// at 'host_root' + each of 'mount_points' ("/", "/boot/firmware"). Called while they
// are mounted: /proc/swaps names a file as the process that turned it on saw it, or,
// once that one's mounts are gone, from the root of its file system. A name under
// 'host_root', which only rtprov sees, is listed as the image's: 'image_name' + ":" + its
// path there ('pi.img:/swapfile').
std::vector<ImageSwap> swaps_in_image(const system::SysRoot& sys, const std::string& host_root,
                                      const std::vector<std::string>& mount_points,
                                      const std::string& image_name);

// "/dev/loop5 and /dev/loop6 have a file in the image attached: 'losetup -d /dev/loop5
// /dev/loop6' frees them". Pure.
std::string inner_loops_text(const std::vector<std::string>& inner);

// "the image's swap file '/swapfile' (/proc/swaps: '...') is on: 'd=$(mktemp -d) && mount
// /dev/loop5 "$d" && swapoff "$d"/swapfile && umount "$d" && rmdir "$d"' turns it off
// through a mount of its file system". Pure.
std::string image_swap_text(const ImageSwap& swap);

// What frees 'loops', the loop devices that hold the image when rtprov opens it: the
// loop devices on files in their file systems detached, a swap file there turned off,
// or 'losetup -d' of them when nothing else uses them; "detach it ('losetup -d ...')".
std::string freeing_hint(const system::SysRoot& sys, const std::vector<std::string>& loops,
                         const system::LoopFileQuery& ask = system::loop_file);

} // namespace rtprov::target
