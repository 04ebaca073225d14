// SPDX-License-Identifier: Apache-2.0
#include "provisioner/core/board_match.hpp"

#include "provisioner/core/error.hpp"
#include "tests/unit/catch.hpp"

using namespace rtprov::core;

namespace {

BoardMatch pi4_match() {
    BoardMatch m;
    m.device_tree_model = {"Raspberry Pi 4 Model B*", "Raspberry Pi 400*"};
    m.os_id = {"debian", "raspbian"};
    m.cpu_count = 4;
    return m;
}

BoardMatch debian_match() {
    BoardMatch m;
    m.os_id = {"debian"};
    return m;
}

BoardFacts pi4_facts() {
    return {std::string("Raspberry Pi 4 Model B Rev 1.5"), std::nullopt, {"debian"}, 4};
}

BoardFacts pc_facts() {
    return {std::nullopt, std::string("Standard PC (Q35 + ICH9, 2009)"), {"debian"}, 4};
}

} // namespace

TEST_CASE("a board match scores one point per criterion it gives and holds") {
    CHECK(match_score(pi4_match(), pi4_facts()) == 3u);
    CHECK(match_score(debian_match(), pi4_facts()) == 1u);
    CHECK(match_score(debian_match(), pc_facts()) == 1u);
}

TEST_CASE("a criterion the profile gives must hold, and an unknown fact does not hold") {
    CHECK_FALSE(match_score(pi4_match(), pc_facts())); // no device-tree model on a PC
    BoardFacts three_cpus = pi4_facts();
    three_cpus.cpu_count = 3;
    CHECK_FALSE(match_score(pi4_match(), three_cpus));
    BoardFacts ubuntu = pc_facts();
    ubuntu.os_ids = {"ubuntu"};
    CHECK_FALSE(match_score(debian_match(), ubuntu));
    ubuntu.os_ids = {"ubuntu", "debian"}; // ID_LIKE counts
    CHECK(match_score(debian_match(), ubuntu) == 1u);
}

TEST_CASE("detection picks the profile naming the board over one naming only the OS") {
    std::vector<BoardCandidate> candidates = {
        {"x86-debian13", debian_match()}, {"pi4", pi4_match()}, {"anything", BoardMatch{}}};
    CHECK(choose_board(candidates, pi4_facts()) == "pi4");
    CHECK(choose_board(candidates, pc_facts()) == "x86-debian13");
}

TEST_CASE("detection refuses when nothing fits or two profiles fit equally well") {
    BoardFacts arch = pc_facts();
    arch.os_ids = {"arch"};
    try {
        choose_board({{"x86-debian13", debian_match()}}, arch);
        FAIL("no error");
    } catch (const rtprov::Error& e) {
        CHECK(std::string(e.what()) ==
              "no profile's board.match fits this machine (product 'Standard PC (Q35 + ICH9, "
              "2009)', OS arch, 4 CPUs); name one with 'profile:' in "
              "/etc/rtprov/firstboot.yaml");
    }
    try {
        choose_board({{"a", debian_match()}, {"b", debian_match()}}, pc_facts());
        FAIL("no error");
    } catch (const rtprov::Error& e) {
        CHECK(std::string(e.what()).starts_with("profiles 'a', 'b' fit this machine"));
    }
}
