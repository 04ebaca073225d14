// SPDX-License-Identifier: Apache-2.0
#include "provisioner/audit/accounts.hpp"

#include "provisioner/core/error.hpp"
#include "provisioner/core/text.hpp"

#include <algorithm>
#include <charconv>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

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

// The accounts looked up by name, uid and group, each lookup in constant time: the files
// may hold many entries (read_system_view reads up to 1 MiB of each: a group may list
// hundreds of thousands), and the audit stays linear in them. The first entry of a name
// or uid counts, as getpwnam(3) finds it. Group membership is kept for the names
// /etc/passwd has and for 'others' (the names looked up that it may lack), not for every
// name a group lists.
class Accounts {
  public:
    Accounts(const std::vector<PasswdEntry>& users, const std::vector<GroupEntry>& groups,
             const std::unordered_set<std::string>& others)
        : m_groups(groups) {
        for (const PasswdEntry& u : users) {
            m_by_name.emplace(u.name, &u);
            m_by_uid.emplace(u.uid, &u);
        }
        for (std::size_t i = 0; i < groups.size(); ++i) {
            m_by_gid[groups[i].gid].push_back(i);
            for (const std::string& member : groups[i].members)
                if (m_by_name.count(member) || others.count(member))
                    m_member_of[member].push_back(i);
        }
    }

    const PasswdEntry* by_name(const std::string& name) const {
        const auto it = m_by_name.find(name);
        return it == m_by_name.end() ? nullptr : it->second;
    }
    const PasswdEntry* by_uid(unsigned uid) const {
        const auto it = m_by_uid.find(uid);
        return it == m_by_uid.end() ? nullptr : it->second;
    }
    // The groups of /etc/group 'name' is in: its primary group 'gid' (when known) and
    // those listing it, in the file's order.
    std::vector<const GroupEntry*> groups_of(const std::string& name,
                                             std::optional<unsigned> gid) const {
        std::vector<std::size_t> at;
        if (auto it = m_member_of.find(name); it != m_member_of.end())
            at = it->second;
        if (gid)
            if (auto it = m_by_gid.find(*gid); it != m_by_gid.end())
                at.insert(at.end(), it->second.begin(), it->second.end());
        std::sort(at.begin(), at.end());
        at.erase(std::unique(at.begin(), at.end()), at.end());
        std::vector<const GroupEntry*> out;
        for (std::size_t i : at)
            out.push_back(&m_groups[i]);
        return out;
    }

  private:
    const std::vector<GroupEntry>& m_groups;
    std::unordered_map<std::string, const PasswdEntry*> m_by_name;
    std::unordered_map<unsigned, const PasswdEntry*> m_by_uid;
    std::unordered_map<unsigned, std::vector<std::size_t>> m_by_gid;
    std::unordered_map<std::string, std::vector<std::size_t>> m_member_of;
};

// The user 'name' (or, without a name, 'uid') with the groups /etc/passwd and /etc/group
// give them.
AudioUser make_user(const Accounts& accounts, const std::string& name, std::optional<unsigned> uid,
                    std::string how) {
    AudioUser user;
    user.how = std::move(how);
    const PasswdEntry* entry = !name.empty() ? accounts.by_name(name)
                               : uid         ? accounts.by_uid(*uid)
                                             : nullptr;
    user.name = entry ? entry->name : !name.empty() ? name : uid ? std::to_string(*uid) : "?";
    user.uid = entry ? std::optional<unsigned>(entry->uid) : uid;
    if (!entry && user.name == "root")
        user.uid = 0;
    for (const GroupEntry* g : accounts.groups_of(
             user.name, entry ? std::optional<unsigned>(entry->gid) : std::nullopt)) {
        user.groups.push_back(g->name);
        user.gids.push_back(g->gid);
    }
    return user;
}

AudioService service_user(const Accounts& accounts, const SystemView& view,
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
            out.user = make_user(accounts, "", p->uid,
                                 "runs " + unit + " (pid " + std::to_string(p->pid) + ")");
            out.user.processes = running;
            return out;
        }
    const auto file = view.units.find(s.unit);
    if (file != view.units.end() && file->second) {
        const auto& settings = file->second->service;
        if (auto user = settings.find("User"); user != settings.end()) {
            const std::optional<unsigned> uid = id_number(user->second.value);
            out.user = make_user(accounts, uid ? "" : user->second.value, uid,
                                 "User= of " + unit + " (" + user->second.where + ")");
        } else {
            out.user = make_user(accounts, "root", 0,
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
        std::unordered_set<std::string> seen; // a name listed twice is one member
        for (const std::string& member : core::split(f[3], ','))
            if (!member.empty() && seen.insert(member).second)
                g.members.push_back(member);
        out.push_back(std::move(g));
    }
    return out;
}

std::string user_names(const std::vector<std::string>& names) {
    std::vector<std::string> shown;
    for (std::size_t i = 0; i < names.size() && i < k_named_users; ++i)
        shown.push_back(quoted(names[i]));
    return core::join(shown, ", ") +
           (names.size() > k_named_users
                ? " and " + std::to_string(names.size() - k_named_users) + " more"
                : std::string());
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
    // a second line of group audio replaces the first (a file that lists it twice is no
    // system's own)
    const GroupEntry* audio = nullptr;
    for (const GroupEntry& g : groups)
        if (g.name == "audio")
            audio = &g;
    if (!audio)
        return {};
    // Views of the names, no copies: the group may list hundreds of thousands.
    std::unordered_map<std::string_view, const PasswdEntry*> by_name;
    for (const PasswdEntry& u : users)
        by_name.emplace(u.name, &u);
    std::vector<std::string_view> listed(audio->members.begin(), audio->members.end());
    std::sort(listed.begin(), listed.end()); // parse_group lists each name once
    std::vector<std::string> out;
    auto add = [&](const std::string& name) {
        const auto found = by_name.find(name);
        if (found == by_name.end() || can_log_in(*found->second))
            out.push_back(name);
        else if (left_out)
            left_out->push_back(name);
    };
    for (const std::string& name : audio->members)
        add(name);
    // with group audio as their primary group, not listed in its line
    std::unordered_set<std::string_view> primary;
    for (const PasswdEntry& u : users)
        if (u.gid == audio->gid && !std::binary_search(listed.begin(), listed.end(), u.name) &&
            primary.insert(u.name).second)
            add(u.name);
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

    std::vector<std::string> left_out;
    const std::vector<std::string> members =
        audio_group_logins(all.group_file, all.passwd_file, &left_out);
    const std::string without = left_out.empty() ? ""
                                                 : " (" + user_names(left_out) +
                                                       (left_out.size() == 1 ? " has" : " have") +
                                                       " no login shell: a service's account)";
    const std::string no_member = left_out.empty()
                                      ? "group audio has no member"
                                      : "group audio has no member who can log in" + without;
    // Who logs in to run audio, by name.
    std::vector<std::string> logins;
    if (!members.empty()) {
        logins = members;
        all.judged = (left_out.empty() ? "the members of group audio"
                                       : "the members of group audio who can log in") +
                     without;
    } else if (e && !e->services.empty()) {
        all.judged = no_member + ", and the audio runs as the profile's services";
    } else {
        for (const PasswdEntry& u : all.passwd_file)
            if (is_regular_user(u))
                logins.push_back(u.name);
        const std::string regular = "the regular users of /etc/passwd (uid 1000-60000 with a "
                                    "login shell)";
        all.judged = logins.empty() ? no_member + " and /etc/passwd no regular user (uid "
                                                  "1000-60000 with a login shell)"
                                    : no_member + ", so " + regular;
    }
    if (logins.size() > k_most_judged_users) {
        all.unjudged = all.judged + " are " + std::to_string(logins.size()) + " users (" +
                       user_names(logins) + "), more than the " +
                       std::to_string(k_most_judged_users) +
                       " the audit judges one by one, so none of them was judged";
        logins.clear();
    }

    // The names looked up that /etc/passwd may lack: those who log in, the services' User=.
    std::unordered_set<std::string> others(logins.begin(), logins.end());
    if (e)
        for (const ServiceExpectation& s : e->services)
            if (auto file = view.units.find(s.unit); file != view.units.end() && file->second)
                if (auto user = file->second->service.find("User");
                    user != file->second->service.end())
                    others.insert(user->second.value);
    const Accounts accounts(all.passwd_file, all.group_file, others);
    if (e)
        for (const ServiceExpectation& s : e->services)
            all.services.push_back(service_user(accounts, view, s));
    for (const std::string& name : logins) {
        const PasswdEntry* entry = accounts.by_name(name);
        all.logins.push_back(
            make_user(accounts, name, std::nullopt,
                      !members.empty() ? std::string("a member of group audio")
                      : entry          ? "a regular user (uid " + std::to_string(entry->uid) + ")"
                                       : std::string("a regular user")));
    }
    if (view.processes && !all.logins.empty()) {
        std::unordered_map<unsigned, std::vector<const Process*>> by_uid;
        for (const Process& p : *view.processes)
            if (!p.kernel_thread && p.uid)
                by_uid[*p.uid].push_back(&p);
        for (AudioUser& user : all.logins)
            if (auto it = user.uid ? by_uid.find(*user.uid) : by_uid.end(); it != by_uid.end())
                user.processes = it->second;
    }
    return all;
}

} // namespace rtprov::audit
