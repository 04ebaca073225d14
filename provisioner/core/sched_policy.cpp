// SPDX-License-Identifier: Apache-2.0
#include "provisioner/core/sched_policy.hpp"

#include <array>

namespace rtprov::core {

namespace {

// Numbers from include/uapi/linux/sched.h (4 was SCHED_ISO, never merged); which
// policies are real-time and which have a static priority from sched(7).
constexpr std::array<SchedPolicyName, 6> k_names = {{
    {SchedPolicy::other, "other", "SCHED_OTHER", 0, false, false},
    {SchedPolicy::batch, "batch", "SCHED_BATCH", 3, false, false},
    {SchedPolicy::idle, "idle", "SCHED_IDLE", 5, false, false},
    {SchedPolicy::fifo, "fifo", "SCHED_FIFO", 1, true, true},
    {SchedPolicy::rr, "rr", "SCHED_RR", 2, true, true},
    {SchedPolicy::deadline, "deadline", "SCHED_DEADLINE", 6, true, false},
}};

constexpr bool in_enum_order() {
    for (std::size_t i = 0; i < k_names.size(); ++i)
        if (static_cast<std::size_t>(k_names[i].policy) != i)
            return false;
    return true;
}
static_assert(in_enum_order(), "k_names is indexed by SchedPolicy");

const SchedPolicyName& row(SchedPolicy policy) {
    return k_names[static_cast<std::size_t>(policy)];
}

} // namespace

std::span<const SchedPolicyName> sched_policy_names() {
    return k_names;
}

std::string to_string(SchedPolicy policy) {
    return std::string(row(policy).word);
}

std::string kernel_name(SchedPolicy policy) {
    return std::string(row(policy).kernel_name);
}

long sched_number(SchedPolicy policy) {
    return row(policy).number;
}

bool is_realtime(SchedPolicy policy) {
    return row(policy).realtime;
}

bool has_static_priority(SchedPolicy policy) {
    return row(policy).static_priority;
}

std::optional<SchedPolicy> sched_policy_from_word(std::string_view word) {
    for (const SchedPolicyName& name : k_names)
        if (name.word == word)
            return name.policy;
    return std::nullopt;
}

std::optional<SchedPolicy> sched_policy_from_number(long number) {
    for (const SchedPolicyName& name : k_names)
        if (name.number == number)
            return name.policy;
    return std::nullopt;
}

} // namespace rtprov::core
