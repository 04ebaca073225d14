// SPDX-License-Identifier: Apache-2.0
#include "provisioner/system/proc_stat.hpp"

#include "tests/unit/catch.hpp"

using namespace rtprov::system;
using rtprov::core::SchedPolicy;

namespace {

// A stat line of an MPD output thread at SCHED_FIFO 40 whose name holds a space.
const std::string k_stat =
    "290956 (output:Heed Aba) S 1 290953 290953 0 -1 4194624 1226 0 0 0 61 39 0 0 -41 0 12 0 "
    "1543 1342177280 5127 18446744073709551615 1 1 0 0 0 0 0 4096 16902 0 0 0 -1 3 40 1 0 0 0 "
    "0 0 0 0 0 0 0 0 0\n";

} // namespace

TEST_CASE("stat fields are counted after the last parenthesis") {
    auto stat = parse_stat(k_stat);
    REQUIRE(stat);
    CHECK(stat->pid == 290956);
    CHECK(stat->comm == "output:Heed Aba");
    CHECK(stat->state == 'S');
    CHECK(stat->ppid == 1);
    CHECK(stat->flags == 4194624);
    CHECK(stat->processor == 3);
    CHECK(stat->rt_priority == 40);
    CHECK(stat->policy == SchedPolicy::fifo);

    auto odd = parse_stat("7 (a) R b) (c) R 2 0 0 0 -1 2129984 0 0 0 0 0 0 0 0 20 0 1 0 10 0 0 0 "
                          "0 0 0 0 0 0 0 0 0 0 0 0 0 1 0 0\n");
    REQUIRE(odd);
    CHECK(odd->comm == "a) R b) (c");
    CHECK(odd->state == 'R');
    CHECK(odd->flags == 2129984);
    CHECK(odd->processor == 1);
    CHECK(odd->policy == SchedPolicy::other);
}

TEST_CASE("a stat line without the scheduling fields is refused") {
    CHECK_FALSE(parse_stat("1 (init) S 0 1 1 0 -1 4194560\n"));
    CHECK_FALSE(parse_stat("garbage"));
    CHECK_FALSE(parse_stat(""));
    // a state of more than one letter is not a stat line
    CHECK_FALSE(parse_stat("9 (x) SS 2 0 0 0 -1 2129984 0 0 0 0 0 0 0 0 20 0 1 0 10 0 0 0 0 0 0 "
                           "0 0 0 0 0 0 0 0 0 0 0 1 0 0\n"));
}

TEST_CASE("the systemd cgroup comes from name=systemd, else from the unified hierarchy") {
    CHECK(systemd_cgroup("0::/system.slice/mpd.service\n") == "/system.slice/mpd.service");
    CHECK(systemd_cgroup("12:cpuset:/\n1:name=systemd:/rtprov.slice/mpd.service\n0::/\n") ==
          "/rtprov.slice/mpd.service");
    CHECK(systemd_cgroup("3:cpuset:/\n").empty());
}

TEST_CASE("a cgroup's unit is its last service or scope, a user's under their user manager") {
    CgroupUnit mpd = unit_of_cgroup("/system.slice/mpd.service");
    CHECK(mpd.unit == "mpd.service");
    CHECK_FALSE(mpd.user);
    // a service's own subgroups (delegation) are below its unit
    CHECK(unit_of_cgroup("/rtprov.slice/jackd.service/payload").unit == "jackd.service");
    CgroupUnit pipewire = unit_of_cgroup(
        "/user.slice/user-1000.slice/user@1000.service/session.slice/pipewire.service");
    CHECK(pipewire.unit == "pipewire.service");
    CHECK(pipewire.user == 1000u);
    CgroupUnit session = unit_of_cgroup("/user.slice/user-1000.slice/session-2.scope");
    CHECK(session.unit == "session-2.scope");
    CHECK_FALSE(session.user);
    CHECK(unit_of_cgroup("/user.slice/user-1000.slice/user@1000.service/init.scope").user == 1000u);
    CHECK(unit_of_cgroup("/").unit.empty());
    CHECK(unit_of_cgroup("").unit.empty());
    CHECK(unit_of_cgroup("/init.scope").unit == "init.scope");
    // a user manager whose name holds no number names no user
    CHECK_FALSE(unit_of_cgroup("/user.slice/user@x.service/mpd.service").user);
}
