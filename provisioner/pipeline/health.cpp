// SPDX-License-Identifier: Apache-2.0
#include "provisioner/pipeline/health.hpp"

#include "provisioner/core/error.hpp"
#include "provisioner/core/json.hpp"
#include "provisioner/core/sha256.hpp"
#include "provisioner/core/text.hpp"
#include "provisioner/pipeline/applied_system.hpp"
#include "provisioner/pipeline/boot_counting.hpp"
#include "provisioner/system/sysroot.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <fstream>

namespace rtprov::pipeline {

namespace {

using Clock = std::chrono::steady_clock;

// The exit codes of the children (rtprov(1)): 0 passed, 3 ran and did not pass.
constexpr int k_passed = 0;
constexpr int k_not_passed = 3;

// How many failing lines of each child's report a reason quotes.
constexpr std::size_t k_reason_lines = 4;

// The entry whose tries were spent and for which the gate asked a reboot once, without the
// counter ("debian"): the loader booting it again means there is nothing to fall back to.
constexpr const char* k_spent_entry = "spent-entry";

// The entry, with its counter ("debian+2-1"), for which the gate last asked a reboot with
// tries left: the loader booting it again under the same name did not count the try
// (systemd-boot renames the entry before it boots it), and another reboot would be a loop.
constexpr const char* k_tried_entry = "tried-entry";

// Removes the record 'name' in 'dir'; a record that cannot be removed is warned of.
void remove_record(Machine& machine, const std::string& dir, const char* name) {
    try {
        machine.root.remove_file(dir + "/" + name);
    } catch (const std::exception& e) {
        machine.log.warning(std::string("cannot remove ") + dir + "/" + name + ": " + e.what() +
                            ", ignoring");
    }
}

// The reports of one run, in the reports folder.
constexpr const char* k_reports[] = {"verdict.json", "selftest.txt", "selftest.json", "audit.json",
                                     ".audit.json.tmp"};

// The lines of a report that say what failed, at most 'max' of them.
std::string failing_lines(const std::string& path, std::size_t max) {
    std::ifstream in(path);
    std::string line, out;
    std::size_t n = 0;
    while (n < max && std::getline(in, line)) {
        std::string lower = line;
        for (char& ch : lower)
            ch = char(std::tolower(static_cast<unsigned char>(ch)));
        if (lower.find("fail") == std::string::npos && lower.find("over") == std::string::npos)
            continue;
        std::size_t start = line.find_first_not_of(" \t");
        out += (out.empty() ? "" : "; ") + line.substr(start == std::string::npos ? 0 : start);
        ++n;
    }
    return out;
}

// What the self-test's text report 'path' says failed: its own one-line judgement of
// the latency and the underrun test ('verdict: ...') and each part that failed (the
// PI-boost probe's line ends ': FAIL'); the lines that mention a failure or a limit gone
// over (failing_lines) when it has neither.
std::string selftest_failures(const std::string& path, std::size_t max) {
    std::ifstream in(path);
    std::string line, out;
    std::size_t n = 0;
    while (n < max && std::getline(in, line)) {
        if (line.rfind("verdict: ", 0) == 0)
            line.erase(0, 9);
        else if (line.size() < 6 || line.compare(line.size() - 6, 6, ": FAIL") != 0)
            continue;
        out += (out.empty() ? "" : "; ") + line;
        ++n;
    }
    return out.empty() ? failing_lines(path, max) : out;
}

// The checks that failed in the audit's JSON report 'path' under 'root' ('id (subject):
// reason'), at most 'max'; "" when it cannot be read as one (an audit that failed to run).
std::string failed_checks(const fs::Root& root, const std::string& path, std::size_t max) {
    core::Result<core::FileState> file = root.try_read(path, fs::caps::k_report);
    if (!file)
        return "";
    const core::JsonParse parsed = core::parse_json(file->content);
    const core::JsonValue* checks = parsed.value ? parsed.value->find("checks") : nullptr;
    if (!checks || checks->kind != core::JsonValue::Kind::array)
        return "";
    std::string out;
    std::size_t n = 0;
    auto text_of = [](const core::JsonValue& check, const char* key) {
        const core::JsonValue* value = check.find(key);
        return value && value->kind == core::JsonValue::Kind::string ? value->text : std::string();
    };
    for (const core::JsonValue& check : checks->items) {
        if (n == max || text_of(check, "status") != "fail")
            continue;
        const std::string subject = text_of(check, "subject");
        out += (out.empty() ? "" : "; ") + text_of(check, "id") +
               (subject.empty() ? "" : " (" + subject + ")") + ": " + text_of(check, "reason");
        ++n;
    }
    return out;
}

// How a child that ran ended, in the trial record's words.
std::string outcome_of(int rc) {
    return rc == k_child_timed_out ? "timed out"
           : rc == k_passed        ? "passed"
           : rc == k_not_passed    ? "did not pass"
                                   : "error";
}

// Why 'child' ('self-test', 'audit') is not a pass; "" when it is one. 'details' are the
// failing lines of its report.
std::string child_reason(const std::string& child, const HealthChild& ran,
                         const std::string& details) {
    const std::string detail = details.empty() ? "" : ": " + details;
    if (!ran.exit_code)
        return child + (ran.outcome == "timed out" ? " was still running at the deadline and "
                                                     "was stopped"
                                                   : " did not run");
    const int rc = *ran.exit_code;
    if (rc == k_passed)
        return "";
    if (rc == k_not_passed)
        return child + " did not pass" + detail;
    if (rc > 128)
        return child + " ended by signal " + std::to_string(rc - 128) + detail;
    return child + " error (exit " + std::to_string(rc) + ")" + detail;
}

// Runs the child 'name' within 'deadline'; one not started before it is not run. A child
// that cannot be started is an error, and 'problems' says why.
HealthChild run_child(Machine& machine, const std::string& name,
                      const std::vector<std::string>& args, const std::string& stdout_path,
                      Clock::time_point deadline, std::vector<std::string>& problems) {
    HealthChild child;
    if (Clock::now() >= deadline)
        return child; // not run
    try {
        const int rc = machine.rtprov.run(args, stdout_path, deadline);
        child.outcome = outcome_of(rc);
        if (rc != k_child_timed_out)
            child.exit_code = rc;
    } catch (const std::exception& e) {
        child.outcome = "error";
        child.exit_code = 1;
        problems.push_back("cannot run the " + name + ": " + e.what());
    }
    return child;
}

// --boot on a verdict that is not healthy: whether this boot is counted, and whether to
// ask a reboot (run_health asks it). An entry whose tries are spent gets one reboot,
// recorded in k_spent_entry beside the reports; where that cannot be recorded, none.
HealthBoot decide_boot(Machine& machine, const std::string& dir) {
    HealthBoot boot;
    const CountedBoot counted = counted_boot(machine.sysroot);
    boot.counted = counted.counted;
    boot.entry = counted.entry;
    const unsigned left = tries_left(boot.entry).value_or(0); // 0: spent, or no counter
    if (!boot.counted || left > 0) {
        // Not the entry whose tries were spent booted again: that episode is over (the
        // loader fell back, or a later update counts its own tries), and an entry of the
        // same name spent later gets its one reboot too.
        remove_record(machine, dir, k_spent_entry);
    }
    if (!boot.counted) {
        remove_record(machine, dir, k_tried_entry);
        boot.why = "not rebooted: the boot loader does not count tries of this boot's entry "
                   "(no LoaderBootCountPath EFI variable), so a reboot would start the same "
                   "system again; the exit code keeps boot-complete.target from being reached";
        return boot;
    }
    const std::string shown = boot.entry.empty() ? "this boot's entry" : rtprov::quoted(boot.entry);
    if (!machine.running) {
        boot.why = "not rebooted: not the running system";
        return boot;
    }
    if (left > 0) {
        const std::string tried = dir + "/" + k_tried_entry;
        try {
            if (auto was = machine.root.read(tried, fs::caps::k_config);
                was && was->content == boot.entry + "\n") {
                boot.why = "not rebooted again: the boot loader booted " + shown +
                           " again after the reboot the gate asked for without counting the "
                           "try (the entry's name, with its tries, is the same); a reboot now "
                           "would be a loop";
                return boot;
            }
            core::FileState state;
            state.content = boot.entry + "\n";
            machine.root.write(tried, state);
        } catch (const std::exception& e) {
            boot.why = "not rebooted: the reboot for " + shown + " cannot be recorded (" +
                       e.what() +
                       "), so a boot that did not count it could not be told from a loop";
            return boot;
        }
        boot.reboot = true;
        boot.why = "rebooting: the boot loader counts tries of " + shown + " (" +
                   std::to_string(left) +
                   " left): it tries the entry again, and once its tries are spent falls "
                   "back to another";
        return boot;
    }
    // Its tries are spent: one reboot lets the loader fall back; booted again after it,
    // there was nothing to fall back to, and another reboot would be a loop.
    const std::string stem = without_counter(boot.entry);
    const std::string marker = dir + "/" + k_spent_entry;
    try {
        if (auto was = machine.root.read(marker, fs::caps::k_config);
            was && was->content == stem + "\n") {
            boot.why = "not rebooted again: the tries of " + shown +
                       " are spent, and the boot loader booted it again after the reboot the "
                       "gate asked for (no entry to fall back to); a reboot now would be a loop";
            return boot;
        }
        core::FileState state;
        state.content = stem + "\n";
        machine.root.write(marker, state);
    } catch (const std::exception& e) {
        boot.why = "not rebooted: the tries of " + shown +
                   " are spent, and the one reboot that lets the boot loader fall back cannot "
                   "be recorded (" +
                   e.what() + "), so a second one could not be told from a loop";
        return boot;
    }
    boot.reboot = true;
    boot.why = "rebooting once: the tries of " + shown +
               " are spent, so the boot loader falls back to another entry";
    return boot;
}

std::string number_text(double value) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.1f", value);
    return buffer;
}

std::string child_json(const HealthChild& child) {
    return "{\"exit_code\": " +
           (child.exit_code ? std::to_string(*child.exit_code) : std::string("null")) +
           ", \"outcome\": " + core::json_string(child.outcome) + "}";
}

} // namespace

const char* health_word(HealthVerdict verdict) {
    switch (verdict) {
    case HealthVerdict::healthy:
        return "healthy";
    case HealthVerdict::not_healthy:
        return "not-healthy";
    case HealthVerdict::could_not_judge:
        break;
    }
    return "could-not-judge";
}

int health_exit_code(HealthVerdict verdict) {
    switch (verdict) {
    case HealthVerdict::healthy:
        return 0;
    case HealthVerdict::not_healthy:
        return 3;
    case HealthVerdict::could_not_judge:
        break;
    }
    return 1;
}

HealthVerdict health_verdict(std::optional<int> selftest, std::optional<int> audit) {
    auto judged = [](std::optional<int> rc) {
        return rc && (*rc == k_passed || *rc == k_not_passed);
    };
    if (!judged(selftest) || !judged(audit))
        return HealthVerdict::could_not_judge;
    return *selftest == k_passed && *audit == k_passed ? HealthVerdict::healthy
                                                       : HealthVerdict::not_healthy;
}

Health judge_health(Machine& machine, const HealthRequest& request) {
    const Clock::time_point started = Clock::now();
    Health health;
    health.reports_dir = request.reports_dir;
    std::vector<std::string> problems; // what keeps it from judging, besides the children
    const system::SysRoot sys(machine.sysroot);
    if (system::Fact<std::string> id = sys.value("/proc/sys/kernel/random/boot_id"); id)
        health.boot_id = *id;

    // The promise it judges against: the applied profile's, or the generic checks.
    std::optional<core::Profile> profile;
    bool readable = true;
    try {
        profile = applied_profile(machine.sysroot);
        if (profile) {
            health.profile = profile->name;
            auto file =
                fs::Root(machine.sysroot).read(core::k_applied_profile_path, fs::caps::k_config);
            health.profile_sha256 = file ? core::sha256_hex(file->content) : "";
        }
    } catch (const std::exception& e) {
        readable = false;
        problems.push_back(std::string("the applied profile cannot be read: ") + e.what());
    }
    const core::SelftestThresholds limits =
        profile ? profile->tuning.selftest : core::SelftestThresholds{};
    const unsigned duration = std::min(limits.duration_s, core::k_health_selftest_max_s);
    health.timeout_s = request.timeout_s.value_or(core::health_timeout_s(limits));
    if (request.at_most_s)
        health.timeout_s = std::min(health.timeout_s, *request.at_most_s);
    const Clock::time_point deadline = started + std::chrono::seconds(health.timeout_s);
    health.judged = profile
                        ? "the applied profile " + rtprov::quoted(profile->name) +
                              ": the audit against it, the self-test with its limits (" +
                              std::to_string(duration) + " s" +
                              (limits.audio ? ", and the underrun test" : "") + ")"
                        : "no profile applied: the generic checks (the audit's checks that need no "
                          "profile, the self-test with the default limits, " +
                              std::to_string(duration) + " s)";

    // A fresh folder of reports: the last run's are gone before anything runs.
    const std::string& dir = request.reports_dir;
    // The children write their reports by host path: the folder as the root resolves it
    // (a symlink in a --sysroot tree resolved inside the tree, as verdict.json's write
    // is), so that they land beside the verdict and never outside the tree.
    std::string host_dir = machine.root.host_path(dir);
    std::string history_dir = machine.root.host_path(core::k_selftest_history_dir);
    bool keeps = true;
    try {
        machine.root.make_directories(dir);
        for (const char* report : k_reports)
            machine.root.remove_file(dir + "/" + report);
        host_dir = machine.root.host_path(machine.root.resolve(dir));
        history_dir = machine.root.host_path(machine.root.resolve(core::k_selftest_history_dir));
    } catch (const std::exception& e) {
        keeps = false;
        problems.push_back("the reports cannot be kept in " + dir + ": " + e.what());
    }

    if (readable && keeps) {
        std::vector<std::string> rest = {"--duration", std::to_string(duration), "--json",
                                         host_dir + "/selftest.json"};
        std::vector<std::string> audit_args = {"audit", "--json"};
        if (machine.sysroot != "/") {
            // a copied tree: the system read from it, the history kept in it
            rest.insert(rest.end(), {"--sysroot", machine.sysroot, "--history", history_dir});
            audit_args.insert(audit_args.end(), {"--sysroot", machine.sysroot});
        }
        machine.log.progress("self-test, " + std::to_string(duration) + " s");
        health.selftest = run_child(machine, "self-test", selftest_command(machine.sysroot, rest),
                                    host_dir + "/selftest.txt", deadline, problems);
        machine.log.progress("audit");
        if (health.selftest.outcome != "timed out") // the deadline is past
            health.audit = run_child(machine, "audit", audit_args, host_dir + "/.audit.json.tmp",
                                     deadline, problems);
        if (health.audit.exit_code) {
            try {
                machine.root.rename(dir + "/.audit.json.tmp", dir + "/audit.json");
            } catch (const std::exception& e) {
                problems.push_back("the audit's report cannot be kept: " + std::string(e.what()));
            }
        }
    }
    health.verdict = health_verdict(health.selftest.exit_code, health.audit.exit_code);
    if (!problems.empty())
        health.verdict = HealthVerdict::could_not_judge;

    // A child without an exit code was stopped at the deadline or not started by then.
    if (readable && keeps && (!health.selftest.exit_code || !health.audit.exit_code))
        health.reasons.push_back("timed out after " + std::to_string(health.timeout_s) + " s");
    for (const std::string& problem : problems)
        health.reasons.push_back(problem);
    if (readable && keeps) {
        for (const std::string& why :
             {child_reason("self-test", health.selftest,
                           selftest_failures(host_dir + "/selftest.txt", k_reason_lines)),
              child_reason("audit", health.audit,
                           failed_checks(machine.root, dir + "/audit.json", k_reason_lines))})
            if (!why.empty())
                health.reasons.push_back(why);
    }

    if (request.on_failure == OnFailure::reboot_if_counted &&
        health.verdict != HealthVerdict::healthy)
        health.boot = decide_boot(machine, dir);
    health.time = machine.utc_now();
    health.seconds =
        std::chrono::duration<double>(Clock::now() - started).count(); // before the write
    if (keeps) {
        try {
            core::FileState verdict;
            verdict.content = health_json(health);
            machine.root.write(dir + "/verdict.json", verdict);
        } catch (const std::exception& e) {
            keeps = false;
            health.reasons.push_back("the verdict cannot be kept in " + dir +
                                     "/verdict.json: " + e.what());
        }
    }
    if (!keeps) {
        // Not kept is not judged: a full disk never turns into a pass.
        health.verdict = HealthVerdict::could_not_judge;
        if (request.on_failure == OnFailure::reboot_if_counted && !health.boot)
            health.boot = decide_boot(machine, dir);
    }
    if (health.verdict == HealthVerdict::healthy &&
        request.on_failure == OnFailure::reboot_if_counted) {
        // a healthy boot ends an episode of tries
        remove_record(machine, dir, k_spent_entry);
        remove_record(machine, dir, k_tried_entry);
    }
    return health;
}

Health run_health(Machine& machine, const HealthRequest& request) {
    Health health = judge_health(machine, request);
    const std::string subject = health.profile ? "profile " + rtprov::quoted(*health.profile)
                                               : std::string("no profile applied");
    const std::string took = " (" + number_text(health.seconds) + " s)";
    switch (health.verdict) {
    case HealthVerdict::healthy:
        machine.log.event(FlowEvent::health_healthy, Priority::info,
                          "healthy: " + subject + ": self-test and audit passed" + took);
        break;
    case HealthVerdict::not_healthy:
        machine.log.event(FlowEvent::health_not_healthy, Priority::warning,
                          "not healthy: " + subject + ": " + core::join(health.reasons, "; ") +
                              took);
        break;
    case HealthVerdict::could_not_judge:
        machine.log.event(FlowEvent::health_could_not_judge, Priority::error,
                          "could not judge: " + subject + ": " + core::join(health.reasons, "; ") +
                              took);
        break;
    }
    return health;
}

void reboot_if_decided(Machine& machine, const Health& health) {
    if (!health.boot || !health.boot->reboot)
        return;
    machine.log.event(FlowEvent::health_reboot, Priority::notice, health.boot->why);
    machine.manager.reboot("");
}

std::string health_json(const Health& h) {
    std::string reasons;
    for (const std::string& reason : h.reasons)
        reasons += (reasons.empty() ? "\n    " : ",\n    ") + core::json_string(reason);
    std::string out =
        "{\n  " + core::json_schema("health") +
        ",\n  \"verdict\": " + core::json_string(health_word(h.verdict)) +
        ",\n  \"exit_code\": " + std::to_string(health_exit_code(h.verdict)) +
        ",\n  \"boot_id\": " + (h.boot_id ? core::json_string(*h.boot_id) : "null") +
        ",\n  \"time\": " + core::json_string(h.time) + ",\n  \"profile\": " +
        (h.profile ? "{\"name\": " + core::json_string(*h.profile) +
                         ", \"sha256\": " + core::json_string(h.profile_sha256) + "}"
                   : "null") +
        ",\n  \"judged\": " + core::json_string(h.judged) + ",\n  \"reasons\": [" + reasons +
        (reasons.empty() ? "]" : "\n  ]") + ",\n  \"seconds\": " + number_text(h.seconds) +
        ",\n  \"timeout_seconds\": " + std::to_string(h.timeout_s) +
        ",\n  \"selftest\": " + child_json(h.selftest) + ",\n  \"audit\": " + child_json(h.audit) +
        ",\n  \"reports\": " + core::json_string(h.reports_dir) + ",\n  \"boot\": ";
    if (!h.boot)
        return out + "null\n}\n";
    return out + "{\"counted\": " + (h.boot->counted ? "true" : "false") +
           ", \"entry\": " + (h.boot->counted ? core::json_string(h.boot->entry) : "null") +
           ", \"reboot\": " + (h.boot->reboot ? "true" : "false") +
           ", \"why\": " + core::json_string(h.boot->why) + "}\n}\n";
}

} // namespace rtprov::pipeline
