// SPDX-License-Identifier: Apache-2.0
#include "provisioner/profile/yaml_tree.hpp"

#include "provisioner/core/text.hpp"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/mark.h>
#include <yaml-cpp/parser.h>

#include <algorithm>
#include <cstdio>
#include <optional>
#include <sstream>
#include <unordered_set>

namespace rtprov::profile {

namespace {

using core::Origin;
using Problems = std::vector<core::ProfileProblem>;

Origin origin_of(const YAML::Mark& mark, const std::string& file, const Origin& fallback) {
    if (mark.line < 0 || mark.column < 0)
        return fallback;
    return Origin{file, unsigned(mark.line + 1), unsigned(mark.column + 1)};
}

constexpr const char* k_anchor_problem =
    "anchors and aliases ('&name', '*name') are not used in rtprov's YAML; write the value "
    "out, or share it with 'extends:'";

// Thrown by the builder to stop yaml-cpp at once: unwinding from an event handler is how
// a refusal ends the parse, before the rest of the input is read.
struct Refused {
    core::ProfileProblem problem;
};

// Builds a Tree from yaml-cpp's parse events, refusing what rtprov's YAML never needs.
class TreeBuilder : public YAML::EventHandler {
  public:
    TreeBuilder(const std::string& file, Problems& problems) : m_file(file), m_problems(problems) {}

    bool has_root() const { return m_has_root; }
    Tree take_root() { return std::move(m_root); }
    Origin origin(const YAML::Mark& mark) const {
        return origin_of(mark, m_file, Origin{m_file, 1, 1});
    }

    void OnDocumentStart(const YAML::Mark&) override {}
    void OnDocumentEnd() override {}
    void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
        check(mark, "", anchor);
        add(Tree{Tree::Kind::null, {}, {}, {}, origin(mark)});
    }
    void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override { refuse_anchor(mark); }
    void OnAnchor(const YAML::Mark& mark, const std::string&) override { refuse_anchor(mark); }
    void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                  const std::string& value) override {
        check(mark, tag, anchor);
        add(Tree{Tree::Kind::scalar, value, {}, {}, origin(mark)});
    }
    void OnSequenceStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                         YAML::EmitterStyle::value) override {
        open(mark, tag, anchor, Tree::Kind::sequence);
    }
    void OnSequenceEnd() override { close(); }
    void OnMapStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                    YAML::EmitterStyle::value) override {
        open(mark, tag, anchor, Tree::Kind::map);
    }
    void OnMapEnd() override { close(); }

  private:
    struct Frame {
        Tree node;
        bool have_key = false;
        TreeEntry entry; // the key waiting for its value
        bool skip_value = false;
        std::unordered_set<std::string> keys; // a map's keys so far
    };

    [[noreturn]] void refuse(const YAML::Mark& mark, std::string message) {
        throw Refused{{origin(mark), std::move(message)}};
    }
    void refuse_anchor(const YAML::Mark& mark) { refuse(mark, k_anchor_problem); }
    // Plain scalars and untagged collections carry '?', quoted scalars '!'.
    void check(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor) {
        if (anchor != YAML::NullAnchor)
            refuse_anchor(mark);
        if (!tag.empty() && tag != "?" && tag != "!")
            refuse(mark, "tags ('" + tag + "') are not used in rtprov's YAML; remove it");
        if (++m_nodes > k_max_yaml_nodes)
            refuse(mark, "more than " + std::to_string(k_max_yaml_nodes) +
                             " values: rtprov's YAML is a short file");
    }
    void open(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
              Tree::Kind kind) {
        check(mark, tag, anchor);
        if (int(m_stack.size()) >= k_max_yaml_depth)
            refuse(mark, "nesting deeper than " + std::to_string(k_max_yaml_depth) + " levels");
        Frame frame;
        frame.node = Tree{kind, {}, {}, {}, origin(mark)};
        m_stack.push_back(std::move(frame));
    }
    void close() {
        Tree node = std::move(m_stack.back().node);
        m_stack.pop_back();
        add(std::move(node));
    }
    // Problems that do not stop the parse, up to a screenful: past that it is not a
    // profile with mistakes but text that is no profile at all.
    void problem(core::ProfileProblem found) {
        if (++m_problem_count > k_max_problems)
            throw Refused{{found.origin, "more than " + std::to_string(k_max_problems) +
                                             " problems; fix the ones above first"}};
        m_problems.push_back(std::move(found));
    }
    void add(Tree node) {
        if (m_stack.empty()) {
            m_root = std::move(node);
            m_has_root = true;
            return;
        }
        Frame& frame = m_stack.back();
        if (frame.node.kind == Tree::Kind::sequence) {
            frame.node.items.push_back(std::move(node));
            return;
        }
        if (!frame.have_key) {
            frame.have_key = true;
            frame.skip_value = false;
            frame.entry = TreeEntry{node.scalar, node.origin, {}};
            if (node.kind != Tree::Kind::scalar) {
                problem({node.origin, "a key must be a plain word"});
                frame.skip_value = true;
            } else if (!frame.keys.insert(node.scalar).second) {
                problem({node.origin, "key '" + node.scalar + "' appears twice"});
                frame.skip_value = true;
            }
            return;
        }
        frame.have_key = false;
        if (frame.skip_value)
            return;
        frame.entry.value = std::move(node);
        frame.node.entries.push_back(std::move(frame.entry));
    }

    const std::string& m_file;
    Problems& m_problems;
    std::vector<Frame> m_stack;
    Tree m_root;
    bool m_has_root = false;
    std::size_t m_nodes = 0;
    std::size_t m_problem_count = 0;
    static constexpr std::size_t k_max_problems = 20;
};

// Stops at the first node of a second document: only where it starts matters.
class Ignore : public YAML::EventHandler {
  public:
    struct Stop {
        YAML::Mark mark;
    };

    void OnDocumentStart(const YAML::Mark&) override {}
    void OnDocumentEnd() override {}
    void OnNull(const YAML::Mark& mark, YAML::anchor_t) override { stop(mark); }
    void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override { stop(mark); }
    void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                  const std::string&) override {
        stop(mark);
    }
    void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                         YAML::EmitterStyle::value) override {
        stop(mark);
    }
    void OnSequenceEnd() override {}
    void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                    YAML::EmitterStyle::value) override {
        stop(mark);
    }
    void OnMapEnd() override {}

  private:
    [[noreturn]] static void stop(const YAML::Mark& mark) { throw Stop{mark}; }
};

// What a second document means: one that follows a '---' or '...' line is a second
// document; anything else is text yaml-cpp could not take as part of the first (for
// ',' it starts a "document" at the same place again and again).
std::string second_document_problem(const std::string& text, const YAML::Mark& mark) {
    std::size_t at = mark.pos < 0 ? 0 : std::min(std::size_t(mark.pos), text.size());
    std::istringstream before(text.substr(0, at));
    std::string line;
    while (std::getline(before, line))
        if (line.rfind("---", 0) == 0 || line.rfind("...", 0) == 0)
            return "a profile is one YAML document; remove the '" + line.substr(0, 3) +
                   "' and what follows, or put it in its own file";
    std::string here = text.substr(at, 1);
    return here.empty() || static_cast<unsigned char>(here[0]) < 0x20
               ? "this is not YAML that rtprov can read"
               : "unexpected '" + here + "': this is not YAML that rtprov can read";
}

// yaml-cpp's scanner keeps state for every open '[' or '{' before the parser sees it
// (about 300 bytes each: 100000 of them took 36 MB), and queues the tokens of a flow map
// until it ends (1 MiB of '{a,a,...' took 200 MB), so the text is measured here first,
// on a rough reading: quoted stretches (a quote where a value starts) and comments
// skipped, every other bracket counted as a nesting level and every comma inside
// brackets as a value. Counting a bracket a plain scalar holds only errs towards
// refusing. Anchors and aliases are refused here too, before yaml-cpp reports an alias
// of an anchor it does not know in words that differ between its versions.
std::optional<core::ProfileProblem> prescan_problem(const std::string& text,
                                                    const std::string& file) {
    std::size_t commas = 0;
    int depth = 0;
    unsigned line = 1, column = 0;
    bool value_start = true;
    char quote = 0;
    auto at = [&](std::string message) {
        return core::ProfileProblem{core::Origin{file, line, column}, std::move(message)};
    };
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        ++column;
        if (c == '\n') {
            ++line;
            column = 0;
            if (!quote)
                value_start = true;
            continue;
        }
        if (quote) {
            if (quote == '"' && c == '\\')
                ++i, ++column;
            else if (c == quote && quote == '\'' && i + 1 < text.size() && text[i + 1] == '\'')
                ++i, ++column;
            else if (c == quote)
                quote = 0;
            continue;
        }
        if (c == ' ' || c == '\t')
            continue;
        if (c == '#' && (i == 0 || text[i - 1] == ' ' || text[i - 1] == '\t')) {
            while (i + 1 < text.size() && text[i + 1] != '\n')
                ++i;
            continue;
        }
        if (c == '[' || c == '{') {
            if (++depth > k_max_yaml_depth)
                return at("nesting deeper than " + std::to_string(k_max_yaml_depth) + " levels");
            value_start = true;
            continue;
        }
        if ((c == ']' || c == '}') && depth > 0) {
            --depth;
            value_start = false;
            continue;
        }
        if (value_start && (c == '"' || c == '\'')) {
            quote = c;
            value_start = false;
            continue;
        }
        if (value_start && (c == '&' || c == '*'))
            return at(k_anchor_problem);
        if (c == ',' && depth > 0 && ++commas >= k_max_yaml_nodes)
            return at("more than " + std::to_string(k_max_yaml_nodes) +
                      " values: rtprov's YAML is a short file");
        value_start = c == ',' || c == ':' || c == '-' || c == '?';
    }
    return std::nullopt;
}

// The offset of the first NUL byte or byte that does not begin valid UTF-8 in 'text'.
std::optional<std::size_t> first_non_text_byte(const std::string& text) {
    for (std::size_t i = 0; i < text.size(); ++i) {
        const auto byte = static_cast<unsigned char>(text[i]);
        if (byte == 0)
            return i;
        if (byte >= 0x80) {
            const std::size_t n = core::utf8_length(text, i);
            if (n == 0)
                return i;
            i += n - 1;
        }
    }
    return std::nullopt;
}

} // namespace

Tree parse_yaml(const std::string& text, const std::string& file, Problems& problems,
                EmptyDocument empty) {
    const Origin start{file, 1, 1};
    Tree empty_tree{
        empty == EmptyDocument::empty_map ? Tree::Kind::map : Tree::Kind::null, {}, {}, {}, start};
    if (text.size() > k_max_yaml_bytes) {
        problems.push_back({start, "the text is " + std::to_string(text.size()) +
                                       " bytes, more than the " + std::to_string(k_max_yaml_bytes) +
                                       " bytes rtprov reads as YAML"});
        return empty_tree;
    }
    // yaml-cpp stops at a NUL byte without a word (the rest would silently not count), and
    // passes bytes that are not UTF-8 through into values (a board named so would reach a
    // Prometheus label as other characters): YAML is Unicode text (YAML 1.2, 5.2).
    if (auto bad = first_non_text_byte(text)) {
        unsigned line =
            unsigned(std::count(text.begin(), text.begin() + std::ptrdiff_t(*bad), '\n'));
        std::size_t line_start = text.rfind('\n', *bad);
        line_start = line_start == std::string::npos ? 0 : line_start + 1;
        // a column per character: the bytes before it on its line are valid UTF-8
        unsigned column = unsigned(std::count_if(
            text.begin() + std::ptrdiff_t(line_start), text.begin() + std::ptrdiff_t(*bad),
            [](char c) { return (static_cast<unsigned char>(c) & 0xc0) != 0x80; }));
        char hex[8];
        std::snprintf(hex, sizeof hex, "0x%02X", unsigned(static_cast<unsigned char>(text[*bad])));
        problems.push_back({Origin{file, line + 1, column + 1},
                            text[*bad] == '\0' ? std::string("a NUL byte; YAML is text")
                                               : "a byte that is not UTF-8 (" + std::string(hex) +
                                                     "); YAML is UTF-8 text: write it as UTF-8"});
        return empty_tree;
    }
    if (auto found = prescan_problem(text, file)) {
        problems.push_back(*found);
        return empty_tree;
    }
    std::istringstream in(text);
    TreeBuilder builder(file, problems);
    try {
        YAML::Parser parser(in);
        if (!parser.HandleNextDocument(builder) || !builder.has_root())
            return empty_tree;
        // One more document at most: LoadAll's loop over them is where yaml-cpp can spin.
        Ignore ignore;
        try {
            parser.HandleNextDocument(ignore);
        } catch (const Ignore::Stop& second) {
            problems.push_back(
                {origin_of(second.mark, file, start), second_document_problem(text, second.mark)});
        }
    } catch (const Refused& refused) {
        problems.push_back(refused.problem);
        return empty_tree;
    } catch (const YAML::Exception& e) {
        problems.push_back({origin_of(e.mark, file, start), e.msg});
        return empty_tree;
    }
    Tree tree = builder.take_root();
    if (tree.kind == Tree::Kind::null && empty == EmptyDocument::empty_map)
        tree.kind = Tree::Kind::map; // an empty file is an empty profile
    return tree;
}

const Tree* Tree::find(const std::string& key) const {
    for (const TreeEntry& entry : entries)
        if (entry.key == key)
            return &entry.value;
    return nullptr;
}

Tree* Tree::find(const std::string& key) {
    return const_cast<Tree*>(static_cast<const Tree*>(this)->find(key));
}

void merge_into(Tree& base, const Tree& overlay) {
    if (base.kind != Tree::Kind::map || overlay.kind != Tree::Kind::map) {
        base = overlay;
        return;
    }
    for (const TreeEntry& entry : overlay.entries) {
        auto it = std::find_if(base.entries.begin(), base.entries.end(),
                               [&](const TreeEntry& e) { return e.key == entry.key; });
        if (entry.value.kind == Tree::Kind::null) {
            if (it != base.entries.end())
                base.entries.erase(it);
        } else if (it == base.entries.end()) {
            base.entries.push_back(entry);
        } else {
            it->key_origin = entry.key_origin;
            merge_into(it->value, entry.value);
        }
    }
}

namespace {

std::size_t edit_distance(std::string_view a, std::string_view b) {
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j)
        row[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        std::size_t diagonal = row[0];
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            std::size_t above = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
            diagonal = above;
        }
    }
    return row[b.size()];
}

std::string suggestion(const std::string& key, const std::vector<std::string_view>& known) {
    std::string_view best;
    std::size_t best_distance = 3; // at most two edits away
    for (std::string_view candidate : known) {
        std::size_t d = edit_distance(key, candidate);
        if (d < best_distance && d < candidate.size()) {
            best = candidate;
            best_distance = d;
        }
    }
    if (!best.empty())
        return ", did you mean '" + std::string(best) + "'?";
    std::string list;
    for (std::string_view candidate : known)
        list += (list.empty() ? "" : ", ") + std::string(candidate);
    return "; known keys: " + list;
}

} // namespace

std::string shown(const std::string& value) {
    // The message names the value; it need not repeat 100 KB of it.
    constexpr std::size_t k_max_shown = 160;
    std::string out = "'";
    for (char ch : value.substr(0, k_max_shown)) {
        auto c = static_cast<unsigned char>(ch);
        if (c == '\n')
            out += "\\n";
        else if (c < 0x20 || c == 0x7f) {
            static const char k_hex[] = "0123456789abcdef";
            out += "\\x";
            out += k_hex[c >> 4];
            out += k_hex[c & 15];
        } else
            out += char(c);
    }
    return out + (value.size() > k_max_shown ? "...'" : "'");
}

std::string unknown_key(const std::string& key, const std::vector<std::string_view>& known) {
    return "unknown key " + shown(key) + suggestion(key, known);
}

} // namespace rtprov::profile
