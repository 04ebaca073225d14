// SPDX-License-Identifier: Apache-2.0
#include "provisioner/core/json.hpp"

#include "tests/unit/catch.hpp"

#include <string>

using rtprov::core::JsonValue;
using rtprov::core::parse_json;

namespace {

// "line:column: message" of the problem 'text' has; "" when it parses.
std::string problem_of(const std::string& text, std::size_t max_values = 1000) {
    auto parsed = parse_json(text, max_values);
    if (parsed.value)
        return "";
    return std::to_string(parsed.problem.line) + ":" + std::to_string(parsed.problem.column) +
           ": " + parsed.problem.message;
}

} // namespace

TEST_CASE("JSON values of every kind are read with where they start") {
    auto parsed =
        parse_json("{\"a\": [1, -2.5e3, true, false, null],\n \"b\": {\"c\": \"d\\u00b5\\n\"}}");
    REQUIRE(parsed.value);
    const JsonValue& v = *parsed.value;
    REQUIRE(v.kind == JsonValue::Kind::object);
    const JsonValue* a = v.find("a");
    REQUIRE(a);
    REQUIRE(a->items.size() == 5);
    CHECK(a->items[0].whole() == 1u);
    CHECK(a->items[1].number == -2500.0);
    CHECK_FALSE(a->items[1].whole());
    CHECK(a->items[2].boolean);
    CHECK(a->items[4].kind == JsonValue::Kind::null);
    const JsonValue* c = v.find("b")->find("c");
    REQUIRE(c);
    CHECK(c->text == "dµ\n");
    CHECK(c->line == 2);
    CHECK(c->column == 13);
    CHECK(v.find("missing") == nullptr);
    CHECK(parse_json("\"\\ud83c\\udfb5\"").value->text == "🎵");
}

TEST_CASE("malformed or hostile JSON is refused at its line and column") {
    CHECK(problem_of("") == "1:1: unexpected end of the file; expected a JSON value");
    CHECK(problem_of("{\"a\": 1,}") == "1:9: unexpected '}'; expected a member name in quotes");
    CHECK(problem_of("{\"a\" 1}") == "1:6: unexpected '1'; expected ':' after a member name");
    CHECK(problem_of("[1 2]") == "1:4: unexpected '2'; expected ',' or ']'");
    CHECK(problem_of("{} {}") == "1:4: more after the JSON value; a report is one object");
    CHECK(problem_of("[01]") == "1:3: a number with a leading zero");
    CHECK(problem_of("[1.]") == "1:4: a number with no digits after its '.'");
    CHECK(problem_of("[1e999]") == "1:7: a number out of range");
    CHECK(problem_of("[\"a\nb\"]") ==
          "1:4: a control character (byte 10) in a string; JSON escapes them");
    CHECK(problem_of("[\"\\x\"]") == "1:5: an unknown escape '\\x'");
    CHECK(problem_of("[\"\\ud800\"]") == "1:9: a lone surrogate in a \\u escape");
    CHECK(problem_of("[\"\xff\"]") == "1:3: a byte that is not UTF-8 (255)");
    CHECK(problem_of("[\"abc") == "1:6: a string that does not end");
    // readers differ on which of two same names counts: neither does here
    CHECK(problem_of("{\"a\": 1,\n \"b\": 2, \"a\": 3}") == "2:10: the member 'a' is given twice");
    CHECK(problem_of("[tru]") == "1:2: unexpected 't'; expected a JSON value");
    CHECK(problem_of(std::string(33, '[') + std::string(33, ']')) ==
          "1:33: nesting deeper than 32 levels");
    CHECK(problem_of(std::string(32, '[') + std::string(32, ']')).empty());
    CHECK(problem_of("[1, 2, 3, 4]", 4) == "1:11: more than 4 values; a report is not this large");
    CHECK(problem_of(std::string("[1]\0", 4)) ==
          "1:4: more after the JSON value; a report is one object");
}
