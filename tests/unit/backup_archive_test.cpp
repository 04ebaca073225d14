// SPDX-License-Identifier: Apache-2.0
#include "provisioner/target/backup_archive.hpp"

#include "provisioner/core/error.hpp"
#include "tests/unit/catch.hpp"

#include <cstdio>

using namespace rtprov::target;

namespace {

// Writes 'field' into the first tar header at 'offset' and makes its checksum right
// again (ustar: the sum of the header's bytes with the checksum field as spaces).
void set_header_field(std::string& bytes, std::size_t offset, const std::string& field) {
    bytes.replace(offset, field.size(), field);
    unsigned sum = 0;
    for (std::size_t i = 0; i < 512; ++i)
        sum += (i >= 148 && i < 156) ? unsigned(' ') : static_cast<unsigned char>(bytes[i]);
    char text[9];
    std::snprintf(text, sizeof text, "%06o", sum);
    bytes.replace(148, 8, std::string(text, 6) + '\0' + ' ');
}

} // namespace

TEST_CASE("the backup archive keeps bytes, mode, owner and mtime") {
    Backups backups;
    backups["/boot/firmware/cmdline.txt"] = {"console=tty1 root=ROOTDEV\n", 0755, 0, 0, 1700000000};
    backups["/etc/default/grub"] = {std::string("bin\0ary\n", 8), 04600, 1000, 2000, 1};
    backups["/etc/empty"] = {"", 0600, 0, 0, 0}; // 1970: a time too
    std::string bytes = write_backup_archive(backups);
    Backups back = read_backup_archive(bytes, "backup.tar");
    REQUIRE(back.size() == 3);
    for (const auto& [path, state] : backups) {
        CHECK(back[path].same_as(state));
        CHECK(back[path].mtime == state.mtime);
    }
    CHECK(write_backup_archive(backups) == bytes); // deterministic
}

TEST_CASE("the backup archive keeps a symlink's own time, 1970 too; an unmarked 0 is none") {
    Backups backups;
    backups["/etc/a"] = rtprov::core::symlink_to("/lib/a");
    backups["/etc/a"].mtime = 1700000000;
    backups["/etc/epoch"] = rtprov::core::symlink_to("/lib/epoch");
    backups["/etc/epoch"].mtime = 0; // a link whose own time really is 1970
    backups["/etc/none"] = rtprov::core::symlink_to("/lib/none");
    Backups back = read_backup_archive(write_backup_archive(backups), "backup.tar");
    CHECK(back["/etc/a"].mtime == 1700000000);
    REQUIRE(back["/etc/epoch"].mtime);
    CHECK(*back["/etc/epoch"].mtime == 0);
    CHECK_FALSE(back["/etc/none"].mtime);
    // the archives written before links kept their time: 0 there, with no mark
    Backups old;
    old["/etc/old"] = rtprov::core::symlink_to("/lib/old");
    std::string bytes = write_backup_archive(old);
    CHECK(bytes.find("rtprov.link-mtime-zero") == std::string::npos);
    CHECK_FALSE(read_backup_archive(bytes, "backup.tar")["/etc/old"].mtime);
    // the mark is there when a link's time is 1970
    CHECK(write_backup_archive(backups).find("rtprov.link-mtime-zero") != std::string::npos);
}

TEST_CASE("a damaged backup archive is an error") {
    Backups backups;
    backups["/etc/x"] = {"content\n", 0644, 0, 0, std::nullopt};
    std::string bytes = write_backup_archive(backups);
    CHECK_THROWS_AS(read_backup_archive(bytes.substr(0, 600), "backup.tar"), rtprov::Error);
    CHECK_THROWS_AS(read_backup_archive("not a tar file at all", "backup.tar"), rtprov::Error);
}

TEST_CASE("an entry declaring more bytes than the archive holds is refused, not allocated") {
    Backups backups;
    backups["/etc/x"] = {"content\n", 0644, 0, 0, std::nullopt};
    std::string bytes = write_backup_archive(backups);
    // The first header's size field (offset 124, 12 bytes of octal): 8 GB - 1.
    set_header_field(bytes, 124, std::string("77777777777") + '\0');
    try {
        read_backup_archive(bytes, "backup.tar");
        FAIL("the forged entry was read");
    } catch (const rtprov::Error& e) {
        CHECK(std::string(e.what()) ==
              "backup.tar: backup archive is damaged (entry 'etc/x' declares 8589934591 bytes in "
              "an archive of " +
                  std::to_string(bytes.size()) + "); rollback cannot restore originals from it");
    }
}

TEST_CASE("archive entries must be paths rtprov backs up, with permission bits only") {
    Backups weird;
    weird["/etc/x"] = {"x\n", 0644, 0, 0, std::nullopt};
    std::string bytes = write_backup_archive(weird);
    // Mode bits past 07777 in the header are not permission bits: kept out.
    set_header_field(bytes, 100, std::string("0600044") + '\0');
    CHECK(read_backup_archive(bytes, "backup.tar").at("/etc/x").mode == 044);
    Backups link;
    link["/etc/l"] = rtprov::core::symlink_to("");
    CHECK_THROWS_AS(read_backup_archive(write_backup_archive(link), "backup.tar"), rtprov::Error);
    for (const char* path : {"/", "/a/../b", "/a//b", "/a/./b"}) {
        Backups odd;
        odd[path] = {"x\n", 0644, 0, 0, std::nullopt};
        CHECK_THROWS_AS(read_backup_archive(write_backup_archive(odd), "backup.tar"),
                        rtprov::Error);
    }
}
