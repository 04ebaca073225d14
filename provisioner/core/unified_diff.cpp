// SPDX-License-Identifier: Apache-2.0
#include "provisioner/core/unified_diff.hpp"

#include <algorithm>
#include <string_view>
#include <vector>

namespace rtprov::core {

namespace {

struct Line {
    std::string_view text; // without the newline
    bool has_newline;
    bool operator==(const Line& o) const { return text == o.text && has_newline == o.has_newline; }
};

std::vector<Line> split_lines(std::string_view text) {
    std::vector<Line> lines;
    std::size_t start = 0;
    while (start < text.size()) {
        std::size_t nl = text.find('\n', start);
        if (nl == std::string_view::npos) {
            lines.push_back({text.substr(start), false});
            break;
        }
        lines.push_back({text.substr(start, nl - start), true});
        start = nl + 1;
    }
    return lines;
}

enum class Op { keep, remove, add };

// Longest common subsequence by dynamic programming. The files rtprov diffs are small
// (config files, drop-ins); past k_max_cells the diff degrades to "remove all, add
// all", which is still a correct diff.
std::vector<Op> edit_script(const std::vector<Line>& a, const std::vector<Line>& b) {
    constexpr std::size_t k_max_cells = 4'000'000;
    std::vector<Op> ops;
    const std::size_t n = a.size(), m = b.size();
    if ((n + 1) * (m + 1) > k_max_cells) {
        ops.insert(ops.end(), n, Op::remove);
        ops.insert(ops.end(), m, Op::add);
        return ops;
    }
    std::vector<unsigned> lcs((n + 1) * (m + 1), 0);
    auto at = [&](std::size_t i, std::size_t j) -> unsigned& { return lcs[i * (m + 1) + j]; };
    for (std::size_t i = n; i-- > 0;)
        for (std::size_t j = m; j-- > 0;)
            at(i, j) = a[i] == b[j] ? at(i + 1, j + 1) + 1 : std::max(at(i + 1, j), at(i, j + 1));
    std::size_t i = 0, j = 0;
    while (i < n || j < m) {
        if (i < n && j < m && a[i] == b[j]) {
            ops.push_back(Op::keep);
            ++i;
            ++j;
        } else if (i < n && (j == m || at(i + 1, j) >= at(i, j + 1))) {
            ops.push_back(Op::remove); // removals first, as diff -u prints them
            ++i;
        } else {
            ops.push_back(Op::add);
            ++j;
        }
    }
    return ops;
}

void append_line(std::string& out, char mark, const Line& line) {
    out += mark;
    out += line.text;
    out += '\n';
    if (!line.has_newline)
        out += "\\ No newline at end of file\n";
}

std::string range(std::size_t start, std::size_t count) {
    // diff -u numbers an empty range by the line before it.
    std::size_t first = count == 0 ? start : start + 1;
    if (count == 1)
        return std::to_string(first);
    return std::to_string(first) + "," + std::to_string(count);
}

} // namespace

std::string unified_diff(const std::optional<std::string>& old_text,
                         const std::optional<std::string>& new_text, const std::string& old_label,
                         const std::string& new_label) {
    if (old_text == new_text)
        return "";
    auto a = split_lines(old_text ? std::string_view(*old_text) : std::string_view());
    auto b = split_lines(new_text ? std::string_view(*new_text) : std::string_view());
    auto ops = edit_script(a, b);

    std::string out = "--- " + (old_text ? old_label : std::string("/dev/null")) + "\n+++ " +
                      (new_text ? new_label : std::string("/dev/null")) + "\n";
    constexpr std::size_t k_context = 3;
    std::size_t k = 0;
    // Positions in a and b at each op index.
    std::vector<std::size_t> pos_a(ops.size() + 1), pos_b(ops.size() + 1);
    for (std::size_t idx = 0; idx < ops.size(); ++idx) {
        pos_a[idx + 1] = pos_a[idx] + (ops[idx] != Op::add ? 1 : 0);
        pos_b[idx + 1] = pos_b[idx] + (ops[idx] != Op::remove ? 1 : 0);
    }
    while (k < ops.size()) {
        if (ops[k] == Op::keep) {
            ++k;
            continue;
        }
        // A hunk starts k_context keeps before the first change and runs until a stretch
        // of more than 2*k_context keeps.
        std::size_t start = k >= k_context ? k - k_context : 0;
        std::size_t end = k;
        std::size_t keeps = 0;
        while (end < ops.size()) {
            if (ops[end] == Op::keep) {
                ++keeps;
                if (keeps > 2 * k_context)
                    break;
            } else {
                keeps = 0;
            }
            ++end;
        }
        // Trim trailing keeps to k_context.
        std::size_t trailing = 0;
        while (trailing < end - k && ops[end - 1 - trailing] == Op::keep)
            ++trailing;
        if (trailing > k_context)
            end -= trailing - k_context;

        out += "@@ -" + range(pos_a[start], pos_a[end] - pos_a[start]) + " +" +
               range(pos_b[start], pos_b[end] - pos_b[start]) + " @@\n";
        for (std::size_t idx = start; idx < end; ++idx) {
            switch (ops[idx]) {
            case Op::keep:
                append_line(out, ' ', a[pos_a[idx]]);
                break;
            case Op::remove:
                append_line(out, '-', a[pos_a[idx]]);
                break;
            case Op::add:
                append_line(out, '+', b[pos_b[idx]]);
                break;
            }
        }
        k = end;
    }
    return out;
}

} // namespace rtprov::core
