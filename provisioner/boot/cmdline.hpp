// SPDX-License-Identifier: Apache-2.0
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

    // The parameter's name as the kernel matches it: 'isolcpus' for 'isolcpus=...', the
    // whole text for a flag such as 'quiet'; a quote the kernel strips is left out
    // ('"isolcpus=1"' is isolcpus), and '-' reads as '_' (kernel/params.c parameq).
    std::string key() const;
    // The part after the first '=' without the quotes the kernel strips (lib/cmdline.c
    // next_arg), nullopt for a flag.
    std::optional<std::string> value() const;
    // A bare '--', quoted or not: the kernel hands what follows to init (kernel/params.c
    // parse_args; lib/cmdline.c next_arg strips the quotes of '"--"' first).
    bool ends_parameters() const { return text == "--" || text == "\"--\""; }
};

// Splits a command line at whitespace as the kernel's isspace() sees it (space, tab, CR,
// newlines, \v, \f, 0xa0), keeping double-quoted stretches ('opt="a b"') in one token,
// as the kernel does.
std::vector<CmdlineToken> parse_cmdline(std::string_view text);

// Which part of a file is the command line. The Raspberry Pi firmware reads the first
// line of cmdline.txt ("Do not use newlines", Raspberry Pi documentation,
// configuration/kernel-command-line-config.adoc); kernel-install reads all of
// /etc/kernel/cmdline, lines joined.
enum class CmdlineScope { first_line, whole_text };

// A command-line file as text: its tokens and the exact bytes between them, so that an
// edit changes the tokens it means and keeps every other byte (spacing, a CR, a missing
// final newline, lines the firmware does not read).
struct CmdlineText {
    std::vector<CmdlineToken> tokens;
    // separators[i] comes before tokens[i]; the last one follows the last token (with the
    // first line's newline): always tokens.size() + 1 of them.
    std::vector<std::string> separators = {""};
    std::string rest; // first_line: everything after the first line, kept as it is
    // An odd number of '"': the kernel reads everything after the last one as one quoted
    // value (lib/cmdline.c next_arg), so nothing can be added after it.
    bool unclosed_quote = false;
};

CmdlineText parse_cmdline_text(std::string_view text, CmdlineScope scope);

// The text back: parse_cmdline_text() then render() gives the input byte for byte.
std::string render(const CmdlineText& text);

// Tokens joined by single spaces (for messages and GRUB's variables).
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
    CmdlineText text;
    std::vector<ForeignValue> foreign;
};

// Merges 'wanted' into 'current', changing only tokens of 'owned_keys'. 'owned_keys' are every key
// rtprov may set; 'original' is the command line before rtprov's first change (the same as
// 'current' when rtprov has not changed it). For each owned key:
// - wanted: its first token in 'current' is replaced in place, later duplicates are
//   dropped with the space before them; a missing key is inserted before the first
//   'systemd.run' token (Raspberry Pi Imager's first-run script deletes everything
//   after that), else after the last token;
// - not wanted: the original's tokens for it come back (rtprov's are removed).
// Every other token, and every byte between, stays as it is. 'foreign' lists the
// original's values for wanted keys that differ from rtprov's (CPU lists compared
// normalised). With no 'wanted' this is rollback's edit: rtprov's part out, the
// originals of its keys back, everyone else's edits since kept. 'current' must not have
// an unclosed quote (plan refuses such a file): a token added after it would be quoted.
MergedCmdline merge_cmdline(const CmdlineText& current, const std::vector<CmdlineToken>& original,
                            const std::vector<KernelParam>& wanted,
                            const std::vector<std::string>& owned_keys);

// The tokens of 'owned_keys' in 'text', in order: rtprov's part of a command line it
// edits, recorded at apply and compared later to tell its own part's drift from edits
// made by others.
std::vector<std::string> owned_part(const std::vector<CmdlineToken>& tokens,
                                    const std::vector<std::string>& owned_keys);

// What others changed in a command-line file since rtprov first edited it: the tokens
// not of 'owned_keys' that 'original' has and 'current' lacks ('removed'), and the other
// way round ('added').
struct ForeignEdits {
    std::vector<std::string> removed;
    std::vector<std::string> added;
    bool empty() const { return removed.empty() && added.empty(); }
};
ForeignEdits foreign_edits(const std::vector<CmdlineToken>& original,
                           const std::vector<CmdlineToken>& current,
                           const std::vector<std::string>& owned_keys);

// How the kernel settles a parameter given more than once, as seen booting Debian 13's
// 6.12 kernel: isolcpus= and nohz_full= set the housekeeping masks once, and a later one
// with another mask is rejected ("Housekeeping: nohz_full= must match isolcpus=",
// kernel/sched/isolation.c housekeeping_setup) and handed to init as unknown: the first
// counts. irqaffinity= (kernel/irq/irqdesc.c irq_affinity_setup) and rcu_nocbs=
// (kernel/rcu/tree_nocb.h rcu_nocb_setup) parse into their mask each time: the last
// counts, as for most parameters, whose __setup() handlers overwrite.
enum class RepeatRule { first_counts, last_counts };
RepeatRule repeat_rule(const std::string& key);

// nullopt when a kernel booted with 'tokens' has 'param' in effect; else why not:
// "'nohz_full=2-3' is missing", "'irqaffinity=0' instead of 'irqaffinity=0-1'", or
// "'isolcpus=managed_irq,domain,2-3' is rejected: the kernel keeps the first isolcpus=,
// 'isolcpus=1'". Plan, audit and first boot all judge a command line with it.
std::optional<std::string> not_in_effect(const std::vector<CmdlineToken>& tokens,
                                         const KernelParam& param);

// True when two values of 'key' mean the same: CPU lists and isolcpus flag lists are
// compared normalised ('3,2' equals '2-3'; 'domain,managed_irq,2-3' equals
// 'managed_irq,domain,2,3').
bool same_value(const std::string& key, const std::string& a, const std::string& b);

} // namespace rtprov::boot
