// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

// The kernel's scheduling policies (sched(7)), with the one table of their names: the
// word profiles, app knowledge and the audit use, the kernel's constant, and the number
// sched_setscheduler(2) and /proc/<pid>/stat (field 41) give them.
namespace rtprov::core {

enum class SchedPolicy { other, batch, idle, fifo, rr, deadline };

// One row of the table.
struct SchedPolicyName {
    SchedPolicy policy;
    std::string_view word;        // 'fifo': in profiles, CPUSchedulingPolicy= and the audit
    std::string_view kernel_name; // 'SCHED_FIFO'
    long number;                  // 1 (include/uapi/linux/sched.h)
    bool realtime;                // fifo, rr, deadline: they outrank every ordinary thread
    bool static_priority;         // fifo, rr: run at a priority 1-99
};

// Every policy, in the order of the enum.
std::span<const SchedPolicyName> sched_policy_names();

// 'other', 'batch', 'idle', 'fifo', 'rr', 'deadline'.
std::string to_string(SchedPolicy policy);
// 'SCHED_OTHER', 'SCHED_BATCH', 'SCHED_IDLE', 'SCHED_FIFO', 'SCHED_RR', 'SCHED_DEADLINE'.
std::string kernel_name(SchedPolicy policy);
// 0 other, 3 batch, 5 idle, 1 fifo, 2 rr, 6 deadline.
long sched_number(SchedPolicy policy);
// fifo, rr and deadline: the policies that outrank every ordinary thread.
bool is_realtime(SchedPolicy policy);
// fifo and rr: the policies with a static priority 1-99 (deadline has none).
bool has_static_priority(SchedPolicy policy);

// The policy a word names ('fifo'); nullopt for any other text. Exact, case sensitive.
std::optional<SchedPolicy> sched_policy_from_word(std::string_view word);
// The policy a number names (sched.h, /proc/<pid>/stat); nullopt for one it does not name
// (4 is unused).
std::optional<SchedPolicy> sched_policy_from_number(long number);

} // namespace rtprov::core
