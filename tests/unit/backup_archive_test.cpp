#include "provisioner/target/backup_archive.hpp"

#include "provisioner/core/error.hpp"
#include "tests/unit/catch.hpp"

using namespace rtprov::target;

TEST_CASE("the backup archive keeps bytes, mode, owner and mtime") {
    Backups backups;
    backups["/boot/firmware/cmdline.txt"] = {"console=tty1 root=ROOTDEV\n", 0755, 0, 0, 1700000000};
    backups["/etc/default/grub"] = {std::string("bin\0ary\n", 8), 04600, 1000, 2000, 1};
    backups["/etc/empty"] = {"", 0600, 0, 0, 0};
    std::string bytes = write_backup_archive(backups);
    Backups back = read_backup_archive(bytes, "backup.tar");
    REQUIRE(back.size() == 3);
    for (const auto& [path, state] : backups) {
        CHECK(back[path].same_as(state));
        CHECK(back[path].mtime == state.mtime);
    }
    CHECK(write_backup_archive(backups) == bytes); // deterministic
}

TEST_CASE("a damaged backup archive is an error") {
    Backups backups;
    backups["/etc/x"] = {"content\n", 0644, 0, 0, 0};
    std::string bytes = write_backup_archive(backups);
    CHECK_THROWS_AS(read_backup_archive(bytes.substr(0, 600), "backup.tar"), rtprov::Error);
    CHECK_THROWS_AS(read_backup_archive("not a tar file at all", "backup.tar"), rtprov::Error);
}
