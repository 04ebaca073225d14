// SPDX-License-Identifier: Apache-2.0
// pipeline/boot_counting.cpp: systemd-boot's boot counter as the health gate reads it.
#include "provisioner/pipeline/boot_counting.hpp"

#include "tests/unit/catch.hpp"
#include "tests/unit/temp_dir.hpp"

using namespace rtprov;

TEST_CASE("a boot counter is read from an entry's name as the Boot Loader Specification has it") {
    using pipeline::tries_left;
    CHECK(tries_left("/loader/entries/debian+3.conf") == 3u);
    CHECK(tries_left("/loader/entries/debian-6.12.57+deb13-amd64+2-1.conf") == 2u);
    CHECK(tries_left("\\EFI\\Linux\\debian+0-7.efi") == 0u);
    CHECK(tries_left("/loader/entries/rtprov-trial+0.conf") == 0u);
    CHECK_FALSE(tries_left("/loader/entries/debian.conf"));
    CHECK_FALSE(tries_left("/loader/entries/debian-6.12.57+deb13-amd64.conf"));
    CHECK_FALSE(tries_left("/loader/entries/debian+x-1.conf"));
    CHECK_FALSE(tries_left("/loader/entries/debian+1-.conf"));
    CHECK_FALSE(tries_left("/loader/entries/debian+9999999999.conf")); // not a count
    CHECK_FALSE(tries_left(""));
}

TEST_CASE("an entry without its counter is the same entry whatever the count") {
    using pipeline::without_counter;
    CHECK(without_counter("/loader/entries/debian+0-3.conf") == "/loader/entries/debian.conf");
    CHECK(without_counter("/loader/entries/debian+0-4.conf") == "/loader/entries/debian.conf");
    CHECK(without_counter("/loader/entries/a-6.12+deb13+2.conf") ==
          "/loader/entries/a-6.12+deb13.conf");
    CHECK(without_counter("/loader/entries/a-6.12+deb13.conf") ==
          "/loader/entries/a-6.12+deb13.conf");
    CHECK(without_counter("\\EFI\\Linux\\uki+1-1.efi") == "\\EFI\\Linux\\uki.efi");
}

TEST_CASE("LoaderBootCountPath is read from efivarfs: counted, and which entry") {
    TempDir sys;
    CHECK_FALSE(pipeline::counted_boot(sys.path()).counted);
    const std::string var =
        "sys/firmware/efi/efivars/LoaderBootCountPath-4a67b082-0a4c-41cf-b6c7-440b29bb8c4f";
    // 4 bytes of attributes, then UTF-16LE with its NUL, as efivarfs shows the variable
    std::string bytes("\x07\x00\x00\x00", 4);
    for (char c : std::string("\\loader\\entries\\debian+2-1.conf") + '\0')
        bytes += std::string{c, '\0'};
    sys.write(var, bytes);
    const pipeline::CountedBoot boot = pipeline::counted_boot(sys.path());
    CHECK(boot.counted);
    CHECK(boot.entry == "\\loader\\entries\\debian+2-1.conf");
    // a character outside printable ASCII is '?'; a string cut short ends where it is cut
    CHECK(pipeline::efi_string(std::string("\x07\0\0\0a\0\xe9\0\x01\0b", 11)) == "a??");
    CHECK(pipeline::efi_string("") == "");
    sys.write(var, "");
    CHECK(pipeline::counted_boot(sys.path()).counted); // there is what counts
    CHECK(pipeline::counted_boot(sys.path()).entry == "");
}
