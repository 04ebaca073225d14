// SPDX-License-Identifier: Apache-2.0
#include "provisioner/profile/schema.hpp"

#include "provisioner/core/error.hpp"

#include <charconv>

namespace rtprov::profile::schema {

using core::Origin;

void Reader::fail(const Origin& origin, const std::string& message) {
    m_problems.push_back({origin, m_prefix + message});
}

void Reader::record(const std::string& path, const Origin& origin) {
    if (m_origins)
        (*m_origins)[path] = origin;
}

bool Reader::map(const Tree& tree, const std::string& path,
                 const std::vector<std::string_view>& keys) {
    if (tree.kind == Tree::Kind::null)
        return true;
    if (tree.kind != Tree::Kind::map) {
        fail(tree.origin, "'" + path + "' must be a map of keys");
        return false;
    }
    for (const TreeEntry& entry : tree.entries)
        if (std::find(keys.begin(), keys.end(), entry.key) == keys.end())
            fail(entry.key_origin, unknown_key(entry.key, keys));
    return true;
}

const std::string* Reader::scalar(const Tree& tree, const std::string& path, const char* expected) {
    if (tree.kind != Tree::Kind::scalar) {
        fail(tree.origin, "'" + path + "' must be " + expected);
        return nullptr;
    }
    return &tree.scalar;
}

bool Reader::follows(const Origin& origin, const std::string& path, const std::string& value,
                     Rule rule) {
    std::optional<std::string> broken = rule ? rule(value) : std::nullopt;
    if (broken)
        fail(origin, "'" + path + "' holds " + shown(value) + ": " + *broken);
    return !broken;
}

std::optional<std::string> Reader::text(const Tree& tree, const std::string& path, Rule rule) {
    const std::string* value = scalar(tree, path, "a string");
    if (!value || !follows(tree.origin, path, *value, rule))
        return std::nullopt;
    return *value;
}

std::optional<bool> Reader::boolean(const Tree& tree, const std::string& path) {
    const std::string* value = scalar(tree, path, "true or false");
    if (!value)
        return std::nullopt;
    if (*value == "true" || *value == "false")
        return *value == "true";
    fail(tree.origin, "'" + path + "' must be true or false, not " + shown(*value));
    return std::nullopt;
}

std::optional<long> Reader::integer(const Tree& tree, const std::string& path, long min, long max) {
    const std::string* value = scalar(tree, path, "a whole number");
    if (!value)
        return std::nullopt;
    long number = 0;
    auto [end, ec] = std::from_chars(value->data(), value->data() + value->size(), number);
    if (value->empty() || ec != std::errc() || end != value->data() + value->size()) {
        fail(tree.origin, "'" + path + "' must be a whole number, not " + shown(*value));
        return std::nullopt;
    }
    if (number < min || number > max) {
        fail(tree.origin, "'" + path + "' is " + *value + ", outside " + std::to_string(min) + "-" +
                              std::to_string(max));
        return std::nullopt;
    }
    return number;
}

std::optional<std::vector<std::string>> Reader::strings(const Tree& tree, const std::string& path,
                                                        Rule rule) {
    std::vector<const Tree*> items;
    if (tree.kind == Tree::Kind::scalar) {
        items.push_back(&tree);
    } else if (tree.kind == Tree::Kind::sequence) {
        for (const Tree& item : tree.items)
            items.push_back(&item);
    } else if (tree.kind != Tree::Kind::null) {
        fail(tree.origin, "'" + path + "' must be a list of strings");
        return std::nullopt;
    }
    std::vector<std::string> values;
    bool all_good = true; // every bad item is reported, not only the first
    for (const Tree* item : items) {
        const std::string* value = scalar(*item, path, "a list of strings");
        if (value && follows(item->origin, path, *value, rule))
            values.push_back(*value);
        else
            all_good = false;
    }
    if (!all_good)
        return std::nullopt;
    return values;
}

std::optional<core::CpuList> Reader::cpu_list(const Tree& tree, const std::string& path) {
    std::vector<const Tree*> parts;
    if (tree.kind == Tree::Kind::scalar)
        parts.push_back(&tree);
    else if (tree.kind == Tree::Kind::sequence)
        for (const Tree& item : tree.items)
            parts.push_back(&item);
    else if (tree.kind != Tree::Kind::null) {
        fail(tree.origin, "'" + path + "' must be a CPU list such as '2-3' or '0,2'");
        return std::nullopt;
    }
    core::CpuList list;
    for (const Tree* part : parts) {
        const std::string* value = scalar(*part, path, "a CPU list such as '2-3'");
        if (!value)
            return std::nullopt;
        auto parsed = core::parse_cpu_list(*value);
        if (!parsed) {
            fail(part->origin, "malformed CPU list in '" + path + "': " + parsed.problem);
            return std::nullopt;
        }
        list = list.union_with(*parsed);
    }
    return list;
}

std::optional<std::string> non_empty(const std::string& value) {
    if (value.empty())
        return "it must not be empty";
    return std::nullopt;
}

namespace detail {

const Tree* child(const Tree& map, std::string_view key) {
    return map.kind == Tree::Kind::map ? map.find(std::string(key)) : nullptr;
}

const Tree& child_or_empty(const Tree& map, std::string_view key) {
    static const Tree k_empty{Tree::Kind::null, {}, {}, {}, {}};
    const Tree* found = child(map, key);
    return found ? *found : k_empty;
}

} // namespace detail

void throw_problems(const Problems& problems) {
    // A hostile file can hold 65536 wrong keys; a person reads the first ones, fixes
    // them and runs again.
    constexpr std::size_t k_max_shown = 100;
    std::string message;
    for (std::size_t i = 0; i < problems.size() && i < k_max_shown; ++i)
        message +=
            (i == 0 ? "" : "\n") + problems[i].origin.to_string() + ": " + problems[i].message;
    if (problems.size() > k_max_shown)
        message += "\n... and " + std::to_string(problems.size() - k_max_shown) +
                   " more problems; fix these first";
    throw Error(message);
}

} // namespace rtprov::profile::schema
