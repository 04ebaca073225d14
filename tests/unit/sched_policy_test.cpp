// SPDX-License-Identifier: Apache-2.0
#include "provisioner/core/sched_policy.hpp"

#include "tests/unit/catch.hpp"

#include <sched.h>

#include <string>
#include <vector>

using namespace rtprov::core;

namespace {

struct Expected {
    SchedPolicy policy;
    std::string word;
    std::string kernel_name;
    long number;
};

// The numbers from <sched.h> where glibc has them; SCHED_DEADLINE only in linux/sched.h.
const std::vector<Expected> k_expected = {
    {SchedPolicy::other, "other", "SCHED_OTHER", SCHED_OTHER},
    {SchedPolicy::batch, "batch", "SCHED_BATCH", SCHED_BATCH},
    {SchedPolicy::idle, "idle", "SCHED_IDLE", SCHED_IDLE},
    {SchedPolicy::fifo, "fifo", "SCHED_FIFO", SCHED_FIFO},
    {SchedPolicy::rr, "rr", "SCHED_RR", SCHED_RR},
    {SchedPolicy::deadline, "deadline", "SCHED_DEADLINE", 6},
};

} // namespace

TEST_CASE("every scheduling policy has its word, kernel name and number, and round-trips") {
    REQUIRE(sched_policy_names().size() == k_expected.size());
    for (std::size_t i = 0; i < k_expected.size(); ++i) {
        const Expected& e = k_expected[i];
        CAPTURE(e.word);
        CHECK(sched_policy_names()[i].policy == e.policy);
        CHECK(to_string(e.policy) == e.word);
        CHECK(kernel_name(e.policy) == e.kernel_name);
        CHECK(sched_number(e.policy) == e.number);
        CHECK(sched_policy_from_word(e.word) == e.policy);
        CHECK(sched_policy_from_number(e.number) == e.policy);
    }
}

TEST_CASE("only the exact words and the kernel's numbers name a policy") {
    CHECK_FALSE(sched_policy_from_word("app"));
    CHECK_FALSE(sched_policy_from_word("FIFO"));
    CHECK_FALSE(sched_policy_from_word("SCHED_FIFO"));
    CHECK_FALSE(sched_policy_from_word(""));
    CHECK(sched_policy_from_number(1) == SchedPolicy::fifo);
    CHECK(sched_policy_from_number(5) == SchedPolicy::idle);
    CHECK_FALSE(sched_policy_from_number(4)); // SCHED_ISO, never merged
    CHECK_FALSE(sched_policy_from_number(7));
    CHECK_FALSE(sched_policy_from_number(-1));
}

TEST_CASE("fifo, rr and deadline are real-time; only fifo and rr take a priority") {
    for (const Expected& e : k_expected) {
        CAPTURE(e.word);
        const bool static_priority = e.policy == SchedPolicy::fifo || e.policy == SchedPolicy::rr;
        CHECK(is_realtime(e.policy) == (static_priority || e.policy == SchedPolicy::deadline));
        CHECK(has_static_priority(e.policy) == static_priority);
    }
    CHECK(is_realtime(SchedPolicy::deadline));
    CHECK_FALSE(is_realtime(SchedPolicy::batch));
}

TEST_CASE("scheduling policies are named as the kernel's constants") {
    CHECK(kernel_name(SchedPolicy::other) == "SCHED_OTHER");
    CHECK(kernel_name(SchedPolicy::fifo) == "SCHED_FIFO");
    CHECK(kernel_name(SchedPolicy::rr) == "SCHED_RR");
}
