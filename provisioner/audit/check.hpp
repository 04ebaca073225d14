// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/audit/proc_text.hpp"
#include "provisioner/core/cpu_list.hpp"

#include <string>
#include <vector>

// The result types of 'rtprov audit'. cli/ renders them (text, JSON) and maps the worst
// status to the exit code.
namespace rtprov::audit {

// ok: as it should be. warn: may cost latency, or the check could not read its input
// (the reason says which). fail: contradicts the profile, or is known to break audio.
enum class Status { ok, warn, fail };

std::string to_string(Status status); // 'ok', 'warn', 'fail'
Status worst(Status a, Status b);

struct Check {
    std::string id;      // stable, for machines: 'rt-push-ipi', 'service-threads'
    std::string subject; // what it is about when an id repeats: 'mpd.service'; else ""
    std::string title;   // one line for people
    Status status = Status::ok;
    std::string reason; // what was found and why it matters; never empty
    std::string fix;    // what to do about it; "" when ok
};

// One thread of a service, as 'ps -L -o tid,cls,rtprio,comm' and 'taskset -cp' show it.
struct ThreadRow {
    int pid = 0;
    int tid = 0;
    std::string comm;
    ThreadPolicy policy = core::SchedPolicy::other;
    int rt_priority = 0;
    std::string allowed_cpus; // '2-3'; '?' when unreadable
    std::string expected;     // 'fifo 40', 'not real-time', 'fifo 83 or above'
    Status status = Status::ok;
    std::string note; // why it is not ok; "" when it is
};

// The thread table of one configured service (empty when it is not running).
struct ServiceThreads {
    std::string unit;
    std::vector<ThreadRow> threads;
};

// A check with its id and title, ok until it is judged.
Check make_check(const char* id, const char* title);

// 'c' judged: a warning with its reason and the fix, or ok with its reason.
Check warn(Check c, std::string reason, std::string fix);
Check ok(Check c, std::string reason);

// 'c' as a warning that its input could not be read: 'problem' is the reason.
Check cannot_read(Check c, const std::string& problem);

// 'CPU 3', 'CPUs 2-3', 'no CPU'.
std::string cpus_text(const core::CpuList& cpus);

// 'a, b, c and 2 more': at most 'max' items, then a count of the rest.
std::string listing(const std::vector<std::string>& items, std::size_t max = 6);

} // namespace rtprov::audit
