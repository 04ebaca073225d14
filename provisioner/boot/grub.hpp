// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/boot/cmdline.hpp"

#include <cstddef>
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

// The trial: a script of grub-mkconfig's that adds the entry 'rtprov-trial' (the first
// entry 10_linux makes, with GRUB_TOP_LEVEL the newest /boot/vmlinuz-*-<rt_flavour> when
// given, and the parameters of the drop-in plus 'trial_params'), and GRUB's environment
// block, whose next_entry makes GRUB boot it once (grub-reboot(8); Debian's 00_header
// clears next_entry as it boots it, so any later boot is the default again).
inline constexpr const char* k_grub_trial_script = "/etc/grub.d/11_rtprov_trial";
inline constexpr const char* k_grub_trial_entry = "rtprov-trial";
inline constexpr const char* k_grub_env = "/boot/grub/grubenv";
inline constexpr const char* k_grub_env_signature = "# GRUB Environment Block\n";
inline constexpr std::size_t k_grub_env_size = 1024;

std::string render_grub_trial_script(const std::string& profile_name,
                                     const std::vector<KernelParam>& params,
                                     const std::optional<std::string>& rt_flavour,
                                     const std::vector<KernelParam>& trial_params);

// GRUB's environment block (grub-editenv(1)): 1024 bytes, a signature line, 'name=value'
// lines (a backslash escapes the next byte), '#' padding. 'valid' is false for anything
// else, which GRUB would not read either.
struct GrubEnv {
    bool valid = false;
    std::vector<std::pair<std::string, std::string>> entries; // name, value as written
    void set(const std::string& name, const std::string& value);
    void unset(const std::string& name);
    std::optional<std::string> get(const std::string& name) const;
};
GrubEnv parse_grub_env(const std::string& text);
// Rollback of a block a trial armed: 'original' (before rtprov) with the variables others
// set since kept (a grub-set-default's saved_entry), next_entry as it was before. Returns
// the block to write and, in 'kept', what others set ("" when it is 'original' itself);
// 'original' when either block is not one.
std::string grub_env_rolled_back(const std::string& original, const std::string& current,
                                 std::string& kept);
// The block with 'env's entries, padded to 1024 bytes; longer when they do not fit (the
// caller refuses that).
std::string render_grub_env(const GrubEnv& env);

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
