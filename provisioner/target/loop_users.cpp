// SPDX-License-Identifier: Apache-2.0
#include "provisioner/target/loop_users.hpp"

#include "provisioner/core/error.hpp"
#include "provisioner/core/text.hpp"

#include <fcntl.h>
#include <linux/loop.h>
#include <sys/ioctl.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

namespace stdfs = std::filesystem;

namespace rtprov::target {

namespace {

// An attached loop device: its name and the device and inode of its backing file.
struct AttachedLoop {
    std::string device; // "/dev/loop3"
    dev_t file_device = 0;
    ino_t file_inode = 0;
};

// The attached loop devices. Each is asked which file it holds by device and inode
// (LOOP_GET_STATUS64, loop(4)), as losetup does: the path in sysfs is the one the process
// that attached it saw, which in another mount namespace (a container, a bind mount gone)
// names another file or none here. The path is the fallback where the device node cannot
// be opened.
std::vector<AttachedLoop> attached_loops() {
    std::vector<AttachedLoop> found;
    std::error_code ec;
    for (const auto& entry : stdfs::directory_iterator("/sys/block", ec)) {
        const std::string name = entry.path().filename().string();
        if (name.rfind("loop", 0) != 0)
            continue;
        std::ifstream in(entry.path() / "loop" / "backing_file");
        std::string backing;
        if (!std::getline(in, backing))
            continue; // not attached
        struct loop_info64 info {};
        const int fd = ::open(("/dev/" + name).c_str(), O_RDONLY | O_CLOEXEC);
        const bool asked = fd >= 0 && ::ioctl(fd, LOOP_GET_STATUS64, &info) == 0;
        if (fd >= 0)
            ::close(fd);
        struct stat st {};
        if (asked)
            found.push_back({"/dev/" + name, dev_t(info.lo_device), ino_t(info.lo_inode)});
        else if (!backing.ends_with(" (deleted)") && ::stat(backing.c_str(), &st) == 0)
            found.push_back({"/dev/" + name, st.st_dev, st.st_ino});
    }
    return found;
}

// /proc/swaps' escape of a name: \ and three octal digits for the byte
std::string unescaped(std::string_view name) {
    std::string out;
    for (std::size_t i = 0; i < name.size(); ++i) {
        const bool octal = name[i] == '\\' && i + 3 < name.size() &&
                           std::all_of(name.begin() + long(i) + 1, name.begin() + long(i) + 4,
                                       [](char c) { return c >= '0' && c <= '7'; });
        if (!octal) {
            out += name[i];
            continue;
        }
        out += char((name[i + 1] - '0') * 64 + (name[i + 2] - '0') * 8 + (name[i + 3] - '0'));
        i += 3;
    }
    return out;
}

// 'command' quoted for a message: the shell command as the user types it
std::string shown(const std::string& command) {
    return "'" + command + "'";
}

// 'd=$(mktemp -d) && mount /dev/loop5 "$d" && swapoff "$d"/swapfile && ...': turns off the
// swap file 'path' of the file system on 'loop' through a mount of its own (the image's
// mounts are gone with rtprov's mount namespace; the same file system mounted again is
// the same one, and swapoff finds the file in it)
std::string swapoff_command(const std::string& loop, const std::string& path) {
    return "d=$(mktemp -d) && mount " + core::shell_command({loop}) + " \"$d\" && swapoff \"$d\"" +
           core::shell_command({path}) + " && umount \"$d\" && rmdir \"$d\"";
}

} // namespace

std::vector<std::string> loops_holding(const struct stat& image) {
    std::vector<std::string> found;
    for (const AttachedLoop& loop : attached_loops())
        if (loop.file_device == image.st_dev && loop.file_inode == image.st_ino)
            found.push_back(loop.device);
    return found;
}

std::vector<std::string> loops_on(const std::vector<dev_t>& devices) {
    std::vector<std::string> found;
    for (const AttachedLoop& loop : attached_loops())
        if (std::find(devices.begin(), devices.end(), loop.file_device) != devices.end())
            found.push_back(loop.device);
    return found;
}

std::vector<dev_t> device_numbers(const std::vector<std::string>& paths) {
    std::vector<dev_t> found;
    for (const std::string& path : paths)
        if (struct stat st{}; ::stat(path.c_str(), &st) == 0 && S_ISBLK(st.st_mode))
            found.push_back(st.st_rdev);
    return found;
}

std::string block_device_path(dev_t device) {
    std::error_code ec;
    const stdfs::path link = stdfs::read_symlink(
        "/sys/dev/block/" + std::to_string(::major(device)) + ":" + std::to_string(::minor(device)),
        ec);
    return ec ? std::string() : "/dev/" + link.filename().string();
}

bool autoclears(const std::string& loop) {
    std::ifstream in("/sys/block/" + stdfs::path(loop).filename().string() + "/loop/autoclear");
    std::string value;
    return std::getline(in, value) && value == "1";
}

std::vector<std::string> swap_file_names(std::string_view text) {
    std::vector<std::string> names;
    std::istringstream in{std::string(text)};
    std::string line;
    std::getline(in, line); // "Filename Type Size Used Priority"
    while (std::getline(in, line)) {
        std::istringstream fields(line);
        std::string name, type;
        if (fields >> name >> type && type == "file")
            names.push_back(unescaped(name));
    }
    return names;
}

std::vector<std::string>
wait_until_detached(const std::function<std::vector<std::string>()>& attached, int checks,
                    const std::function<void()>& pause) {
    std::vector<std::string> left = attached();
    for (int check = 1; check < checks && !left.empty(); ++check) {
        pause();
        left = attached();
    }
    return left;
}

std::vector<ImageSwap> swaps_in_image(const std::string& host_root,
                                      const std::vector<std::string>& mount_points) {
    std::ifstream in("/proc/swaps");
    std::stringstream text;
    text << in.rdbuf();
    const std::vector<std::string> names = swap_file_names(text.str());
    std::vector<std::string> mounts = mount_points;
    std::sort(mounts.begin(), mounts.end(), [](const std::string& a, const std::string& b) {
        return a.size() > b.size(); // the deepest mount first
    });
    std::vector<ImageSwap> found;
    for (const std::string& name : names) {
        // a name that is a file of this host outside the image, and listed once, is the
        // host's own swap file
        struct stat host {};
        if (!name.starts_with(host_root + "/") && ::stat(name.c_str(), &host) == 0 &&
            std::count(names.begin(), names.end(), name) == 1)
            continue;
        for (const std::string& mount : mounts) {
            const std::string base = host_root + (mount == "/" ? "" : mount);
            const std::string path = name.starts_with(base + "/") ? name.substr(base.size()) : name;
            struct stat file {
            }, top{};
            if (::stat((base + path).c_str(), &file) == 0 && S_ISREG(file.st_mode) &&
                ::stat(base.c_str(), &top) == 0 && file.st_dev == top.st_dev) {
                found.push_back({name, path, block_device_path(file.st_dev)});
                break;
            }
        }
    }
    return found;
}

std::string inner_loops_text(const std::vector<std::string>& inner) {
    std::vector<std::string> argv{"losetup", "-d"};
    argv.insert(argv.end(), inner.begin(), inner.end());
    const bool one = inner.size() == 1;
    return core::join(inner, ", ") + (one ? " has" : " have") +
           " a file in the image attached: " + shown(core::shell_command(argv)) +
           (one ? " frees it" : " frees them");
}

std::string image_swap_text(const ImageSwap& swap) {
    return "the image's swap file " + quoted(swap.path) +
           (swap.listed == swap.path ? std::string()
                                     : " (/proc/swaps: " + quoted(swap.listed) + ")") +
           " is on: " + shown(swapoff_command(swap.loop, swap.path)) +
           " turns it off through a mount of its file system";
}

std::string freeing_hint(const std::vector<std::string>& loops) {
    const std::string them = core::join(loops, ", ");
    const bool one = loops.size() == 1;
    const auto inner = loops_on(device_numbers(loops));
    const bool autoclear = std::all_of(loops.begin(), loops.end(), autoclears);
    std::vector<std::string> argv{"losetup", "-d"};
    argv.insert(argv.end(), loops.begin(), loops.end());
    const std::string detach = shown(core::shell_command(argv));
    if (!inner.empty())
        return "detach what keeps " + them + " in use, a loop device on a file in the image (" +
               inner_loops_text(inner) + "); then " +
               (autoclear ? them + (one ? " frees itself" : " free themselves")
                          : detach + " detaches " + (one ? "it" : "them"));
    if (!autoclear)
        return "detach " + std::string(one ? "it" : "them") + " (" + detach + ")";
    // rtprov's own loop device frees itself once unused: something uses its file system
    // with no mount of it left. A swap file there is named in /proc/swaps by a path that
    // leads nowhere on this host.
    std::ifstream in("/proc/swaps");
    std::stringstream text;
    text << in.rdbuf();
    std::vector<std::string> unreachable;
    for (const std::string& name : swap_file_names(text.str()))
        if (struct stat st{}; ::stat(name.c_str(), &st) != 0)
            unreachable.push_back(name);
    const std::string frees = them + (one ? " frees itself" : " free themselves") +
                              " once nothing uses " + (one ? "it" : "them");
    if (unreachable.empty())
        return frees + "; something still does (a mount of " + (one ? "it" : "them") +
               " in another mount namespace?)";
    return frees + "; /proc/swaps names swap files no path here leads to, in the image? (" +
           core::quoted_list(unreachable) + "): " +
           (one ? shown(swapoff_command(loops.front(), unreachable.front())) +
                      " turns the first off through a mount of " + loops.front()
                : "mount the one of " + them + " that holds one and swapoff it there");
}

} // namespace rtprov::target
