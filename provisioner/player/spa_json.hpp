// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/core/result.hpp"

#include <string>
#include <string_view>
#include <vector>

// SPA-JSON, the relaxed JSON of PipeWire's and WirePlumber's configuration files
// (pipewire.conf(5), "Configuration file format"): '#' comments to the end of a line, keys
// and strings quoted or bare, ':', '=' or only a blank between a key and its value, ','
// optional, and a file an object without its braces. Read into a tree. Pure.
namespace rtprov::player {

struct JsonNode {
    enum class Kind { object, array, string, bare };
    Kind kind = Kind::bare;
    std::string text; // a string's characters, unescaped; a bare word as written ('1024', 'null')
    unsigned line = 0;
    std::vector<std::string> keys; // an object's, in order, one per value
    std::vector<JsonNode> values;  // an object's values, or an array's items
};

// The top-level object of 'text' (the file 'path'): its members, or those of the one
// '{ }' the file holds. Refused with path:line for what PipeWire's tokenizer refuses
// (spa/include/spa/utils/json-core.h, spa_json_next): a string or bracket never closed, a
// bracket that closes nothing, a key without a value, an object or array where a key
// should be, ':' or '=' where no key precedes, a backslash outside a string, an escape it
// does not know, a control character, or a byte outside printable ASCII in a bare word or
// one not UTF-8 in a string; and, beyond it, nesting deeper than 128 levels, or text after
// a file's closing '}'.
core::Result<JsonNode> read_spa_json(std::string_view text, const std::string& path);

} // namespace rtprov::player
