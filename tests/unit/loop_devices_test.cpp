// SPDX-License-Identifier: Apache-2.0
#include "provisioner/system/loop_devices.hpp"

#include "provisioner/target/loop_users.hpp"
#include "tests/unit/catch.hpp"
#include "tests/unit/temp_dir.hpp"

#include <sys/sysmacros.h>

#include <filesystem>
#include <map>

using namespace rtprov::system;
namespace stdfs = std::filesystem;

TEST_CASE("/proc/swaps gives its swap files, names unescaped, and no partition") {
    const std::string text =
        "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"
        "/dev/sda2                               partition\t1048572\t\t0\t\t-2\n"
        "/swapfile                               file\t\t252\t\t0\t\t-3\n"
        "/var/swap\\040space\\134x               file\t\t252\t\t0\t\t-4\n";
    CHECK(swap_file_names(text) == std::vector<std::string>{"/swapfile", "/var/swap space\\x"});
    CHECK(swap_file_names("Filename\tType\tSize\tUsed\tPriority\n").empty());
}

namespace {

// A copied /sys/block with four loop devices: loop0 holds the image (asked of sysfs'
// path), loop1 nothing, loop2 a file deleted since, loop3 another file (asked of the
// device); and a disk.
struct LoopTree {
    TempDir dir;
    FileId image, other{42, 7};
    LoopTree() {
        dir.write("images/pi.img", "disk");
        dir.write("sys/block/loop0/loop/backing_file", "/images/pi.img\n");
        dir.write("sys/block/loop0/loop/autoclear", "1\n");
        stdfs::create_directories(dir.path() + "/sys/block/loop1/loop");
        dir.write("sys/block/loop2/loop/backing_file", "/images/pi.img (deleted)\n");
        dir.write("sys/block/loop3/loop/backing_file", "/images/other.img\n");
        dir.write("sys/block/loop3/loop/autoclear", "0\n");
        dir.write("sys/block/sda/size", "100\n");
        stdfs::create_directories(dir.path() + "/sys/devices/virtual/block/loop5");
        stdfs::create_directories(dir.path() + "/sys/dev/block");
        stdfs::create_symlink("../../devices/virtual/block/loop5",
                              dir.path() + "/sys/dev/block/7:5");
        struct stat st {};
        REQUIRE(::stat((dir.path() + "/images/pi.img").c_str(), &st) == 0);
        image = {st.st_dev, st.st_ino};
    }
    // the device asked: only loop3 answers
    LoopFileQuery ask() const {
        return [this](const std::string& device) -> std::optional<FileId> {
            if (device == "/dev/loop3")
                return other;
            return std::nullopt;
        };
    }
};

} // namespace

TEST_CASE("attached loop devices are found in a copied /sys/block, each with its file") {
    LoopTree tree;
    const SysRoot sys(tree.dir.path());
    const std::vector<AttachedLoop> loops = attached_loops(sys, tree.ask());
    REQUIRE(loops.size() == 2);
    CHECK(loops[0].device == "/dev/loop0");
    CHECK(loops[0].file == tree.image); // by the path sysfs names, inside the tree
    CHECK(loops[1].device == "/dev/loop3");
    CHECK(loops[1].file == tree.other); // as the device says
    CHECK(rtprov::target::loops_holding(sys, tree.image, tree.ask()) ==
          std::vector<std::string>{"/dev/loop0"});
    CHECK(rtprov::target::loops_on(sys, {tree.other.device}, tree.ask()) ==
          std::vector<std::string>{"/dev/loop3"});
    CHECK(autoclears(sys, "/dev/loop0"));
    CHECK_FALSE(autoclears(sys, "/dev/loop3"));
    CHECK_FALSE(autoclears(sys, "/dev/loop1"));
    CHECK(block_device_path(sys, makedev(7, 5)) == "/dev/loop5");
    CHECK(block_device_path(sys, makedev(7, 6)).empty());
}

TEST_CASE("a loop device that frees itself, and a swap file no path leads to, are said so") {
    LoopTree tree;
    tree.dir.write("proc/swaps", "Filename\tType\tSize\tUsed\tPriority\n"
                                 "/run/rtprov/image/7/swapfile file\t252\t0\t-2\n"
                                 "/images/pi.img file\t252\t0\t-3\n");
    const SysRoot sys(tree.dir.path());
    CHECK(swap_files(sys) ==
          std::vector<std::string>{"/run/rtprov/image/7/swapfile", "/images/pi.img"});
    CHECK(rtprov::target::freeing_hint(sys, {"/dev/loop0"}, tree.ask()) ==
          "/dev/loop0 frees itself once nothing uses it; /proc/swaps names swap files no path "
          "here leads to, in the image? ('/run/rtprov/image/7/swapfile'): 'd=$(mktemp -d) && "
          "mount /dev/loop0 \"$d\" && swapoff \"$d\"/run/rtprov/image/7/swapfile && umount "
          "\"$d\" && rmdir \"$d\"' turns the first off through a mount of /dev/loop0");
    CHECK(rtprov::target::freeing_hint(sys, {"/dev/loop3"}, tree.ask()) ==
          "detach it ('losetup -d /dev/loop3')");
}
