// SPDX-License-Identifier: Apache-2.0
#include "provisioner/audit/service_checks.hpp"

#include "provisioner/core/error.hpp"
#include "provisioner/core/text.hpp"

#include <fnmatch.h>

#include <algorithm>

namespace rtprov::audit {

namespace {

// A command for the user to run, in quotes: its words as a shell reads them back (a unit
// name may hold a '\\', which a shell would take away).
std::string shown(const std::vector<std::string>& argv) {
    return "'" + core::shell_command(argv) + "'";
}

void add_unique(std::vector<std::string>& items, const std::string& item) {
    if (std::find(items.begin(), items.end(), item) == items.end())
        items.push_back(item);
}

bool fnmatch_one(const std::string& glob, const std::string& name) {
    return ::fnmatch(glob.c_str(), name.c_str(), 0) == 0;
}

struct Judged {
    ThreadRow row;
    std::string fix;
    bool audio = false;
};

std::optional<LimitValue> soft_rtprio(const Process& p) {
    if (p.limits && p.limits->rtprio)
        return p.limits->rtprio->soft;
    return std::nullopt;
}

Judged judge(const Process& p, const Thread& t, const ServiceExpectation& s) {
    Judged j;
    ThreadRow& r = j.row;
    r.pid = p.pid;
    r.tid = t.tid;
    r.comm = t.comm;
    r.policy = t.policy;
    r.rt_priority = t.rt_priority;
    r.allowed_cpus = t.allowed ? t.allowed->to_string() : "?";
    const ThreadSched have{t.policy, is_realtime(t.policy) ? t.rt_priority : 0};
    const std::string restart = "restart " + quoted(s.unit);
    if (s.app_sched && s.names_rt_thread(t.comm)) {
        j.audio = true;
        r.expected = to_string(*s.app_sched);
        if (have != *s.app_sched) {
            r.status = Status::fail;
            if (!is_realtime(t.policy)) {
                r.note = "not real-time, though " + s.app_name + " makes it " + r.expected;
                auto limit = soft_rtprio(p);
                if (limit &&
                    !covers(*limit, LimitValue{false, std::uint64_t(s.app_sched->priority)}))
                    j.fix = "raise LimitRTPRIO of " + quoted(s.unit) + " to at least " +
                            std::to_string(s.app_sched->priority) + " (tuning.services." +
                            s.profile_key + ".limit_rtprio), apply and " + restart + ": " +
                            s.app_name + " could not make its threads real-time";
                else
                    j.fix = restart + "; if they stay ordinary, look in " +
                            shown({"journalctl", "-u", s.unit}) +
                            " for why it could not get real-time scheduling";
            } else {
                r.note = "runs at " + to_string(have) + ", not " + r.expected + " as " +
                         s.app_name + " sets it";
                // Volumio's volumio_cpu_tweak runs 'chrt -f -p -a 35' on MPD
                // (volumio/volumio3-os volumio/bin/volumio_cpu_tweak).
                j.fix = "remove what changes it (a unit-wide CPUSchedulingPolicy= or "
                        "CPUSchedulingPriority=, or a 'chrt -a' script such as Volumio's "
                        "volumio_cpu_tweak) and " +
                        restart + ": " + s.app_name + " sets " + r.expected + " itself";
            }
        }
    } else if (s.app_sched && s.rt_threads.empty() && t.tid == p.pid && is_realtime(t.policy)) {
        // The apps rtprov knows make some threads real-time, never their main thread
        // (their sources: board-profiles/apps/audio-apps.yaml). Without their thread names,
        // a real-time main thread is the sign that a unit-wide policy or 'chrt -a' raised
        // every thread: the inversion measured on MPD on the reference box (47 ms without
        // the CPU, 16 dropouts in 10.5 s).
        r.status = Status::fail;
        r.expected = "not real-time";
        r.note = "the main thread runs at " + to_string(have) + ": every thread of " + s.app_name +
                 " seems raised, which inverts its " + s.app_threads;
        j.fix = "remove what raises it (a unit-wide CPUSchedulingPolicy=, a 'chrt -a' script) "
                "and " +
                restart + ": " + s.app_name + " sets its own real-time threads";
    } else if (s.app_sched && s.rt_threads.empty() && s.is_audio_thread(t)) {
        j.audio = true;
        r.expected = to_string(*s.app_sched) + " or above";
    } else if (s.unit_sched) {
        r.expected = to_string(*s.unit_sched);
        const bool same = is_realtime(s.unit_sched->policy) ? have == *s.unit_sched
                                                            : t.policy == s.unit_sched->policy;
        if (!same && t.tid == p.pid) {
            r.status = Status::fail;
            r.note = "the main thread runs " + to_string(have) + ", not the unit's " + r.expected;
            j.fix = restart + " so that the CPUSchedulingPolicy= of rtprov's drop-in applies";
        } else if (!same && (is_realtime(t.policy) || is_realtime(s.unit_sched->policy))) {
            r.status = Status::warn;
            r.note = "runs " + to_string(have) + ", not the unit's " + r.expected;
            j.fix = "find what changes it (chrt, the app's own settings)";
        }
    } else {
        r.expected = "not real-time";
        if (is_realtime(t.policy)) {
            r.status = Status::warn;
            r.note = "runs at " + to_string(have) +
                     (s.app_sched ? ", though " + s.app_name + " makes only its " + s.app_threads +
                                        " real-time"
                                  : "");
            j.fix = "remove what raises it (a unit-wide CPUSchedulingPolicy=, chrt) and " + restart;
        }
    }
    if (s.cpus && t.allowed && !t.allowed->minus(*s.cpus).empty()) {
        r.status = Status::fail;
        r.note += std::string(r.note.empty() ? "" : "; ") + "allowed on " + cpus_text(*t.allowed) +
                  ", not only " + s.cpus->to_string();
        const std::string fix = restart + " so that its CPUAffinity=" + s.cpus->to_string() +
                                " applies ('systemctl daemon-reload && " +
                                core::shell_command({"systemctl", "restart", s.unit}) + "')";
        j.fix = j.fix.empty() ? fix : j.fix + "; " + fix;
    }
    return j;
}

std::string rtprio_need(const ServiceExpectation& s, int need) {
    if (s.app_sched && s.app_sched->priority == need)
        return "the " + std::to_string(need) + " " + s.app_name + " needs for its " + s.app_threads;
    return "the " + std::to_string(need) + " of tuning.services." + s.profile_key + ".limit_rtprio";
}

Check limits_check(const std::vector<const Process*>& processes, const ServiceExpectation& s) {
    Check c;
    c.id = "service-limits";
    c.subject = s.unit;
    c.title = "real-time and memory-lock limits of " + quoted(s.unit);
    if (!s.min_rtprio && !s.memlock) {
        c.reason = "the profile sets no LimitRTPRIO= or LimitMEMLOCK= for it and no app needs one";
        return c;
    }
    std::vector<std::string> wrong;
    std::vector<std::string> unknown;
    std::string seen;
    for (const Process* p : processes) {
        const std::string who = quoted(p->comm) + " (pid " + std::to_string(p->pid) + ")";
        if (!p->limits) {
            unknown.push_back(p->limits.problem);
            continue;
        }
        if (s.min_rtprio) {
            const LimitValue need{false, std::uint64_t(std::max(*s.min_rtprio, 0))};
            if (!p->limits->rtprio)
                unknown.push_back(who + ": no 'Max realtime priority' in its limits");
            else if (!covers(p->limits->rtprio->soft, need))
                wrong.push_back(who + " may use real-time priorities up to " +
                                to_string(p->limits->rtprio->soft) + ", below " +
                                rtprio_need(s, *s.min_rtprio));
            else if (seen.empty())
                seen = "RLIMIT_RTPRIO " + to_string(p->limits->rtprio->soft) + " (needs " +
                       std::to_string(*s.min_rtprio) + ")";
        }
        if (s.memlock) {
            if (!p->limits->memlock)
                unknown.push_back(who + ": no 'Max locked memory' in its limits");
            else if (!covers(p->limits->memlock->soft, *s.memlock))
                wrong.push_back(who + " may lock " + bytes_text(p->limits->memlock->soft) +
                                " of memory, below limit_memlock " + quoted(s.memlock_setting));
            else if (seen.find("MEMLOCK") == std::string::npos)
                seen += (seen.empty() ? "" : ", ") + std::string("RLIMIT_MEMLOCK ") +
                        bytes_text(p->limits->memlock->soft) + " (needs " + s.memlock_setting + ")";
        }
    }
    if (!wrong.empty()) {
        c.status = Status::fail;
        c.reason = listing(wrong);
        std::string settings;
        if (s.min_rtprio)
            settings = "LimitRTPRIO=" + std::to_string(*s.min_rtprio);
        if (s.memlock)
            settings +=
                (settings.empty() ? "" : ", ") + std::string("LimitMEMLOCK=") + s.memlock_setting;
        c.fix = "restart " + quoted(s.unit) + " so that rtprov's drop-in (" + settings +
                ") applies; if it stays, see " +
                shown({"systemctl", "show", "-p", "LimitRTPRIO,LimitMEMLOCK", s.unit});
        return c;
    }
    if (!unknown.empty()) {
        return cannot_read(std::move(c), listing(unknown));
    }
    c.reason = "soft limits as the profile asks: " + seen;
    return c;
}

} // namespace

ServiceAudit audit_service(const SystemView& view, const ServiceExpectation& s) {
    ServiceAudit out;
    out.table.unit = s.unit;
    Check c;
    c.id = "service-threads";
    c.subject = s.unit;
    c.title = "threads of " + quoted(s.unit) + ": policy, priority and CPUs";
    if (!view.processes) {
        out.checks.push_back(cannot_read(std::move(c), view.processes.problem));
        return out;
    }
    std::vector<const Process*> processes;
    for (const Process& p : *view.processes)
        if (!p.kernel_thread && cgroup_in_unit(p.cgroup, s.unit))
            processes.push_back(&p);
    if (processes.empty()) {
        c.status = Status::warn;
        c.reason = quoted(s.unit) + " is not running (no process in its cgroup)";
        c.fix = "start it (" + shown({"systemctl", "start", s.unit}) + ") and rerun 'rtprov audit'";
        out.checks.push_back(std::move(c));
        return out;
    }
    std::vector<std::string> problems;
    std::vector<std::string> fixes;
    std::vector<std::string> audio;
    for (const Process* p : processes)
        for (const Thread& t : p->threads) {
            Judged j = judge(*p, t, s);
            if (j.audio)
                audio.push_back(quoted(t.comm));
            if (j.row.status != Status::ok) {
                c.status = worst(c.status, j.row.status);
                problems.push_back(quoted(t.comm) + " (tid " + std::to_string(t.tid) +
                                   "): " + j.row.note);
                add_unique(fixes, j.fix);
            }
            out.table.threads.push_back(std::move(j.row));
        }
    std::vector<std::string> absent;
    for (const std::string& glob : s.rt_threads)
        if (std::none_of(out.table.threads.begin(), out.table.threads.end(),
                         [&](const ThreadRow& r) { return fnmatch_one(glob, r.comm); }))
            absent.push_back(quoted(glob));
    const std::size_t count = out.table.threads.size();
    if (!s.rt_threads.empty() && audio.empty()) {
        c.status = worst(c.status, Status::warn);
        problems.push_back("none of " + s.app_name + "'s " + s.app_threads + " runs");
        add_unique(fixes,
                   "see " + shown({"journalctl", "-u", s.unit}) + " for why they did not start");
    }
    if (c.status == Status::ok) {
        std::string sched;
        if (s.app_sched)
            sched = to_string(*s.app_sched) + (s.rt_threads.empty() ? " or above" : "") + " as " +
                    s.app_name + " sets them";
        else if (s.unit_sched)
            sched = to_string(*s.unit_sched);
        c.reason = std::to_string(count) + (count == 1 ? " thread" : " threads") +
                   (audio.empty() ? ", none real-time" : "; " + listing(audio) + " at " + sched);
        if (s.cpus)
            c.reason += "; all allowed only on " + cpus_text(*s.cpus);
    } else {
        c.reason = listing(problems);
        c.fix = core::join(fixes, "; ");
    }
    if (!absent.empty() && !audio.empty())
        c.reason += "; no thread matches " + listing(absent) +
                    " now (such a thread may exist only while audio plays)";
    out.checks.push_back(std::move(c));
    out.checks.push_back(limits_check(processes, s));
    return out;
}

} // namespace rtprov::audit
