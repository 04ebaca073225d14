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

} // namespace

std::string render_grub_dropin(const std::string& profile_name,
                               const std::vector<KernelParam>& params,
                               const std::optional<std::string>& rt_flavour) {
    std::string out = core::owned_file_header(profile_name) +
                      "# Sourced by grub-mkconfig after /etc/default/grub. The parameters go to "
                      "the normal\n# entries only (GRUB_CMDLINE_LINUX_DEFAULT); recovery entries "
                      "stay plain.\n";
    if (!params.empty()) {
        // Only the keys rtprov sets now: a value of a key it no longer wants stays.
        std::string patterns;
        for (const KernelParam& p : params)
            patterns +=
                (patterns.empty() ? "" : "|") + sh_quote(p.key) + "|" + sh_quote(p.key + "=") + "*";
        std::string tokens;
        for (const KernelParam& p : params)
            tokens += (tokens.empty() ? "" : " ") + p.token();
        // The subshell keeps 'set -f' (no globbing of the words) away from grub-mkconfig.
        out += "rtprov_kept=$(set -f; for rtprov_word in $GRUB_CMDLINE_LINUX_DEFAULT; do\n"
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
    if (rt_flavour) {
        out += "# PREEMPT_RT: the newest " + *rt_flavour +
               " kernel is the default entry (GRUB_TOP_LEVEL, GRUB 2.12).\n"
               "rtprov_rt=$(ls -1 /boot/vmlinuz-*-" +
               sh_quote(*rt_flavour) +
               " 2>/dev/null | sort -V | tail -n 1)\n"
               "[ -z \"$rtprov_rt\" ] || GRUB_TOP_LEVEL=\"$rtprov_rt\"\n"
               "unset rtprov_rt\n";
    }
    return out;
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
