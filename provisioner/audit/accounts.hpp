// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/audit/expectation.hpp"
#include "provisioner/audit/system_view.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

// The accounts of the running system (/etc/passwd, /etc/group) and who among them runs
// the audio, for the checks of what that user may do: rt-priority, audio-group-limits,
// cpu-dma-latency (user_checks) and the music folders (filesystem_checks).
namespace rtprov::audit {

// A line of /etc/passwd (passwd(5)).
struct PasswdEntry {
    std::string name;
    unsigned uid = 0;
    unsigned gid = 0;
    std::string home;
    std::string shell;
};

// A line of /etc/group (group(5)).
struct GroupEntry {
    std::string name;
    unsigned gid = 0;
    std::vector<std::string> members; // its fourth field: the users it is a supplementary group of
};

// Lines with too few fields or a uid or gid that is not a number are left out. Pure.
std::vector<PasswdEntry> parse_passwd(const std::string& text);
std::vector<GroupEntry> parse_group(const std::string& text);

// How many users a reason or a fix names one by one; the rest are counted ('and 3 more'):
// /etc/group may list thousands, and what the audit says stays short.
inline constexpr std::size_t k_named_users = 8;

// How many users who log in the audit judges one by one: more (an /etc/group that is not
// this system's, or a directory service's copy) are not judged, and the checks say so.
inline constexpr std::size_t k_most_judged_users = 1000;

// "'alice', 'bob'", or "'alice', ..., 'henry' and 3 more": each name quoted on one line.
std::string user_names(const std::vector<std::string>& names);

// An account with a shell to log in with: not empty, not nologin(8) or false(1). Only
// such an account opens a PAM session, in which pam_limits sets its limits.
bool can_log_in(const PasswdEntry& user);

// The users login.defs(5) counts as regular ones (Debian's UID_MIN 1000 and UID_MAX
// 60000) who can log in.
bool is_regular_user(const PasswdEntry& user);

// The members of group audio who can log in: listed in /etc/group's line, or with it as
// their primary group in /etc/passwd; a listed name /etc/passwd lacks is kept. 'left_out',
// when given, gets the members without a login shell (service accounts such as 'mpd').
std::vector<std::string> audio_group_logins(const std::vector<GroupEntry>& groups,
                                            const std::vector<PasswdEntry>& users,
                                            std::vector<std::string>* left_out = nullptr);

// A user who runs the audio.
struct AudioUser {
    std::string name;                      // 'mpd', 'alice'; the number when /etc/passwd lacks it
    std::optional<unsigned> uid;           // nullopt when not known
    std::vector<std::string> groups;       // its primary group and the groups listing it
    std::vector<unsigned> gids;            // the same as numbers, where known
    std::string how;                       // how it was found, for the reasons
    std::vector<const Process*> processes; // its running processes (a service: the unit's)
};

// A service of the applied profile and the user it runs as.
struct AudioService {
    const ServiceExpectation* service = nullptr;
    AudioUser user; // 'how': "runs mpd.service (pid 812)", "User= of mpd.service", ...
};

// Who runs the audio, as the audit judges it (docs/rtprov.1, audit):
// - the applied profile's services, each as the user its running processes have, else
//   its unit's User=, else root;
// - who logs in to run audio (desktop audio, a DAW): the members of group audio who can
//   log in (audio_group_logins); with none and no profile service, the regular users of
//   /etc/passwd instead;
// 'judged' says which of these was taken, in words; 'problem' why the accounts could
// not be read ("" when they could); 'unjudged' why the users who log in were not judged
// (more than k_most_judged_users of them; then 'logins' is empty). Pure.
struct AudioUsers {
    std::vector<AudioService> services;
    std::vector<AudioUser> logins;
    std::string judged;
    std::string problem;
    std::string unjudged;
    // The groups of /etc/group and the accounts of /etc/passwd, as read.
    std::vector<GroupEntry> group_file;
    std::vector<PasswdEntry> passwd_file;
};
AudioUsers audio_users(const SystemView& view, const Expectation* expectation);

} // namespace rtprov::audit
