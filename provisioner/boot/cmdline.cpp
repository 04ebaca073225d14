#include "provisioner/boot/cmdline.hpp"

#include "provisioner/core/cpu_list.hpp"

#include <algorithm>
#include <set>

namespace rtprov::boot {

std::string CmdlineToken::key() const {
    return text.substr(0, text.find('='));
}

std::optional<std::string> CmdlineToken::value() const {
    auto equals = text.find('=');
    if (equals == std::string::npos)
        return std::nullopt;
    return text.substr(equals + 1);
}

std::vector<CmdlineToken> parse_cmdline(std::string_view text) {
    std::vector<CmdlineToken> tokens;
    std::string current;
    bool quoted = false;
    for (char c : text) {
        if (c == '"')
            quoted = !quoted;
        if (!quoted && (c == ' ' || c == '\t' || c == '\n' || c == '\r')) {
            if (!current.empty())
                tokens.push_back({std::move(current)});
            current.clear();
            continue;
        }
        current += c;
    }
    if (!current.empty())
        tokens.push_back({std::move(current)});
    return tokens;
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
    std::string error;
    auto cpus = core::parse_cpu_list(rest, error);
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

MergedCmdline merge_cmdline(const std::vector<CmdlineToken>& current,
                            const std::vector<CmdlineToken>& original,
                            const std::vector<KernelParam>& wanted,
                            const std::vector<std::string>& owned_keys) {
    MergedCmdline merged;
    merged.tokens = current;
    auto& tokens = merged.tokens;
    auto wanted_param = [&](const std::string& key) -> const KernelParam* {
        for (const KernelParam& p : wanted)
            if (p.key == key)
                return &p;
        return nullptr;
    };

    for (const std::string& key : owned_keys) {
        const KernelParam* param = wanted_param(key);
        for (const CmdlineToken& token : original)
            if (token.key() == key) {
                bool differs =
                    !param || (param->flag ? token.text != param->token()
                                           : !token.value() ||
                                                 !same_value(key, *token.value(), param->value));
                if (param && differs)
                    merged.foreign.push_back({key, token.text, param->token()});
            }
        auto first = std::find_if(tokens.begin(), tokens.end(),
                                  [&](const CmdlineToken& t) { return t.key() == key; });
        if (param) {
            if (first != tokens.end()) {
                first->text = param->token();
                tokens.erase(std::remove_if(first + 1, tokens.end(),
                                            [&](const CmdlineToken& t) { return t.key() == key; }),
                             tokens.end());
            } else {
                auto run = std::find_if(tokens.begin(), tokens.end(), [](const CmdlineToken& t) {
                    return t.key().rfind("systemd.run", 0) == 0;
                });
                tokens.insert(run, CmdlineToken{param->token()});
            }
            continue;
        }
        // Not wanted: put back what was there before rtprov, where rtprov's token is.
        std::vector<CmdlineToken> before;
        for (const CmdlineToken& token : original)
            if (token.key() == key)
                before.push_back(token);
        if (first == tokens.end()) {
            if (!before.empty()) {
                auto run = std::find_if(tokens.begin(), tokens.end(), [](const CmdlineToken& t) {
                    return t.key().rfind("systemd.run", 0) == 0;
                });
                tokens.insert(run, before.begin(), before.end());
            }
            continue;
        }
        std::size_t at = std::size_t(first - tokens.begin());
        tokens.erase(std::remove_if(tokens.begin(), tokens.end(),
                                    [&](const CmdlineToken& t) { return t.key() == key; }),
                     tokens.end());
        tokens.insert(tokens.begin() + std::ptrdiff_t(std::min(at, tokens.size())), before.begin(),
                      before.end());
    }
    return merged;
}

} // namespace rtprov::boot
