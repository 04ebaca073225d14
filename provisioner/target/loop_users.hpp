// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <sys/stat.h>
#include <sys/types.h>
#include <vector>

// What keeps a disk image's loop devices (target::ImageSession) attached after rtprov
// unmounted them: a loop device with a file of the image's file systems attached, or a
// swap file in them; read from /sys/block and /proc/swaps, and said as what frees them.
namespace rtprov::target {

// The loop devices that have the file 'image' attached: "/dev/loop3".
std::vector<std::string> loops_holding(const struct stat& image);

// The loop devices that have a file on one of the file systems 'devices' attached.
std::vector<std::string> loops_on(const std::vector<dev_t>& devices);

// The device numbers of the block devices at 'paths' ("/dev/loop3"); those stat cannot
// read are left out.
std::vector<dev_t> device_numbers(const std::vector<std::string>& paths);

// "/dev/loop3": the block device 'device' (from /sys/dev/block); "" when unknown.
std::string block_device_path(dev_t device);

// Whether the loop device 'loop' frees itself once nothing uses it (autoclear, as
// rtprov attaches its own).
bool autoclears(const std::string& loop);

// The swap files in /proc/swaps ('text', proc(5)), their names unescaped (the kernel
// writes a space, tab, newline or backslash in one as \040, \011, \012, \134). Pure.
std::vector<std::string> swap_file_names(std::string_view text);

// Calls 'attached' until it returns nothing, at most 'checks' times, with 'pause' between
// two calls: the last pause is followed by a last call. Returns what the last call
// returned.
std::vector<std::string>
wait_until_detached(const std::function<std::vector<std::string>()>& attached, int checks,
                    const std::function<void()>& pause);

// A swap file in the image that is on.
struct ImageSwap {
    std::string listed; // as /proc/swaps names it
    std::string path;   // in the file system that holds it: "/swapfile"
    std::string loop;   // that file system's loop device: "/dev/loop5"
};

// The swap files /proc/swaps names that are files of the image's file systems, mounted
// at 'host_root' + each of 'mount_points' ("/", "/boot/firmware"). Called while they
// are mounted: /proc/swaps names a file as the process that turned it on saw it, or,
// once that one's mounts are gone, from the root of its file system.
std::vector<ImageSwap> swaps_in_image(const std::string& host_root,
                                      const std::vector<std::string>& mount_points);

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
std::string freeing_hint(const std::vector<std::string>& loops);

} // namespace rtprov::target
