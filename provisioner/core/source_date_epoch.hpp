// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <string_view>

// SOURCE_DATE_EPOCH (https://reproducible-builds.org/specs/source-date-epoch/): the time
// a reproducible image build gives what it writes. rtprov's one reader of its value.
namespace rtprov::core {

// The latest time ext4 stores, 2446-05-10T22:38:55Z: its inode times count seconds in
// 34 bits from 1901-12-13T20:45:52Z, -2^31 (the kernel's
// Documentation/filesystems/ext4/inodes.rst, "Inode Timestamps"). No file system rtprov
// writes holds a later one as given (ext4 with 128-byte inodes and FAT end sooner).
inline constexpr std::int64_t k_latest_file_time = 15032385535;

// The time SOURCE_DATE_EPOCH's value 'text' names: seconds since 1970 written in ASCII
// digits only (no sign, no space, nothing after), at most k_latest_file_time. Throws
// rtprov::Error naming the variable, the value and what to do. Pure.
std::int64_t parse_source_date_epoch(std::string_view text);

} // namespace rtprov::core
