// SPDX-License-Identifier: Apache-2.0
#include "provisioner/core/result.hpp"

#include "provisioner/core/cpu_list.hpp"
#include "tests/unit/catch.hpp"

#include <type_traits>

using rtprov::Error;
using rtprov::core::Result;
using rtprov::core::value_or_throw;

TEST_CASE("value_or_throw gives the value, or throws the problem after the prefix") {
    CHECK(value_or_throw(Result<int>{7, "", false}) == 7);
    CHECK(value_or_throw(rtprov::core::parse_cpu_list("0-2")).to_string() == "0-2");
    try {
        (void)value_or_throw(Result<int>::failed("cannot read '/proc/cmdline': Permission denied"),
                             "reading the command line: ");
        FAIL("no exception");
    } catch (const Error& e) {
        CHECK(std::string(e.what()) ==
              "reading the command line: cannot read '/proc/cmdline': Permission denied");
    }
    try {
        (void)value_or_throw(Result<int>::failed("'x' is not a number"));
        FAIL("no exception");
    } catch (const Error& e) {
        CHECK(std::string(e.what()) == "'x' is not a number");
    }
}

TEST_CASE("a result moves its value out") {
    Result<std::string> text{std::string(4096, 'x'), "", false};
    const std::string taken = value_or_throw(std::move(text));
    CHECK(taken.size() == 4096);
}
