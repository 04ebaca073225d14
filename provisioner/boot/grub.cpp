#include "provisioner/boot/grub.hpp"

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
    std::string out = "# Written by rtprov from profile '" + profile_name +
                      "'. Do not edit; change the profile and run rtprov.\n"
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

std::optional<std::string> shell_assignment(const std::string& text, const std::string& name) {
    std::optional<std::string> value;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        auto start = line.find_first_not_of(" \t");
        if (start == std::string::npos || line.compare(start, name.size() + 1, name + "=") != 0)
            continue;
        std::string v = line.substr(start + name.size() + 1);
        while (!v.empty() && (v.back() == ' ' || v.back() == '\t' || v.back() == '\r'))
            v.pop_back();
        if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'') && v.back() == v.front())
            v = v.substr(1, v.size() - 2);
        value = v;
    }
    return value;
}

} // namespace rtprov::boot
