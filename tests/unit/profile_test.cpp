// SPDX-License-Identifier: Apache-2.0
#include "provisioner/core/profile.hpp"

#include "tests/unit/catch.hpp"

using namespace rtprov::core;

namespace {

Profile with_cores(std::optional<unsigned> cpus, std::optional<CpuList> housekeeping,
                   std::optional<CpuList> reserved) {
    Profile p;
    p.name = "test";
    p.board.cpus = cpus;
    p.origins["board.cpus"] = {"p.yaml", 3, 9};
    p.tuning.cores.housekeeping = housekeeping;
    p.tuning.cores.reserved = reserved;
    p.origins["tuning.cores.housekeeping"] = {"p.yaml", 7, 19};
    p.origins["tuning.cores.reserved"] = {"p.yaml", 8, 15};
    return p;
}

std::vector<std::string> messages(const Profile& p, std::optional<unsigned> count = {}) {
    std::vector<std::string> out;
    for (const auto& problem : validate(p, count))
        out.push_back(problem.origin.to_string() + ": " + problem.message);
    return out;
}

} // namespace

TEST_CASE("auto cores reserve the upper half and keep CPU 0 for housekeeping") {
    Profile p = with_cores(std::nullopt, std::nullopt, std::nullopt);
    CHECK_FALSE(resolve_cores(p, std::nullopt));
    CHECK(resolve_cores(p, 4u) == ResolvedCores{CpuList({0, 1}), CpuList({2, 3})});
    CHECK(resolve_cores(p, 3u) == ResolvedCores{CpuList({0, 1}), CpuList({2})});
    CHECK(resolve_cores(p, 2u) == ResolvedCores{CpuList({0}), CpuList({1})});
    CHECK(resolve_cores(p, 1u) == ResolvedCores{CpuList({0}), CpuList()});
}

TEST_CASE("one given list makes the other its complement") {
    CHECK(resolve_cores(with_cores(4u, CpuList({0, 1, 2}), std::nullopt), std::nullopt) ==
          ResolvedCores{CpuList({0, 1, 2}), CpuList({3})});
    CHECK(resolve_cores(with_cores(std::nullopt, std::nullopt, CpuList({3})), 8u) ==
          ResolvedCores{CpuList({0, 1, 2, 4, 5, 6, 7}), CpuList({3})});
}

TEST_CASE("a valid layout has no problems") {
    CHECK(messages(with_cores(4u, CpuList({0, 1, 2}), CpuList({3}))).empty());
    CHECK(messages(with_cores(std::nullopt, std::nullopt, std::nullopt)).empty());
}

TEST_CASE("overlapping core lists are refused") {
    CHECK(messages(with_cores(4u, CpuList({0, 1, 2}), CpuList({2, 3}))) ==
          std::vector<std::string>{"p.yaml:8:15: reserved CPUs '2-3' overlap housekeeping CPUs "
                                   "'0-2' on CPU 2; a core is either housekeeping or reserved"});
}

TEST_CASE("a layout without a housekeeping core is refused") {
    CHECK(messages(with_cores(4u, CpuList(), CpuList({0, 1, 2, 3}))) ==
          std::vector<std::string>{"p.yaml:7:19: no housekeeping core: keep at least one core "
                                   "for the system, interrupts and kernel housekeeping"});
    CHECK(messages(with_cores(4u, std::nullopt, CpuList({0, 1, 2, 3}))) ==
          std::vector<std::string>{"p.yaml:8:15: no housekeeping core: reserving CPUs '0-3' "
                                   "leaves none of the 4 CPUs for the system"});
}

TEST_CASE("CPUs beyond the count are refused, from the profile or the running machine") {
    CHECK(messages(with_cores(4u, CpuList({0, 1}), CpuList({2, 3, 4, 5}))) ==
          std::vector<std::string>{"p.yaml:8:15: CPUs 4-5 are beyond the board's 4 CPUs (0-3)"});
    CHECK(messages(with_cores(std::nullopt, CpuList({0}), CpuList({1, 2, 3})), 2u) ==
          std::vector<std::string>{"p.yaml:8:15: CPUs 2-3 are beyond the board's 2 CPUs (0-1)"});
}

TEST_CASE("CPUs left out of both lists are refused") {
    CHECK(messages(with_cores(4u, CpuList({0}), CpuList({3}))) ==
          std::vector<std::string>{"p.yaml:8:15: CPUs 1-2 are neither housekeeping nor "
                                   "reserved; add them to one of the two lists"});
}

TEST_CASE("a single CPU cannot be split") {
    CHECK(messages(with_cores(1u, std::nullopt, std::nullopt)) ==
          std::vector<std::string>{"p.yaml:3:9: a single CPU cannot be split into housekeeping "
                                   "and reserved cores; set 'tuning.cores.reserved' to an empty "
                                   "list or use a board with more CPUs"});
    CHECK(messages(with_cores(1u, std::nullopt, CpuList())).empty());
}

TEST_CASE("service priorities must fit their policy and 1-99") {
    Profile p = with_cores(4u, std::nullopt, std::nullopt);
    ServiceTuning s;
    s.name = "mpd";
    s.origin = {"p.yaml", 12, 5};
    s.policy = SchedPolicy::fifo;
    s.priority = 120;
    p.tuning.services = {s};
    p.origins["tuning.services.mpd.priority"] = {"p.yaml", 14, 17};
    CHECK(messages(p) == std::vector<std::string>{"p.yaml:14:17: priority 120 is outside 1-99 "
                                                  "(the range of SCHED_FIFO and SCHED_RR)"});
    p.tuning.services[0].priority = 0;
    CHECK(messages(p).size() == 1);
    p.tuning.services[0].priority = 99;
    CHECK(messages(p).empty());
    p.tuning.services[0].policy = std::nullopt; // app
    CHECK(messages(p) ==
          std::vector<std::string>{"p.yaml:14:17: service 'mpd': a priority needs policy 'fifo' or "
                                   "'rr', not 'app'"});
    p.tuning.services[0].policy = SchedPolicy::rr;
    p.tuning.services[0].priority.reset();
    CHECK(messages(p) == std::vector<std::string>{
                             "p.yaml:12:5: service 'mpd': policy 'rr' needs a priority (1-99)"});
}

TEST_CASE("two services may not tune the same unit") {
    rtprov::core::Profile p;
    p.board.cpus = 4;
    rtprov::core::ServiceTuning a, b;
    a.name = "a";
    a.unit = "mpd.service";
    b.name = "b";
    b.unit = "mpd.service";
    p.tuning.services = {a, b};
    auto problems = rtprov::core::validate(p);
    REQUIRE(problems.size() == 1);
    CHECK(problems[0].message == "services 'a' and 'b' both tune unit 'mpd.service': one drop-in "
                                 "cannot say both; keep one of them");
}
