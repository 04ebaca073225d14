#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

// The kernel command line as tokens: what cmdline.txt, GRUB's GRUB_CMDLINE_LINUX_DEFAULT
// and /etc/kernel/cmdline hold. Tokens that are not rtprov's are kept byte for byte.
namespace rtprov::boot {

struct CmdlineToken {
    std::string text; // as written, e.g. 'isolcpus=managed_irq,domain,3' or 'quiet'

    // 'isolcpus' for 'isolcpus=...', the whole text for a flag such as 'quiet'.
    std::string key() const;
    // The part after the first '=', nullopt for a flag.
    std::optional<std::string> value() const;
};

// Splits a command line at whitespace (spaces, tabs, newlines), keeping double-quoted
// stretches ('opt="a b"') in one token, as the kernel does.
std::vector<CmdlineToken> parse_cmdline(std::string_view text);

// Tokens joined by single spaces.
std::string render_cmdline(const std::vector<CmdlineToken>& tokens);

// One parameter rtprov wants: 'isolcpus' = 'managed_irq,domain,3'.
struct KernelParam {
    std::string key;
    std::string value;
    bool flag = false; // a bare word such as 'threadirqs', no '='
    std::string token() const { return flag ? key : key + "=" + value; }
    friend bool operator==(const KernelParam&, const KernelParam&) = default;
};

// A value that was on the command line before rtprov, for a key rtprov sets.
struct ForeignValue {
    std::string key;
    std::string foreign; // the whole token, e.g. 'isolcpus=1'
    std::string ours;    // the token rtprov writes instead
};

struct MergedCmdline {
    std::vector<CmdlineToken> tokens;
    std::vector<ForeignValue> foreign;
};

// Merges 'wanted' into 'current'. 'owned_keys' are every key rtprov may set; 'original'
// is the command line before rtprov's first change (the same as 'current' when rtprov
// has not changed it). For each owned key:
// - wanted: its first token in 'current' is replaced in place, later duplicates are
//   dropped; a missing key is inserted before the first 'systemd.run' token (Raspberry
//   Pi Imager's first-run script deletes everything after that), else at the end;
// - not wanted: the original's tokens for it come back (rtprov's are removed).
// Every other token stays as it is, in its place. 'foreign' lists the original's values
// for wanted keys that differ from rtprov's (CPU lists compared normalised).
MergedCmdline merge_cmdline(const std::vector<CmdlineToken>& current,
                            const std::vector<CmdlineToken>& original,
                            const std::vector<KernelParam>& wanted,
                            const std::vector<std::string>& owned_keys);

// True when two values of 'key' mean the same: CPU lists and isolcpus flag lists are
// compared normalised ('3,2' equals '2-3'; 'domain,managed_irq,2-3' equals
// 'managed_irq,domain,2,3').
bool same_value(const std::string& key, const std::string& a, const std::string& b);

} // namespace rtprov::boot
