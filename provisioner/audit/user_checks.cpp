// SPDX-License-Identifier: Apache-2.0
#include "provisioner/audit/user_checks.hpp"

#include "provisioner/core/error.hpp"
#include "provisioner/core/text.hpp"
#include "provisioner/systemd/units.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace rtprov::audit {

namespace {

std::string where(const LimitsRule& rule) {
    return quoted(rule.domain + " " + rule.type + " " + rule.item + " " + rule.value) + " (" +
           core::one_line(rule.file) + ":" + std::to_string(rule.line) + ")";
}

std::string lower(std::string text) {
    for (char& c : text)
        c = char(std::tolower(static_cast<unsigned char>(c)));
    return text;
}

// A limits.conf value as pam_limits reads it: -1 for unlimited, nullopt for one it drops.
std::optional<long long> limit_value(const std::string& text) {
    const std::string v = lower(text);
    if (v == "unlimited" || v == "infinity" || v == "-1")
        return -1;
    long long n = 0;
    auto [end, error] = std::from_chars(v.data(), v.data() + v.size(), n);
    if (error != std::errc() || end != v.data() + v.size() || n < 0)
        return std::nullopt;
    return n;
}

// The smaller of two limits (-1: unlimited).
long long smaller(long long a, long long b) {
    return a < 0 ? b : b < 0 ? a : std::min(a, b);
}

std::string shown(long long v) {
    return v < 0 ? std::string("unlimited") : std::to_string(v);
}

std::string rules_of(const EffectiveLimit& e) {
    std::vector<std::string> out;
    if (e.soft_rule)
        out.push_back(where(*e.soft_rule));
    if (e.hard_rule && e.hard_rule != e.soft_rule)
        out.push_back(where(*e.hard_rule));
    return out.empty() ? std::string("no rule (the kernel's default)") : core::join(out, " and ");
}

// Why a limit is 0: the rules, or that none sets it.
std::string zero_by(const EffectiveLimit& e) {
    return e.soft_rule || e.hard_rule ? rules_of(e) : "no limits.conf rule sets it";
}

bool in_group(const AudioUser& user, const std::string& group) {
    return std::find(user.groups.begin(), user.groups.end(), group) != user.groups.end();
}

std::vector<std::string> names(const std::vector<AudioUser>& users) {
    std::vector<std::string> out;
    for (const AudioUser& u : users)
        out.push_back(u.name);
    return out;
}

// "group audio has 'alice', 'bob'" or "the regular users 'carol'": who was judged.
std::string judged_users(const AudioUsers& users) {
    return users.judged + ": " + user_names(names(users.logins));
}

// The parts of a reason about users, one a user: the first k_named_users kept, the rest
// counted, so that a reason stays short however many users there are.
class UserParts {
  public:
    void add(std::string part) {
        if (m_parts.size() < k_named_users)
            m_parts.push_back(std::move(part));
        else
            ++m_more;
    }
    bool empty() const { return m_parts.empty(); }
    // "a; b; and 3 more users like these" ('what': "users like these")
    std::string text(const std::string& what) const {
        return core::join(m_parts, "; ") +
               (m_more ? "; and " + std::to_string(m_more) + " more " + what : "");
    }

  private:
    std::vector<std::string> m_parts;
    std::size_t m_more = 0;
};

// Users judged who are not in group audio, for a fix that first adds them to it.
std::vector<std::string> outside_audio(const std::vector<const AudioUser*>& users) {
    std::vector<std::string> out;
    for (const AudioUser* u : users)
        if (!in_group(*u, "audio"))
            out.push_back(u->name);
    return out;
}

// The commands are quoted as a shell reads them back (core::shell_command): a user name
// comes from /etc/group or /etc/passwd, and a fix is pasted into a root shell.
std::string add_to_audio(const std::vector<std::string>& users) {
    if (users.empty())
        return "";
    std::string commands;
    for (std::size_t i = 0; i < users.size() && i < k_named_users; ++i)
        commands += (commands.empty() ? "" : "; ") +
                    core::shell_command({"usermod", "-aG", "audio", users[i]});
    if (users.size() > k_named_users)
        commands +=
            "; the same for the " + std::to_string(users.size() - k_named_users) + " others";
    return "add " + user_names(users) + " to group audio (" + commands + "), then ";
}

const char* k_limits_fix =
    "let group audio run real-time and lock its memory, as JACK's documentation asks "
    "(https://jackaudio.org/faq/linux_rt_config.html): a file "
    "/etc/security/limits.d/95-audio.conf with '@audio - rtprio 95' and '@audio - memlock "
    "unlimited' (limits.conf(5)); its members log in again";

const char* k_nobody_fix =
    "add the user who runs the audio to group audio ('usermod -aG audio USER'), or apply a "
    "profile that names the player's service";

// Nobody who runs audio was found, or too many to judge: without a profile service, the
// checks of users have nothing to judge, and say so.
std::optional<Check> nobody(const Check& c, const AudioUsers& users) {
    if (!users.unjudged.empty())
        return warn(c, users.unjudged,
                    "check that /etc/group and /etc/passwd are this system's (with --sysroot: "
                    "copied whole), and rerun 'rtprov audit'");
    if (!users.logins.empty() || !users.services.empty())
        return std::nullopt;
    return warn(c, "no user who runs audio was found (" + users.judged + "), so nobody was judged",
                k_nobody_fix);
}

// The highest soft RLIMIT_RTPRIO among 'processes' (-1 unlimited), and whether one may set
// any priority (CAP_SYS_NICE); nullopt when none of their limits could be read.
struct RunningRtprio {
    long long soft = 0;
    bool cap_sys_nice = false;
    int pid = 0;
};
std::optional<RunningRtprio> running_rtprio(const std::vector<const Process*>& processes) {
    std::optional<RunningRtprio> out;
    for (const Process* p : processes) {
        if (p->cap_sys_nice)
            return RunningRtprio{-1, true, p->pid};
        if (!p->limits || !p->limits->rtprio)
            continue;
        const LimitValue& soft = p->limits->rtprio->soft;
        const long long v = soft.unlimited ? -1 : static_cast<long long>(soft.value);
        if (!out || smaller(out->soft, v) == out->soft)
            out = RunningRtprio{v, false, p->pid};
    }
    return out;
}

struct Verdict {
    Status status = Status::ok;
    std::string text;
    std::string fix;
};

// A service of the profile: systemd gives it its limit (pam_limits does not apply).
Verdict service_rt(const AudioService& s, const SystemView& view) {
    const ServiceExpectation& e = *s.service;
    const std::string unit = quoted(e.unit);
    const std::string as = " as " + quoted(s.user.name);
    // The app makes its threads real-time itself: without a limit it cannot, and they run
    // SCHED_OTHER (fail); another service may not need to (warn).
    const bool needs = e.app_sched.has_value();
    const Status cannot = needs ? Status::fail : Status::warn;
    const std::string consequence =
        needs ? ", so " + e.app_name + "'s " + e.app_threads + " cannot be real-time" : "";
    std::string fix;
    if (e.min_rtprio)
        fix = "restart " + unit +
              " so that it runs with the LimitRTPRIO=" + std::to_string(*e.min_rtprio) +
              " of rtprov's drop-in '" + systemd::dropin_path(e.unit) +
              "' (systemctl daemon-reload; " +
              core::shell_command({"systemctl", "restart", e.unit}) + "); if '" +
              core::shell_command({"systemctl", "show", "-p", "LimitRTPRIO", e.unit}) +
              "' still says 0, run 'rtprov apply'";
    else
        fix = "set tuning.services." + e.profile_key +
              ".limit_rtprio to the priority it needs, apply and restart " + unit;
    if (e.unit_sched && is_realtime(e.unit_sched->policy))
        return {Status::ok,
                unit + " is started at " + to_string(*e.unit_sched) +
                    " by systemd (CPUSchedulingPolicy=), which needs no limit",
                ""};
    if (!s.user.processes.empty()) {
        std::optional<RunningRtprio> r = running_rtprio(s.user.processes);
        if (!r)
            return {Status::warn,
                    unit + " runs, but its processes' limits (/proc/PID/limits) cannot be read",
                    "run 'rtprov audit' as root"};
        const std::string pid = "pid " + std::to_string(r->pid) + "," + as;
        if (r->cap_sys_nice)
            return {Status::ok,
                    unit + " may set any real-time priority: CAP_SYS_NICE (" + pid + ")", ""};
        if (r->soft != 0)
            return {Status::ok,
                    unit + " may set real-time priorities up to " + shown(r->soft) +
                        " (RLIMIT_RTPRIO of " + pid + ")",
                    ""};
        return {cannot,
                unit + " cannot set a real-time priority: RLIMIT_RTPRIO 0 and no CAP_SYS_NICE (" +
                    pid + ")" + consequence,
                fix};
    }
    const auto file = view.units.find(e.unit);
    if (file == view.units.end() || !file->second)
        return {Status::warn,
                unit + " is not running and its unit cannot be read" +
                    (file == view.units.end() ? std::string() : ": " + file->second.problem),
                "start " + unit + " and rerun 'rtprov audit'"};
    const auto& settings = file->second->service;
    if (auto limit = settings.find("LimitRTPRIO"); limit != settings.end()) {
        // systemd.exec(5): 'soft:hard' or one value for both; 'infinity' is no limit
        const std::string soft = limit->second.value.substr(0, limit->second.value.find(':'));
        if (soft != "0")
            return {Status::ok,
                    unit + " is not running; it will get LimitRTPRIO=" + limit->second.value +
                        " (" + limit->second.where + ")",
                    ""};
        return {cannot,
                unit + " is not running, and LimitRTPRIO=" + limit->second.value + " (" +
                    limit->second.where + ") lets it set no real-time priority" + consequence,
                fix};
    }
    if (s.user.name == "root")
        return {Status::warn,
                unit + " is not running and has no LimitRTPRIO=: it starts as root, which may "
                       "set any priority, but an app that then changes its user (MPD does, to "
                       "mpd.conf's 'user') is left the kernel's 0",
                fix};
    return {cannot,
            unit + " is not running, and its unit sets no LimitRTPRIO=, so it starts" + as +
                " with the kernel's 0 (DefaultLimitRTPRIO= in systemd-system.conf(5) aside)" +
                consequence,
            fix};
}

// A user who logs in: pam_limits sets the limit at login; RTKit grants real-time on request.
Verdict login_rt(const AudioUser& u, const SystemView& view) {
    const std::string who = quoted(u.name);
    if (u.uid == 0u)
        return {Status::ok, who + " is root, which may set any priority (CAP_SYS_NICE)", ""};
    if (!view.limits_rules)
        return {Status::warn, view.limits_rules.problem, "run 'rtprov audit' as root"};
    const EffectiveLimit rtprio =
        effective_limit(*view.limits_rules, u.name, u.groups, "rtprio", 0);
    const std::optional<RunningRtprio> running = running_rtprio(u.processes);
    if (rtprio.value() != 0) {
        if (running && !running->cap_sys_nice && running->soft == 0)
            return {Status::warn,
                    "limits.conf gives " + who + " rtprio " + shown(rtprio.value()) + " (" +
                        rules_of(rtprio) + "), but their running processes still have 0 (pid " +
                        std::to_string(running->pid) + "): they started before the rule",
                    who + " logs out and in again (or the machine reboots)"};
        return {Status::ok,
                who + " may set real-time priorities up to " + shown(rtprio.value()) + " (" +
                    rules_of(rtprio) + ")",
                ""};
    }
    if (running && (running->cap_sys_nice || running->soft != 0))
        return {Status::ok,
                who + " has no rtprio in limits.conf, but their process " +
                    std::to_string(running->pid) + " may set up to " + shown(running->soft) +
                    (running->cap_sys_nice ? " (CAP_SYS_NICE)" : " (RLIMIT_RTPRIO)"),
                ""};
    // rtkit-daemon(8): --max-realtime-priority defaults to 20
    if (view.rtkit)
        return {Status::warn,
                who + " has rtprio 0 (" + zero_by(rtprio) +
                    "), so only RTKit can make their threads real-time, at priority 20 or below "
                    "by default and only for threads that ask it",
                ""};
    return {Status::warn,
            who + " cannot set a real-time priority: rtprio 0 (" + zero_by(rtprio) +
                ") and no RTKit, so JACK or PipeWire run as them stay SCHED_OTHER",
            ""};
}

} // namespace

EffectiveLimit effective_limit(const std::vector<LimitsRule>& rules, const std::string& user,
                               const std::vector<std::string>& groups, const std::string& item,
                               long long kernel_default) {
    // pam_limits' sources, strongest first: the user, a group of theirs, '*' (the
    // others, uid and gid ranges and %group, are left out); a rule of a source at least as
    // strong as the one that set a limit replaces it (pam_limits.c, process_limit)
    constexpr int k_none = 9;
    EffectiveLimit e;
    e.soft = e.hard = kernel_default;
    int soft_source = k_none, hard_source = k_none;
    // 'item' is lower case; pam_limits reads the rule's in any case (no copy made here:
    // the audit asks this for each user and each of the files' rules)
    auto is_item = [&](const std::string& text) {
        return text.size() == item.size() &&
               std::equal(text.begin(), text.end(), item.begin(), [](char a, char b) {
                   return std::tolower(static_cast<unsigned char>(a)) == b;
               });
    };
    for (const LimitsRule& rule : rules) {
        if (!is_item(rule.item))
            continue;
        int source = k_none;
        if (rule.domain == user)
            source = 0;
        else if (rule.domain.size() > 1 && rule.domain[0] == '@' &&
                 std::find(groups.begin(), groups.end(), rule.domain.substr(1)) != groups.end())
            source = 1;
        else if (rule.domain == "*")
            source = 4;
        std::optional<long long> value = limit_value(rule.value);
        if (source == k_none || !value)
            continue;
        const std::string type = lower(rule.type);
        if ((type == "soft" || type == "-") && source <= soft_source) {
            e.soft = *value;
            e.soft_rule = &rule;
            soft_source = source;
        }
        if ((type == "hard" || type == "-") && source <= hard_source) {
            e.hard = *value;
            e.hard_rule = &rule;
            hard_source = source;
        }
    }
    return e;
}

long long EffectiveLimit::value() const {
    return smaller(soft, hard); // the soft limit cannot exceed the hard one
}

Check check_rt_priority(const SystemView& view, const AudioUsers& users) {
    Check c = make_check("rt-priority", "whether the audio can be made real-time");
    if (!users.problem.empty())
        return cannot_read(c, users.problem);
    if (auto none = nobody(c, users))
        return *none;
    std::vector<std::string> texts, fixes;
    auto add = [&](const Verdict& v) {
        c.status = worst(c.status, v.status);
        if (!v.fix.empty() && std::find(fixes.begin(), fixes.end(), v.fix) == fixes.end())
            fixes.push_back(v.fix);
    };
    for (const AudioService& s : users.services) {
        const Verdict v = service_rt(s, view);
        add(v);
        texts.push_back(v.text);
    }
    UserParts logins;
    std::vector<const AudioUser*> stuck; // users who log in and cannot
    for (const AudioUser& u : users.logins) {
        const Verdict v = login_rt(u, view);
        add(v);
        logins.add(v.text);
        if (v.status != Status::ok && v.fix.empty())
            stuck.push_back(&u);
    }
    if (!stuck.empty())
        fixes.push_back(add_to_audio(outside_audio(stuck)) + k_limits_fix);
    if (!logins.empty())
        texts.push_back(logins.text("users judged"));
    c.reason = core::join(texts, "; ");
    if (!users.logins.empty())
        c.reason += "; judged: " + users.judged;
    if (c.status != Status::ok)
        c.fix = core::join(fixes, "; ");
    return c;
}

Check check_audio_group_limits(const SystemView& view, const AudioUsers& users) {
    Check c = make_check("audio-group-limits", "real-time limits of the users who run audio");
    if (!users.problem.empty())
        return cannot_read(c, users.problem);
    if (auto none = nobody(c, users))
        return *none;
    if (users.logins.empty())
        return ok(c, "no user logs in to run audio (" + users.judged +
                         "); pam_limits sets no service's limits (check service-limits does)");
    if (!view.limits_rules)
        return cannot_read(c, view.limits_rules.problem);
    std::string seen;
    std::vector<const AudioUser*> short_of;
    UserParts missing;
    for (const AudioUser& u : users.logins) {
        // rtprio: the kernel's default is 0; memlock: a few MiB at most (8 MiB since Linux
        // 5.16), never unlimited, so any number stands for it here
        const EffectiveLimit rtprio =
            effective_limit(*view.limits_rules, u.name, u.groups, "rtprio", 0);
        const EffectiveLimit memlock =
            effective_limit(*view.limits_rules, u.name, u.groups, "memlock", 8192);
        std::vector<std::string> short_by;
        if (rtprio.value() == 0)
            short_by.push_back("rtprio is 0 for " + quoted(u.name) + " (soft " +
                               shown(rtprio.soft) + ", hard " + shown(rtprio.hard) + ": " +
                               rules_of(rtprio) +
                               "), so JACK or PipeWire run as them get real-time only through "
                               "RTKit");
        if (memlock.value() >= 0)
            short_by.push_back("memlock is " +
                               (memlock.soft_rule || memlock.hard_rule
                                    ? shown(memlock.value()) + " KiB"
                                    : std::string("the kernel's default")) +
                               " for " + quoted(u.name) + " (" + rules_of(memlock) +
                               "), so an audio server cannot lock all its buffers");
        if (!short_by.empty()) {
            missing.add(core::join(short_by, "; "));
            short_of.push_back(&u);
        } else if (seen.empty())
            seen = "rtprio " + shown(rtprio.value()) + " by " + rules_of(rtprio) +
                   ", memlock unlimited by " + rules_of(memlock);
    }
    if (!missing.empty())
        return warn(c, judged_users(users) + "; but " + missing.text("users short of them"),
                    add_to_audio(outside_audio(short_of)) + k_limits_fix);
    return ok(c, judged_users(users) + "; each with " + seen);
}

// /dev/cpu_dma_latency (Documentation/power/pm_qos_interface.rst): a process that holds
// it open with a value keeps the CPUs out of idle states slower to leave than that.
Check check_cpu_dma_latency_access(const SystemView& view, const AudioUsers& users) {
    Check c = make_check("cpu-dma-latency", "/dev/cpu_dma_latency for the users who run audio");
    if (!users.problem.empty())
        return cannot_read(c, users.problem);
    if (auto none = nobody(c, users))
        return *none;
    if (users.logins.empty())
        return ok(c, "no user logs in to run audio (" + users.judged +
                         "); the device matters to a DAW (Ardour, REAPER) run by one");
    if (!view.cpu_dma_latency)
        return cannot_read(c, view.cpu_dma_latency.problem);
    const DeviceNode& node = *view.cpu_dma_latency;
    std::vector<const AudioUser*> closed;
    for (const AudioUser& u : users.logins) {
        const bool may = u.uid == 0u || (u.uid == node.uid && (node.mode & 0200)) ||
                         (std::find(u.gids.begin(), u.gids.end(), node.gid) != u.gids.end() &&
                          (node.mode & 020)) ||
                         (node.mode & 002);
        if (!may)
            closed.push_back(&u);
    }
    const std::string device = "'/dev/cpu_dma_latency' (owner " + std::to_string(node.uid) +
                               ", group " + std::to_string(node.gid) + ", mode " +
                               core::octal(node.mode) + ")";
    if (closed.empty())
        return ok(c, judged_users(users) + "; each may write " + device +
                         ", so their audio software can keep the CPUs out of deep idle");
    std::vector<std::string> who;
    for (const AudioUser* u : closed)
        who.push_back(u->name);
    return warn(c,
                user_names(who) + " may not write " + device +
                    ", so a DAW or audio server run as them cannot keep the CPUs out of deep "
                    "idle; judged: " +
                    users.judged,
                add_to_audio(outside_audio(closed)) +
                    "let group audio write it with a udev rule "
                    "/etc/udev/rules.d/60-cpu-dma-latency.rules: 'KERNEL==\"cpu_dma_latency\", "
                    "GROUP=\"audio\", MODE=\"0660\"' (then 'udevadm trigger "
                    "/dev/cpu_dma_latency')");
}

} // namespace rtprov::audit
