// SPDX-License-Identifier: Apache-2.0
#include "provisioner/target/loop_users.hpp"

#include "provisioner/core/error.hpp"
#include "provisioner/core/text.hpp"

#include <sys/stat.h>

#include <algorithm>

namespace rtprov::target {

namespace {

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

std::vector<std::string> loops_holding(const system::SysRoot& sys, const system::FileId& image,
                                       const system::LoopFileQuery& ask) {
    std::vector<std::string> found;
    for (const system::AttachedLoop& loop : system::attached_loops(sys, ask))
        if (loop.file == image)
            found.push_back(loop.device);
    return found;
}

std::vector<std::string> loops_on(const system::SysRoot& sys, const std::vector<dev_t>& devices,
                                  const system::LoopFileQuery& ask) {
    std::vector<std::string> found;
    for (const system::AttachedLoop& loop : system::attached_loops(sys, ask))
        if (std::find(devices.begin(), devices.end(), loop.file.device) != devices.end())
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

std::vector<ImageSwap> swaps_in_image(const system::SysRoot& sys, const std::string& host_root,
                                      const std::vector<std::string>& mount_points,
                                      const std::string& image_name) {
    const std::vector<std::string> names = system::swap_files(sys);
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
                // a name under the mount folder, which no one else sees, as the image's
                const std::string listed = name.starts_with(host_root + "/")
                                               ? image_name + ":" + name.substr(host_root.size())
                                               : name;
                found.push_back({listed, path, system::block_device_path(sys, file.st_dev)});
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

std::string freeing_hint(const system::SysRoot& sys, const std::vector<std::string>& loops,
                         const system::LoopFileQuery& ask) {
    const std::string them = core::join(loops, ", ");
    const bool one = loops.size() == 1;
    const auto inner = loops_on(sys, device_numbers(loops), ask);
    const bool autoclear = std::all_of(loops.begin(), loops.end(), [&](const std::string& loop) {
        return system::autoclears(sys, loop);
    });
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
    std::vector<std::string> unreachable;
    for (const std::string& name : system::swap_files(sys))
        if (!system::file_id(sys, name))
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
