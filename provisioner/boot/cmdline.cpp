// SPDX-License-Identifier: Apache-2.0
#include "provisioner/boot/cmdline.hpp"

#include "provisioner/core/cpu_list.hpp"

#include <algorithm>
#include <iterator>
#include <set>

namespace rtprov::boot {

namespace {

// The token as the kernel reads it: a leading quote, and then a final one, stripped.
std::string_view unquoted(std::string_view text) {
    if (!text.empty() && text.front() == '"') {
        text.remove_prefix(1);
        if (!text.empty() && text.back() == '"')
            text.remove_suffix(1);
    }
    return text;
}

} // namespace

std::string CmdlineToken::key() const {
    std::string_view plain = unquoted(text);
    std::string key(plain.substr(0, plain.find('=')));
    std::replace(key.begin(), key.end(), '-', '_');
    return key;
}

std::optional<std::string> CmdlineToken::value() const {
    std::string_view plain = unquoted(text);
    auto equals = plain.find('=');
    if (equals == std::string_view::npos)
        return std::nullopt;
    std::string_view value = plain.substr(equals + 1);
    if (!value.empty() && value.front() == '"') {
        value.remove_prefix(1);
        if (!value.empty() && value.back() == '"')
            value.remove_suffix(1);
    }
    return std::string(value);
}

namespace {

// The kernel's isspace(), which splits the command line (lib/cmdline.c next_arg;
// lib/ctype.c): space, \t \n \v \f \r, and the Latin-1 no-break space 0xa0.
bool is_space(char c) {
    return c == ' ' || (c >= '\t' && c <= '\r') || static_cast<unsigned char>(c) == 0xa0;
}

} // namespace

CmdlineText parse_cmdline_text(std::string_view text, CmdlineScope scope) {
    CmdlineText out;
    if (scope == CmdlineScope::first_line) {
        std::size_t newline = text.find('\n');
        if (newline != std::string_view::npos) {
            out.rest = std::string(text.substr(newline + 1));
            text = text.substr(0, newline + 1);
        }
    }
    out.separators.clear();
    std::string separator, token;
    bool quoted = false;
    for (char c : text) {
        if (c == '"')
            quoted = !quoted;
        if (!quoted && is_space(c)) {
            if (!token.empty()) {
                out.separators.push_back(std::move(separator));
                out.tokens.push_back({std::move(token)});
                separator.clear();
                token.clear();
            }
            separator += c;
            continue;
        }
        token += c;
    }
    if (!token.empty()) {
        out.separators.push_back(std::move(separator));
        out.tokens.push_back({std::move(token)});
        separator.clear();
    }
    out.separators.push_back(std::move(separator));
    out.unclosed_quote = quoted;
    return out;
}

std::string render(const CmdlineText& text) {
    std::string out;
    for (std::size_t i = 0; i < text.tokens.size(); ++i)
        out += text.separators[i] + text.tokens[i].text;
    return out + text.separators.back() + text.rest;
}

std::vector<CmdlineToken> parse_cmdline(std::string_view text) {
    return parse_cmdline_text(text, CmdlineScope::whole_text).tokens;
}

std::string render_cmdline(const std::vector<CmdlineToken>& tokens) {
    std::string out;
    for (const CmdlineToken& token : tokens)
        out += (out.empty() ? "" : " ") + token.text;
    return out;
}

namespace {

// 'managed_irq,domain,2-3' -> flags {domain, managed_irq} and CPUs 2-3. The kernel
// accepts flags first, then the CPU list (kernel-parameters.txt, isolcpus=).
std::optional<std::pair<std::set<std::string>, core::CpuList>> split_flags(const std::string& v) {
    std::set<std::string> flags;
    std::string rest = v;
    while (!rest.empty() && !(rest[0] >= '0' && rest[0] <= '9')) {
        auto comma = rest.find(',');
        flags.insert(rest.substr(0, comma));
        rest = comma == std::string::npos ? "" : rest.substr(comma + 1);
    }
    auto cpus = core::parse_cpu_list(rest);
    if (!cpus)
        return std::nullopt;
    return std::pair{flags, *cpus};
}

} // namespace

bool same_value(const std::string& key, const std::string& a, const std::string& b) {
    if (a == b)
        return true;
    static const std::set<std::string> k_cpu_keys = {"isolcpus", "nohz_full", "rcu_nocbs",
                                                     "irqaffinity"};
    if (!k_cpu_keys.count(key))
        return false;
    auto pa = split_flags(a), pb = split_flags(b);
    return pa && pb && *pa == *pb;
}

RepeatRule repeat_rule(const std::string& key) {
    return key == "isolcpus" || key == "nohz_full" ? RepeatRule::first_counts
                                                   : RepeatRule::last_counts;
}

std::optional<std::string> not_in_effect(const std::vector<CmdlineToken>& tokens,
                                         const KernelParam& param) {
    const CmdlineToken* counted = nullptr;
    bool ours_seen = false;
    for (const CmdlineToken& token : tokens) {
        if (token.ends_parameters())
            break; // the rest is init's
        if (token.key() != param.key)
            continue;
        if (!counted || repeat_rule(param.key) == RepeatRule::last_counts)
            counted = &token;
        ours_seen =
            ours_seen || token.text == param.token() ||
            (!param.flag && token.value() && same_value(param.key, *token.value(), param.value));
    }
    if (!counted)
        return "'" + param.token() + "' is missing";
    bool in_effect =
        param.flag ? counted->text == param.token()
                   : counted->value() && same_value(param.key, *counted->value(), param.value);
    if (in_effect)
        return std::nullopt;
    if (ours_seen)
        return "'" + param.token() + "' is rejected: the kernel keeps the " +
               (repeat_rule(param.key) == RepeatRule::first_counts ? "first " : "last ") +
               param.key + "=, '" + counted->text + "'";
    return "'" + counted->text + "' instead of '" + param.token() + "'";
}

namespace {

// Removes token 'at' and the space that belongs to it: the separator before it, or for
// the first token the one after it (the line's leading bytes and its end stay).
void erase_token(CmdlineText& text, std::size_t at) {
    auto& seps = text.separators;
    if (at > 0) {
        seps.erase(seps.begin() + std::ptrdiff_t(at));
    } else if (text.tokens.size() > 1) {
        seps.erase(seps.begin() + 1);
    } else {
        seps[0] += seps[1];
        seps.erase(seps.begin() + 1);
    }
    text.tokens.erase(text.tokens.begin() + std::ptrdiff_t(at));
}

// Inserts 'token' before token 'at' (at == size: after the last one) with one space that
// belongs to it as erase_token() sees it, so erasing it again gives back every byte.
void insert_token(CmdlineText& text, std::size_t at, std::string token) {
    auto& seps = text.separators;
    if (text.tokens.empty())
        seps.insert(seps.begin(), ""); // the line's own bytes follow the token
    else if (at == 0)
        seps.insert(seps.begin() + 1, " "); // after the leading bytes, before the old first
    else
        seps.insert(seps.begin() + std::ptrdiff_t(at), " ");
    text.tokens.insert(text.tokens.begin() + std::ptrdiff_t(at), CmdlineToken{std::move(token)});
}

// The tokens the kernel reads as its parameters: those before a bare '--'.
std::size_t parameters_end(const CmdlineText& text) {
    for (std::size_t i = 0; i < text.tokens.size(); ++i)
        if (text.tokens[i].ends_parameters())
            return i;
    return text.tokens.size();
}

// Where a new token goes: before the first systemd.run* token (Imager's first run cuts
// from there), else after the last kernel parameter (before a '--').
std::size_t insertion_point(const CmdlineText& text) {
    const std::size_t end = parameters_end(text);
    for (std::size_t i = 0; i < end; ++i)
        if (text.tokens[i].key().rfind("systemd.run", 0) == 0)
            return i;
    return end;
}

} // namespace

MergedCmdline merge_cmdline(const CmdlineText& current, const std::vector<CmdlineToken>& original,
                            const std::vector<KernelParam>& wanted,
                            const std::vector<std::string>& owned_keys) {
    MergedCmdline merged;
    merged.text = current;
    CmdlineText& text = merged.text;
    auto wanted_param = [&](const std::string& key) -> const KernelParam* {
        for (const KernelParam& p : wanted)
            if (p.key == key)
                return &p;
        return nullptr;
    };
    // Only kernel parameters are rtprov's to change: what follows '--' is init's.
    auto first_of = [&](const std::string& key) {
        std::size_t i = 0, end = parameters_end(text);
        while (i < end && text.tokens[i].key() != key)
            ++i;
        return i < end ? i : text.tokens.size();
    };
    auto erase_all_after = [&](std::size_t from, const std::string& key) {
        for (std::size_t i = parameters_end(text); i-- > from;)
            if (text.tokens[i].key() == key)
                erase_token(text, i);
    };

    for (const std::string& key : owned_keys) {
        const KernelParam* param = wanted_param(key);
        std::vector<std::string> before;
        for (const CmdlineToken& token : original) {
            if (token.ends_parameters())
                break; // init's arguments were never the kernel's, nor rtprov's to bring back
            if (token.key() == key) {
                before.push_back(token.text);
                bool differs =
                    !param || (param->flag ? token.text != param->token()
                                           : !token.value() ||
                                                 !same_value(key, *token.value(), param->value));
                if (param && differs)
                    merged.foreign.push_back({key, token.text, param->token()});
            }
        }
        std::size_t first = first_of(key);
        if (param) {
            if (first < text.tokens.size()) {
                text.tokens[first].text = param->token();
                erase_all_after(first + 1, key);
            } else {
                insert_token(text, insertion_point(text), param->token());
            }
            continue;
        }
        // Not wanted: what was there before rtprov comes back, where rtprov's token is.
        std::size_t at = first < text.tokens.size() ? first : insertion_point(text);
        erase_all_after(at, key);
        for (std::size_t i = 0; i < before.size(); ++i)
            insert_token(text, at + i, before[i]);
    }
    return merged;
}

std::vector<std::string> owned_part(const std::vector<CmdlineToken>& tokens,
                                    const std::vector<std::string>& owned_keys) {
    std::vector<std::string> part;
    for (const CmdlineToken& token : tokens) {
        if (token.ends_parameters())
            break; // past '--' nothing is a kernel parameter, rtprov's included
        if (std::find(owned_keys.begin(), owned_keys.end(), token.key()) != owned_keys.end())
            part.push_back(token.text);
    }
    return part;
}

ForeignEdits foreign_edits(const std::vector<CmdlineToken>& original,
                           const std::vector<CmdlineToken>& current,
                           const std::vector<std::string>& owned_keys) {
    auto others = [&](const std::vector<CmdlineToken>& tokens) {
        std::multiset<std::string> out;
        for (const CmdlineToken& token : tokens)
            if (std::find(owned_keys.begin(), owned_keys.end(), token.key()) == owned_keys.end())
                out.insert(token.text);
        return out;
    };
    std::multiset<std::string> before = others(original), after = others(current);
    ForeignEdits edits;
    std::set_difference(before.begin(), before.end(), after.begin(), after.end(),
                        std::back_inserter(edits.removed));
    std::set_difference(after.begin(), after.end(), before.begin(), before.end(),
                        std::back_inserter(edits.added));
    return edits;
}

} // namespace rtprov::boot
