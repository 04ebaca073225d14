// SPDX-License-Identifier: Apache-2.0
// Fuzz target: a command-line file (boot::parse_cmdline_text, first line and whole text),
// merged with the parameters a pi4-like profile wants (boot::merge_cmdline) and rendered.
// Input: the current file, optionally a NUL byte and the original (before rtprov) one.
// Invariants: parsing and rendering gives the input back byte for byte; merging is
// idempotent ('a second apply changes nothing'); undoing the merge (nothing wanted)
// on what apply wrote gives the current file back when it held none of rtprov's keys;
// and what others wrote stays: the tokens of keys rtprov does not own are the same
// before and after. A file with an unclosed quote is refused by plan (boot_plan.cpp),
// so such inputs are only parsed here.
#include "provisioner/boot/cmdline.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace {

using rtprov::boot::KernelParam;

const std::vector<KernelParam> k_wanted = {{"isolcpus", "managed_irq,domain,3", false},
                                           {"irqaffinity", "0-2", false},
                                           {"nohz_full", "3", false},
                                           {"threadirqs", "", true}};
const std::vector<std::string> k_owned = {"isolcpus", "irqaffinity", "nohz_full", "rcu_nocbs",
                                          "threadirqs"};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace rtprov::boot;
    const std::string_view input(reinterpret_cast<const char*>(data), size);
    const std::size_t nul = input.find('\0');
    const std::string_view current = input.substr(0, nul);
    const std::string_view original =
        nul == std::string_view::npos ? current : input.substr(nul + 1);

    for (CmdlineScope scope : {CmdlineScope::first_line, CmdlineScope::whole_text}) {
        const CmdlineText text = parse_cmdline_text(current, scope);
        if (render(text) != current)
            __builtin_trap();
        // The original was the current file at the first apply, which plan refused if
        // it had an unclosed quote.
        const CmdlineText before = parse_cmdline_text(original, scope);
        if (text.unclosed_quote || before.unclosed_quote)
            continue;
        const auto& original_tokens = before.tokens;
        const auto merged = merge_cmdline(text, original_tokens, k_wanted, k_owned);
        const std::string rendered = render(merged.text);
        const auto again =
            merge_cmdline(parse_cmdline_text(rendered, scope), original_tokens, k_wanted, k_owned);
        if (render(again.text) != rendered)
            __builtin_trap();
        // Others' tokens are never touched.
        const auto others = [](const std::vector<CmdlineToken>& tokens) {
            std::vector<std::string> out;
            for (const CmdlineToken& t : tokens)
                if (std::find(k_owned.begin(), k_owned.end(), t.key()) == k_owned.end())
                    out.push_back(t.text);
            return out;
        };
        if (others(merged.text.tokens) != others(text.tokens))
            __builtin_trap();
        // Rolling back what apply wrote to a file without rtprov's keys gives it back.
        if (owned_part(text.tokens, k_owned).empty() && original == current &&
            render(merge_cmdline(merged.text, text.tokens, {}, k_owned).text) != current)
            __builtin_trap();
    }
    return 0;
}
