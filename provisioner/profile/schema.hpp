// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/core/cpu_list.hpp"
#include "provisioner/core/profile.hpp"
#include "provisioner/profile/yaml_tree.hpp"

#include <yaml-cpp/emitter.h>

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

// A schema: the keys one kind of rtprov's YAML may hold (a profile, a service of it, an
// app's facts, firstboot.yaml), each written once in a table with its kind, rule and
// field. The table drives reading (every problem at once, each at its file:line:col;
// unknown keys refused with did-you-mean), the origin of every value read (for the
// problems that span keys), and writing back (to_yaml). The docs check asks rtprov which
// keys it knows, so it reads this table too.
namespace rtprov::profile::schema {

using Problems = std::vector<core::ProfileProblem>;
// A rule a value must follow (core::grammar): nullopt, or why it does not.
using Rule = std::optional<std::string> (*)(const std::string&);

// A rule for a value that must not be empty.
std::optional<std::string> non_empty(const std::string& value);

using profile::shown;

// Reads values of each kind, adding what is wrong to its problems.
class Reader {
  public:
    // 'prefix' starts every message ("app 'mpd': "); 'origins', when given, gets the
    // origin of every key read, by its dotted path.
    Reader(Problems& problems, std::string prefix = {},
           std::map<std::string, core::Origin, std::less<>>* origins = nullptr)
        : m_problems(problems), m_prefix(std::move(prefix)), m_origins(origins) {}

    void fail(const core::Origin& origin, const std::string& message);
    void record(const std::string& path, const core::Origin& origin);
    // True when 'tree' is a map (null counts as an empty one); reports unknown keys.
    bool map(const Tree& tree, const std::string& path, const std::vector<std::string_view>& keys);
    const std::string* scalar(const Tree& tree, const std::string& path, const char* expected);
    bool follows(const core::Origin& origin, const std::string& path, const std::string& value,
                 Rule rule);

    std::optional<std::string> text(const Tree& tree, const std::string& path, Rule rule);
    std::optional<bool> boolean(const Tree& tree, const std::string& path);
    std::optional<long> integer(const Tree& tree, const std::string& path, long min, long max);
    // A list of strings (a single string is a list of one), each following 'rule'.
    std::optional<std::vector<std::string>> strings(const Tree& tree, const std::string& path,
                                                    Rule rule);
    // A CPU list: '0-2,5', a list of numbers and ranges, or '' / [] for none.
    std::optional<core::CpuList> cpu_list(const Tree& tree, const std::string& path);

    template <typename Enum>
    std::optional<Enum> choice(const Tree& tree, const std::string& path, core::Words<Enum> words) {
        std::string names;
        for (const auto& [word, value] : words)
            names += (names.empty() ? "'" : ", '") + std::string(word) + "'";
        const std::string* value = scalar(tree, path, ("one of " + names).c_str());
        if (!value)
            return std::nullopt;
        for (const auto& [word, e] : words)
            if (*value == word)
                return e;
        fail(tree.origin, "'" + path + "' must be one of " + names + ", not " + shown(*value));
        return std::nullopt;
    }

  private:
    Problems& m_problems;
    std::string m_prefix;
    std::map<std::string, core::Origin, std::less<>>* m_origins;
};

// One key of a record R.
template <typename R> struct Key {
    std::string_view path; // dotted, below the record: 'board.boot.loader'
    // Reads the value at 'path' (shown as 'shown') into the record; empty for a key that
    // is known but read elsewhere ('extends').
    std::function<void(Reader&, const Tree&, const std::string& shown, R&)> read;
    // Writes the value; empty for a key not written back.
    std::function<void(YAML::Emitter&, const R&)> write;
    // False where the value is not written (an optional left unset); empty: always.
    std::function<bool(const R&)> present;
    // Non-empty: the key must be there, and this says what it is.
    std::string_view needed = {};
};

template <typename R> using Keys = std::vector<Key<R>>;

// The field a key fills, as a function: RTPROV_FIELD(Profile, board.model).
template <typename R, typename T> using Field = T& (*)(R&);
#define RTPROV_FIELD(R, expr)                                                                      \
    +[](R & r) -> auto& {                                                                          \
        return r.expr;                                                                             \
    }

// ---- keys of each kind ------------------------------------------------------------------

// A field's value, and whether it holds one: optional fields are written only when set.
template <typename T> T value_of(const T& value) {
    return value;
}
template <typename T> T value_of(const std::optional<T>& value) {
    return value.value_or(T{});
}
template <typename T> bool is_set(const T&) {
    return true;
}
template <typename T> bool is_set(const std::optional<T>& value) {
    return value.has_value();
}

// A string following 'rule', into a string field or an optional one.
template <typename R, typename Text>
Key<R> text(std::string_view path, Field<R, Text> field, Rule rule = nullptr) {
    return {path,
            [=](Reader& c, const Tree& t, const std::string& shown, R& r) {
                if (auto value = c.text(t, shown, rule))
                    field(r) = *value;
            },
            [=](YAML::Emitter& out, const R& r) { out << value_of(field(const_cast<R&>(r))); },
            [=](const R& r) { return is_set(field(const_cast<R&>(r))); }};
}

// true or false, into a bool or an optional one.
template <typename R, typename Bool> Key<R> flag(std::string_view path, Field<R, Bool> field) {
    return {path,
            [=](Reader& c, const Tree& t, const std::string& shown, R& r) {
                if (auto value = c.boolean(t, shown))
                    field(r) = *value;
            },
            [=](YAML::Emitter& out, const R& r) { out << value_of(field(const_cast<R&>(r))); },
            [=](const R& r) { return is_set(field(const_cast<R&>(r))); }};
}

// A whole number in min-max, into an integer field or an optional one.
template <typename R, typename Int>
Key<R> number(std::string_view path, Field<R, Int> field, long min, long max) {
    return {path,
            [=](Reader& c, const Tree& t, const std::string& shown, R& r) {
                if (auto value = c.integer(t, shown, min, max))
                    field(r) = static_cast<decltype(value_of(field(r)))>(*value);
            },
            [=](YAML::Emitter& out, const R& r) { out << value_of(field(const_cast<R&>(r))); },
            [=](const R& r) { return is_set(field(const_cast<R&>(r))); }};
}

template <typename R>
Key<R> strings(std::string_view path, Field<R, std::vector<std::string>> field,
               Rule rule = nullptr) {
    return {path,
            [=](Reader& c, const Tree& t, const std::string& shown, R& r) {
                if (auto values = c.strings(t, shown, rule))
                    field(r) = std::move(*values);
            },
            [=](YAML::Emitter& out, const R& r) {
                out << YAML::Flow << YAML::BeginSeq;
                for (const std::string& value : field(const_cast<R&>(r)))
                    out << value;
                out << YAML::EndSeq;
            },
            {}};
}

template <typename R, typename Enum> Key<R> choice(std::string_view path, Field<R, Enum> field) {
    return {
        path,
        [=](Reader& c, const Tree& t, const std::string& shown, R& r) {
            if (auto value = c.choice(t, shown, core::words(Enum{})))
                field(r) = *value;
        },
        [=](YAML::Emitter& out, const R& r) { out << core::to_string(field(const_cast<R&>(r))); },
        {}};
}

// A key whose reading and writing are the table's own (a value with alternatives).
template <typename R>
Key<R> custom(std::string_view path,
              std::function<void(Reader&, const Tree&, const std::string&, R&)> read,
              std::function<void(YAML::Emitter&, const R&)> write,
              std::function<bool(const R&)> present = {}) {
    return {path, std::move(read), std::move(write), std::move(present)};
}

// A key known to the schema and read by the loader itself.
template <typename R> Key<R> known(std::string_view path) {
    return {path, {}, {}, {}};
}

// ---- the walkers --------------------------------------------------------------------

namespace detail {
const Tree* child(const Tree& map, std::string_view key);
const Tree& child_or_empty(const Tree& map, std::string_view key);
} // namespace detail

// Reads 'tree' into 'record' by 'keys'. 'shown' is the record's own path in messages
// ('profile', 'tuning.services.mpd'); 'base' is prefixed to every key's path ('' or
// 'tuning.services.mpd.'). Problems go to the reader; what could be read is read.
template <typename R>
void read(Reader& c, const Tree& tree, const std::string& shown, const std::string& base,
          const Keys<R>& keys, R& record, std::string_view below = {}) {
    std::vector<std::string_view> names;
    for (const Key<R>& key : keys)
        if (key.path.starts_with(below)) {
            std::string_view rest = key.path.substr(below.size());
            std::string_view name = rest.substr(0, rest.find('.'));
            if (std::find(names.begin(), names.end(), name) == names.end())
                names.push_back(name);
        }
    const std::string here =
        below.empty() ? shown : base + std::string(below.substr(0, below.size() - 1));
    if (!c.map(tree, here, names))
        return;
    for (std::string_view name : names) {
        const std::string path = std::string(below) + std::string(name);
        const Tree* node = detail::child(tree, name);
        auto leaf = std::find_if(keys.begin(), keys.end(),
                                 [&](const Key<R>& key) { return key.path == path; });
        if (leaf == keys.end()) { // a map of keys below
            const std::string deeper = path + ".";
            read(c, node ? *node : detail::child_or_empty(tree, name), shown, base, keys, record,
                 deeper);
            continue;
        }
        // A required key given as null ('units: ~') is as missing as one left out.
        if (!node || (node->kind == Tree::Kind::null && !leaf->needed.empty())) {
            if (!leaf->needed.empty())
                c.fail(tree.origin, "needs '" + path + "', " + std::string(leaf->needed));
            continue;
        }
        c.record(base + path, node->origin);
        if (leaf->read)
            leaf->read(c, *node, base + path, record);
    }
}

// Writes 'record' as a map of 'keys', in table order, opening and closing the maps between.
template <typename R> void write(YAML::Emitter& out, const Keys<R>& keys, const R& record) {
    out << YAML::BeginMap;
    std::vector<std::string_view> open;
    for (const Key<R>& key : keys) {
        if (!key.write || (key.present && !key.present(record)))
            continue;
        std::vector<std::string_view> parts;
        for (std::string_view rest = key.path;;) {
            auto dot = rest.find('.');
            parts.push_back(rest.substr(0, dot));
            if (dot == std::string_view::npos)
                break;
            rest = rest.substr(dot + 1);
        }
        std::size_t common = 0;
        while (common < open.size() && common + 1 < parts.size() && open[common] == parts[common])
            ++common;
        for (; open.size() > common; open.pop_back())
            out << YAML::EndMap;
        for (std::size_t i = common; i + 1 < parts.size(); ++i) {
            out << YAML::Key << std::string(parts[i]) << YAML::Value << YAML::BeginMap;
            open.push_back(parts[i]);
        }
        out << YAML::Key << std::string(parts.back()) << YAML::Value;
        key.write(out, record);
    }
    for (; !open.empty(); open.pop_back())
        out << YAML::EndMap;
    out << YAML::EndMap;
}

// The dotted path of every key, in table order.
template <typename R> std::vector<std::string> paths(const Keys<R>& keys) {
    std::vector<std::string> out;
    for (const Key<R>& key : keys)
        out.emplace_back(key.path);
    return out;
}

// Every problem as one error, one line each.
[[noreturn]] void throw_problems(const Problems& problems);

} // namespace rtprov::profile::schema
