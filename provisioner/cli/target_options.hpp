// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/cli/commands.hpp"
#include "provisioner/core/plan.hpp"
#include "provisioner/pipeline/target_session.hpp"
#include "provisioner/systemd/online.hpp"
#include "provisioner/target/journal.hpp"

#include <CLI/CLI.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

// What the commands on a target (profiles, plan, apply, status, rollback) share: the
// options that name it, opening it, and what apply and rollback say and write alike.
namespace rtprov::cli {

// --root, --image, --live
void add_target_options(CLI::App& command, TargetOptions& o);

// The target of --root, --live or --image: an image is opened read-only, and for
// writing commands (apply, rollback) held so that it can be made writable; what was
// mounted, and what the read-only look may miss, is said on stderr.
pipeline::TargetSession open_target(const TargetOptions& o, bool required,
                                    pipeline::Access access = pipeline::Access::read_only);

// A command the user is told to run: the words as a shell reads them back
// (core::shell_command), so that a root named 'odd $(id) dir' is one word, not a command.
std::string rtprov_command(const std::string& verb, const std::vector<std::string>& options);

// The time apply and rollback give what they write and record: SOURCE_DATE_EPOCH's,
// read before the target is opened, so a value refused leaves an image as it was. None
// with --live (a warning when it is set): the running system's files keep real times.
std::optional<std::int64_t> write_time(const TargetOptions& o);

// "2026-11-30T01:00:00Z": the time an apply records, SOURCE_DATE_EPOCH's or the clock's.
std::string applied_at(std::optional<std::int64_t> epoch);

// What apply and rollback write takes 'epoch' as its time when there is one (an image
// built twice has the same file times); the crash tests' hook.
void prepare_writes(fs::Root& root, std::optional<std::int64_t> epoch);

// "3 files", "1 file"
std::string files_text(std::size_t n);

// Runs a command in the target, saying on stderr what it runs and how long it took.
target::CommandRunner command_runner(const TargetOptions& o, const fs::Root& root);

// "systemd: ..." for each step systemd was told.
void print_done(const systemd::OnlineResult& online);

} // namespace rtprov::cli
