// SPDX-License-Identifier: Apache-2.0
#include "provisioner/audit/accounts.hpp"

#include "provisioner/core/error.hpp"
#include "provisioner/core/text.hpp"

#include <algorithm>
#include <charconv>

namespace rtprov::audit {

namespace {

std::optional<unsigned> id_number(const std::string& text) {
    unsigned value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size())
        return std::nullopt;
    return value;
}

std::vector<std::string> file_lines(const std::string& text) {
    std::vector<std::string> out;
    for (std::string line : core::split(text, '\n')) {
        if (!line.empty() && line.back() == '\r')
            line.pop_back();
        if (!line.empty() && line.front() != '#')
            out.push_back(std::move(line));
    }
    return out;
}

const PasswdEntry* by_name(const std::vector<PasswdEntry>& users, const std::string& name) {
    for (const PasswdEntry& u : users)
        if (u.name == name)
            return &u;
    return nullptr;
}

const PasswdEntry* by_uid(const std::vector<PasswdEntry>& users, unsigned uid) {
    for (const PasswdEntry& u : users)
        if (u.uid == uid)
            return &u;
    return nullptr;
}

// The user 'name' (or, without a name, 'uid') with the groups /etc/passwd and /etc/group
// give them.
AudioUser make_user(const AudioUsers& all, const std::string& name, std::optional<unsigned> uid,
                    std::string how) {
    AudioUser user;
    user.how = std::move(how);
    const PasswdEntry* entry = !name.empty() ? by_name(all.passwd_file, name)
                               : uid         ? by_uid(all.passwd_file, *uid)
                                             : nullptr;
    user.name = entry ? entry->name : !name.empty() ? name : uid ? std::to_string(*uid) : "?";
    user.uid = entry ? std::optional<unsigned>(entry->uid) : uid;
    if (!entry && user.name == "root")
        user.uid = 0;
    for (const GroupEntry& g : all.group_file) {
        const bool primary = entry && g.gid == entry->gid;
        if (primary ||
            std::find(g.members.begin(), g.members.end(), user.name) != g.members.end()) {
            user.groups.push_back(g.name);
            user.gids.push_back(g.gid);
        }
    }
    return user;
}

void add_processes(AudioUser& user, const SystemView& view) {
    if (!view.processes || !user.uid)
        return;
    for (const Process& p : *view.processes)
        if (!p.kernel_thread && p.uid == user.uid)
            user.processes.push_back(&p);
}

AudioService service_user(const AudioUsers& all, const SystemView& view,
                          const ServiceExpectation& s) {
    AudioService out;
    out.service = &s;
    std::vector<const Process*> running;
    if (view.processes)
        for (const Process& p : *view.processes)
            if (!p.kernel_thread && cgroup_in_unit(p.cgroup, s.unit))
                running.push_back(&p);
    const std::string unit = quoted(s.unit);
    for (const Process* p : running)
        if (p->uid) {
            out.user = make_user(all, "", p->uid,
                                 "runs " + unit + " (pid " + std::to_string(p->pid) + ")");
            out.user.processes = running;
            return out;
        }
    const auto file = view.units.find(s.unit);
    if (file != view.units.end() && file->second) {
        const auto& settings = file->second->service;
        if (auto user = settings.find("User"); user != settings.end()) {
            const std::optional<unsigned> uid = id_number(user->second.value);
            out.user = make_user(all, uid ? "" : user->second.value, uid,
                                 "User= of " + unit + " (" + user->second.where + ")");
        } else {
            out.user = make_user(all, "root", 0,
                                 unit + " sets no User=, so it starts as root (an app may "
                                        "change its user itself)");
        }
    } else {
        out.user.name = "?";
        out.user.how = unit + " is not running and its unit " +
                       (file == view.units.end() ? std::string("was not read")
                                                 : "cannot be read: " + file->second.problem);
    }
    out.user.processes = running;
    return out;
}

} // namespace

std::vector<PasswdEntry> parse_passwd(const std::string& text) {
    std::vector<PasswdEntry> out;
    for (const std::string& line : file_lines(text)) {
        std::vector<std::string> f = core::split(line, ':');
        if (f.size() < 7)
            continue;
        std::optional<unsigned> uid = id_number(f[2]), gid = id_number(f[3]);
        if (f[0].empty() || !uid || !gid)
            continue;
        out.push_back({f[0], *uid, *gid, f[5], f[6]});
    }
    return out;
}

std::vector<GroupEntry> parse_group(const std::string& text) {
    std::vector<GroupEntry> out;
    for (const std::string& line : file_lines(text)) {
        std::vector<std::string> f = core::split(line, ':');
        std::optional<unsigned> gid = f.size() >= 3 ? id_number(f[2]) : std::nullopt;
        if (f.size() != 4 || f[0].empty() || !gid)
            continue;
        GroupEntry g{f[0], *gid, {}};
        for (const std::string& member : core::split(f[3], ','))
            if (!member.empty())
                g.members.push_back(member);
        out.push_back(std::move(g));
    }
    return out;
}

bool can_log_in(const PasswdEntry& user) {
    return !user.shell.empty() && !user.shell.ends_with("/nologin") &&
           !user.shell.ends_with("/false");
}

bool is_regular_user(const PasswdEntry& user) {
    return user.uid >= 1000 && user.uid <= 60000 && can_log_in(user);
}

std::vector<std::string> audio_group_logins(const std::vector<GroupEntry>& groups,
                                            const std::vector<PasswdEntry>& users,
                                            std::vector<std::string>* left_out) {
    std::vector<std::string> members;
    for (const GroupEntry& g : groups) {
        if (g.name != "audio")
            continue;
        members = g.members;
        for (const PasswdEntry& u : users)
            if (u.gid == g.gid &&
                std::find(members.begin(), members.end(), u.name) == members.end())
                members.push_back(u.name);
    }
    std::vector<std::string> out;
    for (const std::string& name : members) {
        const PasswdEntry* entry = by_name(users, name);
        if (!entry || can_log_in(*entry))
            out.push_back(name);
        else if (left_out)
            left_out->push_back(name);
    }
    return out;
}

AudioUsers audio_users(const SystemView& view, const Expectation* e) {
    AudioUsers all;
    std::vector<std::string> problems;
    if (view.groups)
        all.group_file = parse_group(*view.groups);
    else
        problems.push_back(view.groups.problem);
    if (view.passwd)
        all.passwd_file = parse_passwd(*view.passwd);
    else
        problems.push_back(view.passwd.problem);
    all.problem = core::join(problems, "; ");

    if (e)
        for (const ServiceExpectation& s : e->services)
            all.services.push_back(service_user(all, view, s));

    std::vector<std::string> left_out;
    const std::vector<std::string> members =
        audio_group_logins(all.group_file, all.passwd_file, &left_out);
    for (const std::string& name : members)
        all.logins.push_back(make_user(all, name, std::nullopt, "a member of group audio"));
    const std::string without = left_out.empty() ? ""
                                                 : " (" + core::quoted_list(left_out) +
                                                       (left_out.size() == 1 ? " has" : " have") +
                                                       " no login shell: a service's account)";
    const std::string no_member = left_out.empty()
                                      ? "group audio has no member"
                                      : "group audio has no member who can log in" + without;
    if (!members.empty()) {
        all.judged = (left_out.empty() ? "the members of group audio"
                                       : "the members of group audio who can log in") +
                     without;
    } else if (!all.services.empty()) {
        all.judged = no_member + ", and the audio runs as the profile's services";
    } else {
        for (const PasswdEntry& u : all.passwd_file)
            if (is_regular_user(u))
                all.logins.push_back(
                    make_user(all, u.name, std::nullopt,
                              "a regular user (uid " + std::to_string(u.uid) + ")"));
        const std::string regular = "the regular users of /etc/passwd (uid 1000-60000 with a "
                                    "login shell)";
        all.judged = all.logins.empty()
                         ? no_member + " and /etc/passwd no regular user (uid 1000-60000 "
                                       "with a login shell)"
                         : no_member + ", so " + regular;
    }
    for (AudioUser& user : all.logins)
        add_processes(user, view);
    return all;
}

} // namespace rtprov::audit
