// SPDX-License-Identifier: Apache-2.0
#include "provisioner/boot/grub.hpp"

#include "provisioner/core/plan.hpp"

#include <algorithm>
#include <cctype>
#include <sstream>

namespace rtprov::boot {

namespace {

// 'text' as one word of POSIX sh, taken literally: in single quotes, each ' written '\''.
// The values follow core::grammar::kernel_parameter already; the quoting is the second
// wall, because update-grub sources this file as root.
std::string sh_quote(const std::string& text) {
    std::string out = "'";
    for (char c : text)
        out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

// Shell text that takes the keys of 'params' out of GRUB_CMDLINE_LINUX_DEFAULT and
// appends 'params' (nothing when there are none).
std::string cmdline_assignment(const std::vector<KernelParam>& params) {
    if (params.empty())
        return "";
    // Only the keys rtprov sets now: a value of a key it no longer wants stays.
    std::string patterns;
    for (const KernelParam& p : params)
        patterns +=
            (patterns.empty() ? "" : "|") + sh_quote(p.key) + "|" + sh_quote(p.key + "=") + "*";
    std::string tokens;
    for (const KernelParam& p : params)
        tokens += (tokens.empty() ? "" : " ") + p.token();
    // The subshell keeps 'set -f' (no globbing of the words) away from grub-mkconfig.
    return "rtprov_kept=$(set -f; for rtprov_word in $GRUB_CMDLINE_LINUX_DEFAULT; do\n"
           "\tcase \"$rtprov_word\" in\n"
           "\t" +
           patterns +
           ") ;;\n"
           "\t*) printf ' %s' \"$rtprov_word\" ;;\n"
           "\tesac\n"
           "done)\n"
           "rtprov_kept=\"${rtprov_kept# }\"\n"
           "GRUB_CMDLINE_LINUX_DEFAULT=\"${rtprov_kept:+$rtprov_kept }\"" +
           sh_quote(tokens) +
           "\n"
           "unset rtprov_kept\n";
}

// Shell text that sets 'variable' to the newest /boot/vmlinuz-*-<flavour>, if any.
std::string newest_kernel(const std::string& variable, const std::string& flavour) {
    return "rtprov_rt=$(ls -1 /boot/vmlinuz-*-" + sh_quote(flavour) +
           " 2>/dev/null | sort -V | tail -n 1)\n"
           "[ -z \"$rtprov_rt\" ] || " +
           variable + "=\"$rtprov_rt\"\n";
}

} // namespace

std::string render_grub_dropin(const std::string& profile_name,
                               const std::vector<KernelParam>& params,
                               const std::optional<std::string>& rt_flavour) {
    std::string out = core::owned_file_header(profile_name) +
                      "# Sourced by grub-mkconfig after /etc/default/grub. The parameters go to "
                      "the normal\n# entries only (GRUB_CMDLINE_LINUX_DEFAULT); recovery entries "
                      "stay plain.\n";
    out += cmdline_assignment(params);
    if (rt_flavour)
        out += "# PREEMPT_RT: the newest " + *rt_flavour +
               " kernel is the default entry (GRUB_TOP_LEVEL, GRUB 2.12).\n" +
               newest_kernel("GRUB_TOP_LEVEL", *rt_flavour) + "unset rtprov_rt\n";
    return out;
}

std::string render_grub_trial_script(const std::string& profile_name,
                                     const std::vector<KernelParam>& params,
                                     const std::optional<std::string>& rt_flavour,
                                     const std::vector<KernelParam>& trial_params) {
    std::string out = "#!/bin/sh\n" + core::owned_file_header(profile_name) +
                      "# Run by grub-mkconfig: the menu entry '" + std::string(k_grub_trial_entry) +
                      "', which GRUB boots once when its environment\n"
                      "# block says next_entry=" +
                      k_grub_trial_entry +
                      " (grub-reboot(8)); every other entry stays as it was. It is\n"
                      "# the first entry 10_linux makes, with the trial's kernel and "
                      "parameters.\n"
                      "set -e\n"
                      "[ -x /etc/grub.d/10_linux ] || exit 0\n";
    out += cmdline_assignment(params);
    std::string marker;
    for (const KernelParam& p : trial_params)
        marker += (marker.empty() ? "" : " ") + p.token();
    out += "GRUB_CMDLINE_LINUX_DEFAULT=\"${GRUB_CMDLINE_LINUX_DEFAULT:+$GRUB_CMDLINE_LINUX_DEFAULT "
           "}\"" +
           sh_quote(marker) + "\n";
    if (rt_flavour)
        out += "rtprov_top=\n" + newest_kernel("rtprov_top", *rt_flavour) +
               "if [ -z \"$rtprov_top\" ]; then\n"
               "\techo \"rtprov: no /boot/vmlinuz-*-\"" +
               sh_quote(*rt_flavour) +
               "\" kernel: no trial entry\" >&2\n"
               "\texit 0\n"
               "fi\n"
               "GRUB_TOP_LEVEL=\"$rtprov_top\"\n";
    out += "GRUB_DISABLE_RECOVERY=true\n"
           "export GRUB_CMDLINE_LINUX_DEFAULT GRUB_TOP_LEVEL GRUB_DISABLE_RECOVERY\n"
           "/etc/grub.d/10_linux | awk -v q=\"'\" -v id=" +
           sh_quote(k_grub_trial_entry) +
           " -v title=" + sh_quote("rtprov trial of profile " + profile_name) +
           " '\n"
           "!started && /^menuentry / {\n"
           "\tstarted = 1\n"
           "\trest = substr($0, 12)\n"
           "\trest = substr(rest, index(rest, q) + 1)\n"
           "\t$0 = \"menuentry \" q title q rest\n"
           "\topt = \"$menuentry_id_option \" q\n"
           "\tat = index($0, opt)\n"
           "\tif (at) {\n"
           "\t\thead = substr($0, 1, at + length(opt) - 1)\n"
           "\t\ttail = substr($0, at + length(opt))\n"
           "\t\t$0 = head id substr(tail, index(tail, q))\n"
           "\t}\n"
           "}\n"
           "started { print }\n"
           "started && /^}/ { exit }'\n";
    return out;
}

GrubEnv parse_grub_env(const std::string& text) {
    GrubEnv env;
    const std::string signature = k_grub_env_signature;
    if (text.size() != k_grub_env_size || text.compare(0, signature.size(), signature) != 0)
        return env;
    env.valid = true;
    // Lines 'name=value'; a backslash escapes the next byte, a newline included
    // (grub-core/lib/envblk.c). '#' lines are comments and the padding.
    std::size_t at = signature.size();
    while (at < text.size()) {
        std::size_t end = at;
        while (end < text.size() && text[end] != '\n')
            end += text[end] == '\\' ? 2 : 1;
        std::string line = text.substr(at, std::min(end, text.size()) - at);
        at = end + 1;
        if (line.empty() || line[0] == '#')
            continue;
        std::size_t eq = line.find('=');
        if (eq == std::string::npos || eq == 0)
            continue;
        env.entries.emplace_back(line.substr(0, eq), line.substr(eq + 1));
    }
    return env;
}

std::string render_grub_env(const GrubEnv& env) {
    std::string out = k_grub_env_signature;
    for (const auto& [name, raw] : env.entries)
        out += name + "=" + raw + "\n";
    if (out.size() < k_grub_env_size)
        out.append(k_grub_env_size - out.size(), '#');
    return out;
}

void GrubEnv::set(const std::string& name, const std::string& value) {
    std::string raw;
    for (char c : value) {
        if (c == '\\' || c == '\n')
            raw += '\\';
        raw += c;
    }
    for (auto& [n, r] : entries)
        if (n == name) {
            r = raw;
            return;
        }
    entries.emplace_back(name, raw);
}

std::string grub_env_rolled_back(const std::string& original, const std::string& current,
                                 std::string& kept) {
    kept.clear();
    GrubEnv before = parse_grub_env(original), now = parse_grub_env(current);
    if (!before.valid || !now.valid)
        return original;
    // In place, where it stands: a block whose next_entry came first stays so.
    if (auto value = before.get("next_entry"))
        now.set("next_entry", *value);
    else
        now.unset("next_entry");
    if (now.entries == before.entries)
        return original;
    std::string block = render_grub_env(now);
    if (block.size() != k_grub_env_size)
        return original;
    for (const auto& entry : now.entries)
        if (std::find(before.entries.begin(), before.entries.end(), entry) == before.entries.end())
            kept += (kept.empty() ? "kept " : ", ") + entry.first + "=" + entry.second;
    if (kept.empty())
        kept = "kept the variables others removed since out";
    return block;
}

void GrubEnv::unset(const std::string& name) {
    std::erase_if(entries, [&](const auto& e) { return e.first == name; });
}

std::optional<std::string> GrubEnv::get(const std::string& name) const {
    for (const auto& [n, raw] : entries)
        if (n == name) {
            std::string value;
            for (std::size_t i = 0; i < raw.size(); ++i)
                value += raw[i] == '\\' && i + 1 < raw.size() ? raw[++i] : raw[i];
            return value;
        }
    return std::nullopt;
}

namespace {

bool word_boundary(char c) {
    return c == ' ' || c == '\t' || c == ';' || c == '&' || c == '|' || c == '(' || c == ')' ||
           c == '{' || c == '}' || c == '\n';
}

// Reads the shell word at 'text[at]' (after 'NAME='), appending its text to 'out'; a
// reference to 'name' itself is dropped (an append), anything else only the shell can
// expand sets 'opaque'. Returns where the word ends.
std::size_t read_word(const std::string& text, std::size_t at, const std::string& name,
                      std::string& out, bool& opaque, bool& appends) {
    auto self_reference = [&](std::size_t dollar) -> std::size_t {
        // '$NAME' or '${NAME}' (not '${NAME:+...}' and the like): its length, else 0.
        if (text.compare(dollar, name.size() + 1, "$" + name) == 0) {
            std::size_t after = dollar + 1 + name.size();
            if (after >= text.size() ||
                !(std::isalnum(static_cast<unsigned char>(text[after])) || text[after] == '_'))
                return name.size() + 1;
        }
        if (text.compare(dollar, name.size() + 3, "${" + name + "}") == 0)
            return name.size() + 3;
        return 0;
    };
    char quote = 0;
    std::size_t i = at;
    for (; i < text.size(); ++i) {
        char c = text[i];
        if (!quote && (word_boundary(c) || c == '#'))
            break;
        if (quote == '\'') {
            if (c == '\'')
                quote = 0;
            else
                out += c;
            continue;
        }
        if (c == '\'' && !quote) {
            quote = '\'';
            continue;
        }
        if (c == '"') {
            quote = quote ? 0 : '"';
            continue;
        }
        if (c == '\\' && i + 1 < text.size()) {
            out += text[++i];
            continue;
        }
        if (c == '$') {
            if (std::size_t skip = self_reference(i)) {
                i += skip - 1;
                appends = true;
                continue;
            }
            opaque = true;
        }
        if (c == '`')
            opaque = true;
        out += c;
    }
    if (quote)
        opaque = true; // a quote that goes on past the line: beyond this reading
    return i;
}

} // namespace

std::vector<ShellAssignment> shell_assignments(const std::string& text, const std::string& name) {
    std::vector<ShellAssignment> found;
    const std::string needle = name + "=";
    for (std::size_t at = text.find(needle); at != std::string::npos;
         at = text.find(needle, at + 1)) {
        // The name must be a whole word at a command's start: preceded by a boundary,
        // optionally by 'export ' (and 'then', 'do' end in a space, a boundary).
        std::size_t start = at;
        if (start >= 7 && text.compare(start - 7, 7, "export ") == 0)
            start -= 7;
        bool command_start = true;
        for (std::size_t k = start; k-- > 0;) {
            char c = text[k];
            if (c == ' ' || c == '\t')
                continue;
            command_start = word_boundary(c) || c == '\n' ||
                            (k >= 3 && text.compare(k - 3, 4, "then") == 0) ||
                            (k >= 1 && text.compare(k - 1, 2, "do") == 0) ||
                            (k >= 3 && text.compare(k - 3, 4, "else") == 0);
            break;
        }
        if (!command_start)
            continue;
        // Inside a comment: a '#' earlier on the line, outside quotes (roughly).
        std::size_t line_start = text.rfind('\n', at);
        line_start = line_start == std::string::npos ? 0 : line_start + 1;
        if (text.substr(line_start, at - line_start).find('#') != std::string::npos)
            continue;
        ShellAssignment assignment;
        assignment.line =
            unsigned(std::count(text.begin(), text.begin() + std::ptrdiff_t(at), '\n')) + 1;
        read_word(text, at + needle.size(), name, assignment.value, assignment.opaque,
                  assignment.appends);
        found.push_back(std::move(assignment));
    }
    return found;
}

} // namespace rtprov::boot
