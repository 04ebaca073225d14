// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/core/sched_policy.hpp"

#include <optional>
#include <string>
#include <string_view>

// Parsers for the text of a process's /proc files that say what runs where and in which
// unit (layouts from proc(5) and cgroups(7)). Pure: text in, values out; malformed input
// gives nullopt or "", never throws. The audit and the self-test's readers share them.
namespace rtprov::system {

// A thread's scheduling policy as /proc shows it; nullopt for a number that names none
// (core::sched_policy_from_number).
using ThreadPolicy = std::optional<core::SchedPolicy>;

// What /proc/<pid>/task/<tid>/stat says about a thread.
struct TaskStat {
    int pid = 0;                                    // field 1: the thread id
    std::string comm;                               // field 2, without the parentheses
    char state = 0;                                 // field 3: 'R' running or runnable, 'S'...
    int ppid = 0;                                   // field 4
    unsigned long flags = 0;                        // field 9
    int processor = -1;                             // field 39: the CPU it last ran on
    int rt_priority = 0;                            // field 40
    ThreadPolicy policy = core::SchedPolicy::other; // field 41
};

// Parses a stat line. The name may hold spaces and parentheses: fields are counted
// after the last ')'. Nullopt when fewer than 41 fields are there.
std::optional<TaskStat> parse_stat(std::string_view text);

// The systemd cgroup path in a /proc/<pid>/cgroup file: the 'name=systemd' hierarchy
// (cgroup v1 and hybrid), else the unified one ('0::/system.slice/mpd.service'); "" when
// there is neither.
std::string systemd_cgroup(std::string_view text);

// The systemd unit a process runs in, from its cgroup path (systemd_cgroup).
struct CgroupUnit {
    // The last component of the path that ends in '.service' or '.scope' (a service's own
    // subgroups are below it): 'mpd.service', 'session-2.scope'; "" in none.
    std::string unit;
    // The uid of the user manager ('user@1000.service' above the unit) whose unit it is;
    // nullopt for a unit of the system's manager (or when 'unit' is the user manager
    // itself).
    std::optional<unsigned> user;
};

CgroupUnit unit_of_cgroup(std::string_view path);

} // namespace rtprov::system
