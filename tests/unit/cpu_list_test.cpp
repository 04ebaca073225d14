// SPDX-License-Identifier: Apache-2.0
#include "provisioner/core/cpu_list.hpp"

#include "tests/unit/catch.hpp"

using rtprov::core::CpuList;
using rtprov::core::parse_cpu_list;
using rtprov::core::parse_cpu_mask;

namespace {

std::string roundtrip(const std::string& text) {
    auto list = parse_cpu_list(text);
    REQUIRE(list);
    return list->to_string();
}

std::string error_of(const std::string& text) {
    auto list = parse_cpu_list(text);
    REQUIRE_FALSE(list);
    return list.problem;
}

} // namespace

TEST_CASE("CPU lists are normalised to the kernel's ascending range form") {
    CHECK(roundtrip("3") == "3");
    CHECK(roundtrip("2-3") == "2-3");
    CHECK(roundtrip("3,1,2") == "1-3");
    CHECK(roundtrip("0-1, 3") == "0-1,3");
    CHECK(roundtrip("5,0-2,2-3") == "0-3,5");
    CHECK(roundtrip("") == "");
    CHECK(roundtrip("7-7") == "7");
}

TEST_CASE("malformed CPU lists say what is wrong") {
    CHECK(error_of("3-1") == "range '3-1' runs backwards");
    CHECK(error_of("a") == "'a' is not a CPU number");
    CHECK(error_of("1,,2") == "empty item in CPU list '1,,2'");
    CHECK(error_of("1-") == "'' is not a CPU number");
    CHECK(error_of("-1") == "'' is not a CPU number");
    CHECK(error_of("2.5") == "'2.5' is not a CPU number");
    CHECK(error_of("5000") == "CPU 5000 is beyond the kernel's limit of 4095");
}

TEST_CASE("CPU list set operations") {
    CpuList a({0, 1, 2});
    CpuList b({2, 3});
    CHECK(a.intersection(b).to_string() == "2");
    CHECK(a.union_with(b).to_string() == "0-3");
    CHECK(a.minus(b).to_string() == "0-1");
    CHECK(CpuList::range(2, 3) == b);
    CHECK(b.contains(3));
    CHECK_FALSE(b.contains(1));
    CHECK(b.max() == 3u);
    CHECK_FALSE(CpuList().max());
}

TEST_CASE("CpuList::to_mask writes the kernel's hex bitmap") {
    CHECK(CpuList({0, 1, 2}).to_mask() == "7");
    CHECK(CpuList({4}).to_mask() == "10");
    CHECK(CpuList({0, 32}).to_mask() == "1,00000001");
    CHECK(CpuList().to_mask() == "0");
}

TEST_CASE("parse_cpu_mask reads the kernel's hex bitmap back, and refuses what is not one") {
    CHECK(parse_cpu_mask("3")->to_string() == "0-1");
    CHECK(parse_cpu_mask("00000000,0000000f")->to_string() == "0-3");
    CHECK(parse_cpu_mask("1,00000001")->to_string() == "0,32");
    CHECK(parse_cpu_mask("0")->empty());
    for (const CpuList& cpus : {CpuList({0, 1, 2}), CpuList({4}), CpuList({0, 32, 63})})
        CHECK(*parse_cpu_mask(cpus.to_mask()) == cpus);
    CHECK(parse_cpu_mask("").problem == "an empty CPU mask");
    CHECK(parse_cpu_mask("0-3").problem == "'0-3' is not a hex CPU mask");
    CHECK(parse_cpu_mask("f,,f").problem == "'f,,f' is not a hex CPU mask");
    CHECK(parse_cpu_mask("123456789").problem == "'123456789' is not a hex CPU mask");
    CHECK_FALSE(parse_cpu_mask(std::string(300, 'f')));
}
