// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <optional>
#include <string>

// systemd's boot counting ("Automatic Boot Assessment"; the UAPI.1 Boot Loader
// Specification's "Boot counting"): an entry named NAME+LEFT[-DONE].conf (or .efi) is tried
// LEFT more times; systemd-boot counts each try down in its name before it boots it and
// tells the booted system which entry that was in the EFI variable LoaderBootCountPath;
// systemd-bless-boot.service takes the counter out of the name once boot-complete.target
// is reached. The health gate reads it to tell a boot that may be tried again from one
// that may not.
namespace rtprov::pipeline {

// This boot as the boot loader counts it.
struct CountedBoot {
    bool counted = false; // LoaderBootCountPath is set: the loader counts this entry's tries
    std::string entry;    // the entry as the variable names it ("/loader/entries/x+2-1.conf");
                          // "" when not counted or unreadable
};

// Whether the loader counts tries of this boot's entry, from the EFI variable
// LoaderBootCountPath under 'sysroot' (/sys/firmware/efi/efivars). Never throws.
CountedBoot counted_boot(const std::string& sysroot);

// The string an efivarfs file of systemd's loader interface holds: 4 bytes of attributes,
// then a NUL-terminated UTF-16LE string (systemd's BOOT_LOADER_INTERFACE). A character
// outside printable ASCII is '?': the name is for messages and for telling entries apart.
// Pure.
std::string efi_string(const std::string& bytes);

// The 'tries left' of an entry's name with a counter ("debian+2-1.conf": 2; "+0-3": 0),
// nullopt when the name has none. Pure.
std::optional<unsigned> tries_left(const std::string& entry);

// The entry with its counter taken out of its name ("debian+0-3.conf": "debian.conf"): the
// same entry whatever the count. Pure.
std::string without_counter(const std::string& entry);

} // namespace rtprov::pipeline
