// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/fs/root.hpp"

#include <ctime>
#include <optional>
#include <string>

// What rtprov reads of its environment and its clock: only cli/ does, and passes it on.
namespace rtprov::cli {

// The environment variable that hands the root lock's descriptor to a child rtprov.
inline constexpr const char* k_lock_fd_variable = "RTPROV_ROOT_LOCK_FD";

// Now, by this machine's clock, for what measures or judges this machine (self-test
// reports, first boot's and the trial's records), never SOURCE_DATE_EPOCH: a report
// dated by it would sort as the newest for ever. (What apply and rollback write into an
// image takes SOURCE_DATE_EPOCH's time: write_time.)
std::time_t now_unix();
// SOURCE_DATE_EPOCH when it is set; rtprov::Error when it is not a time.
std::optional<std::time_t> source_date_epoch();
// ISO 8601, UTC; the default is the extended format (2026-12-03T14:26:38Z)
std::string utc_text(std::time_t t, const char* format = "%Y-%m-%dT%H:%M:%SZ");
std::string utc_now(); // now_unix() in utc_text's format

// rtprov's built-in data folder 'sub' (profiles, apps): share/rtprov/ beside bin/.
std::string data_dir(const char* sub);

// The crash tests' hook (RTPROV_TEST_KILL_AT_STEP, docs/design/journal.md) on 'root', for
// every command that writes through it.
void set_test_kill_hook(fs::Root& root);

// RTPROV_ROOT_LOCK_FD: the locked root folder a parent rtprov (first boot, a trial's
// commit) passes to the rtprov it runs, which would otherwise find the root locked by
// its own parent. nullopt when it is not set or not a descriptor number.
std::optional<int> inherited_lock_fd();

} // namespace rtprov::cli
