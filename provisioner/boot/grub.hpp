#pragma once

#include "provisioner/boot/cmdline.hpp"

#include <optional>
#include <string>
#include <vector>

// Debian's GRUB: rtprov's drop-in in /etc/default/grub.d/ (Debian's default_grub_d.patch).
namespace rtprov::boot {

// grub-mkconfig sources /etc/default/grub, then /etc/default/grub.d/*.cfg in order; a
// late name lets rtprov's parameters follow other drop-ins' assignments.
inline constexpr const char* k_grub_dropin_dir = "/etc/default/grub.d";
inline constexpr const char* k_grub_dropin = "/etc/default/grub.d/90-rtprov.cfg";
inline constexpr const char* k_grub_defaults = "/etc/default/grub";

// The drop-in: removes the keys of 'params' from GRUB_CMDLINE_LINUX_DEFAULT and appends
// 'params', so normal entries carry them and recovery entries (GRUB_CMDLINE_LINUX only)
// stay plain; with 'rt_flavour' ('rt-amd64'), GRUB_TOP_LEVEL names the newest
// /boot/vmlinuz-*-<rt_flavour>, computed at each update-grub, so the RT kernel is the
// default entry (Debian has no GRUB_FLAVOUR_ORDER). Valid POSIX sh ('sh -n').
std::string render_grub_dropin(const std::string& profile_name,
                               const std::vector<KernelParam>& params,
                               const std::optional<std::string>& rt_flavour);

// One assignment 'NAME=...' found in a shell defaults file such as /etc/default/grub.
struct ShellAssignment {
    unsigned line = 0;    // 1-based
    std::string value;    // the word with its quotes removed; $NAME and ${NAME} of the same
                          // variable (an append) left out
    bool opaque = false;  // the value holds what only running the shell can tell: command
                          // substitution, another variable, an expansion with operators
    bool appends = false; // it keeps the variable's value ('$NAME ...')
};

// Every assignment to NAME in 'text', in order, in the forms a hand writes them: at the
// start of a line, after 'export', ';', '&&', '||', 'then' or 'do', with a trailing
// comment, over quoted and unquoted stretches. rtprov never runs the target's shell, so
// what it cannot read is marked opaque rather than guessed.
std::vector<ShellAssignment> shell_assignments(const std::string& text, const std::string& name);

} // namespace rtprov::boot
