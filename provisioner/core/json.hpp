// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

// Reading JSON (RFC 8259), and the two pieces every JSON rtprov writes is made of (a
// string literal, the schema members). rtprov reads back only what it wrote itself (a
// kept self-test report), but that file may have been edited or forged, so the reader is
// strict and bounded: UTF-8 only, nesting at most k_max_json_depth, at most 'max_values'
// values, no member name twice in an object, numbers that fit a double, and every problem
// named by line and column. Pure.
//
// Why not a library: Debian has JSON libraries (nlohmann-json, jsoncpp), but rtprov only
// needs to read its own reports back, the limits above are what make that safe, and a
// reader of ~250 lines that the fuzzer runs is smaller than learning each library's own
// limits on deep nesting and huge inputs.
namespace rtprov::core {

inline constexpr int k_max_json_depth = 32;

struct JsonValue {
    enum class Kind { null, boolean, number, string, array, object };
    Kind kind = Kind::null;
    bool boolean = false;
    double number = 0;
    std::string text;               // a string's value
    std::vector<JsonValue> items;   // an array's values, or an object's (in the file's order)
    std::vector<std::string> names; // an object's member names: names[i] is items[i]'s
    unsigned line = 1, column = 1;  // where it starts

    // The member 'key' of an object; null otherwise.
    const JsonValue* find(std::string_view key) const;
    // A number that is a whole number in [0, 2^53]: exactly what an integer key holds.
    std::optional<std::uint64_t> whole() const;
};

// "what" at "line:column" of the text.
struct JsonProblem {
    unsigned line = 1, column = 1;
    std::string message;
};

// The value 'text' holds, or the first problem. 'max_values' bounds the values (and so
// the memory) a hostile file can make the reader build.
struct JsonParse {
    std::optional<JsonValue> value;
    JsonProblem problem;
};
JsonParse parse_json(std::string_view text, std::size_t max_values = 1u << 22);

// The kind's name in messages: "null", "true or false", "a number", "a string", "a list",
// "an object".
std::string_view describe(JsonValue::Kind kind);

// A JSON string literal for 'text' (RFC 8259 escapes). Valid UTF-8 passes through; a
// byte that is not part of valid UTF-8 (a file's old content may hold any bytes) is
// written as the code point of the same number, so the output stays valid JSON.
std::string json_string(std::string_view text);

// The first two members of every --json object rtprov prints or keeps: which output it
// is ("rtprov.plan", "rtprov.status", ...) and the version of its keys. docs/json.md
// documents each output and the promise: within a version keys are only added; a key
// removed, renamed or given another type bumps the version.
inline std::string json_schema(std::string_view kind, int version = 1) {
    return "\"schema\": \"rtprov." + std::string(kind) +
           "\", \"schema_version\": " + std::to_string(version);
}

} // namespace rtprov::core
