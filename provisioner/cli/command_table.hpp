// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/cli/commands.hpp"

#include <CLI/CLI.hpp>

#include <span>

// rtprov's commands as one table (the idea of ninja's table of tools): a command is a row.
namespace rtprov::cli {

// The options of every command, as CLI11 fills them while it parses; one per run of
// rtprov, of which only the command asked for is read.
struct Invocation {
    TargetOptions target; // --root, --image, --live of profiles, plan, apply, status, rollback
    ProfilesCommand profiles;
    PlanCommand plan;
    ApplyCommand apply;
    StatusCommand status;
    RollbackCommand rollback;
    CpusetPartitionCommand cpuset_partition;
    SelftestCommand selftest;
    ReportCommand report;
    AuditCommand audit;
    FirstbootCommand firstboot;
    TrialCommand trial;
    HealthCommand health;
    IrqTuneCommand irq_tune;
};

// One command: its name, its line in 'rtprov --help', what adds its options to its
// CLI11 subcommand (bound to its part of 'args'), and what runs it once they are parsed,
// returning the exit code (commands.hpp: k_exit_*). What the run throws, main() prints.
struct Command {
    const char* name;
    const char* help;
    void (*add_options)(CLI::App& command, Invocation& args);
    int (*run)(const Invocation& args);
};

// Every command, in the order 'rtprov --help' lists them.
std::span<const Command> commands();

} // namespace rtprov::cli
