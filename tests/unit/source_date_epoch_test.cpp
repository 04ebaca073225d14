// SPDX-License-Identifier: Apache-2.0
#include "provisioner/core/source_date_epoch.hpp"

#include "provisioner/core/error.hpp"
#include "tests/unit/catch.hpp"

#include <string>

using rtprov::core::k_latest_file_time;
using rtprov::core::parse_source_date_epoch;

namespace {

// The value as a message quotes it: on one line, a tab or newline in it written \x09, \x0a.
std::string not_a_number(const std::string& value) {
    return "SOURCE_DATE_EPOCH=" + rtprov::quoted(value) +
           " is not a number of seconds since 1970 (ASCII digits only, no sign or space); "
           "unset it or set it to seconds since 1970, e.g. the last commit's time: "
           "SOURCE_DATE_EPOCH=$(git log -1 --format=%ct)";
}

std::string too_late(const std::string& value) {
    return "SOURCE_DATE_EPOCH='" + value +
           "' is later than 15032385535 (2446-05-10T22:38:55Z), the latest time ext4 stores; "
           "unset it or set it to seconds since 1970, e.g. the last commit's time: "
           "SOURCE_DATE_EPOCH=$(git log -1 --format=%ct)";
}

} // namespace

TEST_CASE("SOURCE_DATE_EPOCH is seconds since 1970 in ASCII digits, 0 included") {
    CHECK(parse_source_date_epoch("1700000000") == 1700000000);
    CHECK(parse_source_date_epoch("0") == 0);
    CHECK(parse_source_date_epoch("0001") == 1);
    CHECK(parse_source_date_epoch("15032385535") == k_latest_file_time);
}

TEST_CASE("SOURCE_DATE_EPOCH with a sign, a blank or anything but digits is refused, "
          "naming the value and the fix") {
    for (const std::string value :
         {"+1700000000", " 1700000000", "1700000000 ", "\t1700000000", "-1", "1700000000\n", "",
          "yesterday", "1e9", "0x10", "1700000000.5", "١٢٣"})
        CHECK_THROWS_WITH(parse_source_date_epoch(value), not_a_number(value));
    CHECK_THROWS_WITH(parse_source_date_epoch("1700000000\n"),
                      Catch::Matchers::StartsWith("SOURCE_DATE_EPOCH='1700000000\\x0a' is not"));
}

TEST_CASE("SOURCE_DATE_EPOCH later than ext4's latest time is refused, saying so") {
    for (const std::string value :
         {"15032385536", "253402300799", "18446744073709551616", "99999999999999999999999999"})
        CHECK_THROWS_WITH(parse_source_date_epoch(value), too_late(value));
}
