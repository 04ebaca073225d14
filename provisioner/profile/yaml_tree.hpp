#pragma once

#include "provisioner/core/origin.hpp"

#include <string>
#include <vector>

// A YAML document as a plain tree that remembers where each value came from, so that
// profiles from several files and --set options can be merged and every value still
// points back at its source. Built by profile_loader.cpp from yaml-cpp's nodes.
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

// Overlays 'overlay' onto 'base': maps merge key by key, a null value removes the key,
// anything else replaces what was there.
void merge_into(Tree& base, const Tree& overlay);

} // namespace rtprov::profile
