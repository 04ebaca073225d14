// Fuzz target: a kernel command line (boot::parse_cmdline), merged with the parameters a
// pi4-like profile wants (boot::merge_cmdline) and rendered. Input: the current command
// line, optionally a NUL byte and the original (before rtprov) one.
// Invariant: merging is idempotent, as 'a second apply changes nothing' needs: the
// rendered result, parsed and merged again, renders the same.
#include "provisioner/boot/cmdline.hpp"

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
    const std::string_view input(reinterpret_cast<const char*>(data), size);
    const std::size_t nul = input.find('\0');
    const std::string_view current = input.substr(0, nul);
    const std::string_view original =
        nul == std::string_view::npos ? current : input.substr(nul + 1);

    const auto current_tokens = rtprov::boot::parse_cmdline(current);
    const auto original_tokens = rtprov::boot::parse_cmdline(original);
    const auto merged =
        rtprov::boot::merge_cmdline(current_tokens, original_tokens, k_wanted, k_owned);
    const std::string rendered = rtprov::boot::render_cmdline(merged.tokens);

    const auto again = rtprov::boot::merge_cmdline(rtprov::boot::parse_cmdline(rendered),
                                                   original_tokens, k_wanted, k_owned);
    if (rtprov::boot::render_cmdline(again.tokens) != rendered)
        __builtin_trap();

    // Rolling back: nothing wanted any more.
    (void)rtprov::boot::render_cmdline(
        rtprov::boot::merge_cmdline(merged.tokens, original_tokens, {}, k_owned).tokens);
    return 0;
}
