// SPDX-License-Identifier: Apache-2.0
#include "provisioner/target/disk_image.hpp"

#include "provisioner/core/error.hpp"
#include "tests/unit/catch.hpp"

using namespace rtprov::target;

namespace {

// A Raspberry Pi OS image's layout: MBR, FAT32 bootfs, ext4 rootfs.
ImageLayout pi_os() {
    ImageLayout l;
    l.table = "dos";
    l.partitions.push_back(
        {1, 8192 * 512, 512u << 20, "6c586e13-01", "", "vfat", "bootfs", "4EF5-6F55"});
    l.partitions.push_back({2, 1056768ull * 512, 2ull << 30, "6c586e13-02", "", "ext4", "rootfs",
                            "93a7a2a6-1bc6-4b8c-9a3c-bd1f4f7b2c3e"});
    return l;
}

} // namespace

TEST_CASE("a compressed image is told by its first bytes, with the command that unpacks it") {
    CHECK(
        compression_of(std::string("\xFD\x37\x7A\x58\x5A\x00", 6) + "rest", "a.img.xz")->command ==
        "xz -dk a.img.xz");
    CHECK(compression_of("\x28\xB5\x2F\xFD....", "a.img.zst")->format == "zstd");
    CHECK(compression_of("\x1F\x8B\x08", "a.img.gz")->format == "gzip");
    CHECK(compression_of("BZh91AY", "a.img.bz2")->output == "a.img");
    // without the suffix the tool wants: decompressed to a named file
    CHECK(compression_of("\x1F\x8B\x08", "my image")->command ==
          "gzip -dc 'my image' > 'my image.raw'");
    CHECK(compression_of("\x1F\x8B\x08", "my image")->output == "my image.raw");
    // a virtual machine's disk: converted with qemu-img
    const auto qcow2 = compression_of("QFI\xFB\x00\x00\x00\x03", "vm.qcow2");
    REQUIRE(qcow2);
    CHECK(qcow2->disk_format);
    CHECK(qcow2->command == "qemu-img convert -O raw vm.qcow2 vm.qcow2.raw");
    CHECK(compression_of("vhdxfile....", "d.vhdx")->format == "vhdx");
    CHECK_FALSE(compression_of(std::string(8, '\0'), "a.img")); // an MBR starts with code
    CHECK_FALSE(compression_of("", "a.img"));
}

TEST_CASE("an fstab source names a partition by PARTUUID, UUID, LABEL or PARTLABEL") {
    const ImageLayout l = pi_os();
    bool by_id = false;
    CHECK(partition_named(l, "PARTUUID=6C586E13-01", by_id) == 0u); // blkid compares without case
    CHECK(by_id);
    CHECK(partition_named(l, "/dev/disk/by-partuuid/6c586e13-02", by_id) == 1u);
    CHECK(partition_named(l, "LABEL=bootfs", by_id) == 0u);
    CHECK(partition_named(l, "UUID=4ef5-6f55", by_id) == 0u);
    CHECK_FALSE(partition_named(l, "LABEL=BOOTFS", by_id)); // labels keep their case
    CHECK(by_id);
    CHECK_FALSE(partition_named(l, "PARTUUID=6c586e13-07", by_id));
    CHECK(by_id); // named by id, and not in this image: an error for the caller
    CHECK_FALSE(partition_named(l, "BOOTDEV", by_id)); // pi-gen's placeholder
    CHECK_FALSE(by_id);
    CHECK_FALSE(partition_named(l, "/dev/mmcblk0p1", by_id));
    CHECK_FALSE(by_id);
    CHECK_FALSE(partition_named(l, "PARTUUID=", by_id)); // empty matches nothing
    // two partitions with one label: which one the system mounts is not guessed
    ImageLayout twins = pi_os();
    twins.partitions[1].label = "bootfs";
    CHECK_THROWS_WITH(partition_named(twins, "LABEL=bootfs", by_id),
                      "LABEL=bootfs names partitions 1 and 2 alike; rtprov does not guess which "
                      "one the system mounts");
}

TEST_CASE("the root is the one Linux file system, or the one labelled rootfs") {
    ImageLayout l = pi_os();
    CHECK(root_partition(l, "pi.img") == 1u);
    l.partitions.push_back({3, 0, 1u << 30, "", "", "ext4", "data", ""});
    CHECK(root_partition(l, "pi.img") == 1u); // two ext4: the labelled one
    l.partitions[1].label = "system";
    CHECK_THROWS_WITH(
        root_partition(l, "pi.img"),
        Catch::Matchers::StartsWith(
            "cannot tell which partition of 'pi.img' is the root: 2 do, and not "
            "exactly one is labelled 'rootfs' or 'root' (its partitions: partition 1 (vfat "
            "'bootfs', 512 MiB), partition 2 (ext4 'system', 2.0 GiB)"));
    ImageLayout fat_only;
    fat_only.partitions.push_back({1, 0, 64u << 20, "", "", "vfat", "", ""});
    // (Catch2 2.x's Contains is 3.x's ContainsSubstring: StartsWith is in both)
    CHECK_THROWS_WITH(root_partition(fat_only, "x.img"),
                      Catch::Matchers::StartsWith("cannot tell which partition of 'x.img' is the "
                                                  "root: none holds a Linux root file system"));
}
