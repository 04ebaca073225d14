// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/core/origin.hpp"
#include "provisioner/core/profile.hpp"

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

// A YAML document as a plain tree that remembers where each value came from, so that
// profiles from several files and --set options can be merged and every value still
// points back at its source. parse_yaml() is the only code in rtprov that reads YAML.
namespace rtprov::profile {

struct TreeEntry;

struct Tree {
    enum class Kind { null, scalar, sequence, map };
    Kind kind = Kind::null;
    std::string scalar;
    std::vector<Tree> items;        // sequence
    std::vector<TreeEntry> entries; // map, in file order
    core::Origin origin;

    const Tree* find(const std::string& key) const;
    Tree* find(const std::string& key);
};

struct TreeEntry {
    std::string key;
    core::Origin key_origin;
    Tree value;
};

// What parse_yaml() takes: rtprov's YAML (profiles, --set values, app knowledge,
// /etc/rtprov/firstboot.yaml) is small, hand-written configuration, so anything beyond
// these bounds is refused instead of parsed.
inline constexpr std::size_t k_max_yaml_bytes = 1u << 20;
inline constexpr int k_max_yaml_depth = 32;               // nested maps and lists
inline constexpr std::size_t k_max_yaml_nodes = 1u << 16; // keys, values and items

enum class EmptyDocument { empty_map, null };

// Parses 'text', one YAML document, into a Tree whose values carry 'file' and their
// line and column. Problems go to 'problems' as 'file:line:col' and the tree holds what
// could be read. Refused, so that parsing stays bounded in time and memory whatever the
// input: more than k_max_yaml_bytes, nesting deeper than k_max_yaml_depth, more than
// k_max_yaml_nodes nodes, anchors and aliases (a self-referencing alias grows without
// end; profiles have 'extends:' instead), tags, and a second document. It drives
// yaml-cpp's event parser for one document, and never LoadAll(), which loops forever on
// input such as ',' (jbeder/yaml-cpp#1040, in 0.7 and 0.8). An empty document is an
// empty map, or null with EmptyDocument::null.
Tree parse_yaml(const std::string& text, const std::string& file,
                std::vector<core::ProfileProblem>& problems,
                EmptyDocument empty = EmptyDocument::empty_map);

// Overlays 'overlay' onto 'base': maps merge key by key, a null value removes the key,
// anything else replaces what was there.
void merge_into(Tree& base, const Tree& overlay);

// 'value' quoted for a message, control characters written as escapes so that a newline
// in a hostile value cannot start a line of its own; a long value is cut.
std::string shown(const std::string& value);

// The one message for a key a file may not have: "unknown key 'modle', did you mean
// 'model'?" when one of 'known' is at most two edits away, else "unknown key 'x'; known
// keys: a, b". Profiles, app knowledge and firstboot.yaml all say it this way.
std::string unknown_key(const std::string& key, const std::vector<std::string_view>& known);

} // namespace rtprov::profile
