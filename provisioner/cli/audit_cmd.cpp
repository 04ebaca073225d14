// SPDX-License-Identifier: Apache-2.0
// rtprov audit: reads the running system once and says, check by check, whether it is
// what the applied profile promised (provisioner/audit/ does the judging).
#include "provisioner/audit/audit.hpp"
#include "provisioner/cli/commands.hpp"
#include "provisioner/cli/json.hpp"
#include "provisioner/cli/selftest_render.hpp"
#include "provisioner/core/error.hpp"
#include "provisioner/core/text.hpp"
#include "provisioner/pipeline/applied_system.hpp"
#include "provisioner/pipeline/buffer_choice.hpp"
#include "provisioner/profile/app_loader.hpp"

#include <ctime>
#include <filesystem>
#include <iostream>
#include <map>

namespace stdfs = std::filesystem;

namespace rtprov::cli {

namespace {

std::string pad(std::string text, std::size_t width) {
    if (text.size() < width)
        text.append(width - text.size(), ' ');
    return text;
}

// Each field of the text report is one line (core::one_line): a reason names threads, IRQ
// handlers, sound cards and files as the system named them, and a thread named
// "\nresult: passed" must not add a line of its own to the report.
// The players' buffers against the newest kept self-test (docs/audio-buffers.md).
struct PlayersAdvice {
    std::string measured_at; // the self-test's start; "" when none is kept
    std::vector<selftest::PlayerAdvice> players;
};

std::string audit_text(const audit::AuditReport& report, const std::string& profile,
                       const std::optional<PlayersAdvice>& players) {
    using core::one_line;
    std::string out = "rtprov audit: " +
                      (profile.empty() ? std::string("no profile applied, generic checks only")
                                       : "profile " + quoted(profile)) +
                      "\n";
    for (const audit::Check& c : report.checks) {
        std::string title = c.title + (c.subject.empty() ? "" : " (" + c.subject + ")");
        out += pad(audit::to_string(c.status), 5) + pad(one_line(c.id), 20) + one_line(title) +
               "\n      " + one_line(c.reason) + "\n";
        if (!c.fix.empty())
            out += "      fix: " + one_line(c.fix) + "\n";
    }
    for (const audit::ServiceThreads& s : report.services) {
        out += "\nthreads of " + one_line(s.unit) + (s.threads.empty() ? ": not running\n" : ":\n");
        if (s.threads.empty())
            continue;
        out += "    TID CLS RTPRIO COMMAND          CPUS      EXPECTED            STATUS\n";
        for (const audit::ThreadRow& t : s.threads) {
            std::string tid = std::to_string(t.tid);
            std::string prio = t.rt_priority ? std::to_string(t.rt_priority) : "-";
            out += std::string(tid.size() < 7 ? 7 - tid.size() : 0, ' ') + tid + " " +
                   pad(audit::ps_class(t.policy), 3) + " " +
                   std::string(prio.size() < 6 ? 6 - prio.size() : 0, ' ') + prio + " " +
                   pad(one_line(t.comm), 16) + " " + pad(one_line(t.allowed_cpus), 9) + " " +
                   pad(one_line(t.expected), 19) + " " + audit::to_string(t.status) +
                   (t.note.empty() ? "" : ": " + one_line(t.note)) + "\n";
        }
    }
    if (players && players->measured_at.empty())
        out += "\nplayers' buffers: no self-test is kept to measure them against: run 'rtprov "
               "selftest'\n";
    else if (players && !players->players.empty())
        out += "\nagainst the self-test of " + players->measured_at + ", " +
               players_text(players->players);
    audit::Status overall = report.overall();
    out += std::string("\nresult: ") +
           (overall == audit::Status::fail   ? "did not pass"
            : overall == audit::Status::warn ? "passed with warnings"
                                             : "passed") +
           "\n";
    return out;
}

std::string audit_json(const audit::AuditReport& report, const std::string& profile,
                       const std::optional<PlayersAdvice>& players) {
    std::string out = "{\n  " + json_schema("audit") +
                      ",\n  \"profile\": " + (profile.empty() ? "null" : json_string(profile)) +
                      ",\n  \"result\": " + json_string(audit::to_string(report.overall())) +
                      ",\n  \"checks\": [";
    for (std::size_t i = 0; i < report.checks.size(); ++i) {
        const audit::Check& c = report.checks[i];
        out += std::string(i ? "," : "") + "\n    {\"id\": " + json_string(c.id) +
               ", \"subject\": " + json_string(c.subject) + ", \"title\": " + json_string(c.title) +
               ", \"status\": " + json_string(audit::to_string(c.status)) +
               ", \"reason\": " + json_string(c.reason) + ", \"fix\": " + json_string(c.fix) + "}";
    }
    out += "\n  ],\n  \"services\": [";
    for (std::size_t i = 0; i < report.services.size(); ++i) {
        const audit::ServiceThreads& s = report.services[i];
        out += std::string(i ? "," : "") + "\n    {\"unit\": " + json_string(s.unit) +
               ", \"threads\": [";
        for (std::size_t k = 0; k < s.threads.size(); ++k) {
            const audit::ThreadRow& t = s.threads[k];
            out += std::string(k ? ", " : "") + "\n      {\"pid\": " + std::to_string(t.pid) +
                   ", \"tid\": " + std::to_string(t.tid) + ", \"comm\": " + json_string(t.comm) +
                   ", \"policy\": " + json_string(audit::to_string(t.policy)) +
                   ", \"rt_priority\": " + std::to_string(t.rt_priority) +
                   ", \"allowed_cpus\": " + json_string(t.allowed_cpus) +
                   ", \"expected\": " + json_string(t.expected) +
                   ", \"status\": " + json_string(audit::to_string(t.status)) +
                   ", \"note\": " + json_string(t.note) + "}";
        }
        out += "]}";
    }
    out += "\n  ],\n  \"players_measured_at\": " +
           (players && !players->measured_at.empty() ? json_string(players->measured_at)
                                                     : std::string("null")) +
           ",\n  \"players\": " +
           players_json(players ? players->players : std::vector<selftest::PlayerAdvice>{}) +
           "\n}\n";
    return out;
}

// The audit for node-exporter's textfile collector: whether it passed, each check's
// status as a number (the labels name the check) and when it ran.
std::string audit_prometheus(const audit::AuditReport& report, const std::string& profile) {
    auto metric = [](const char* name, const char* help) {
        return prometheus_metric(name, "gauge", help);
    };
    auto level = [](audit::Status s) {
        return s == audit::Status::ok ? "0" : s == audit::Status::warn ? "1" : "2";
    };
    std::string out = metric("rtprov_audit_passed",
                             "1 when rtprov audit passed (warnings allowed), 0 when a check "
                             "failed; the label profile names the applied profile.");
    out += "rtprov_audit_passed{profile=" + prometheus_label(profile) + "} " +
           (report.overall() == audit::Status::fail ? "0" : "1") + "\n";
    out += metric("rtprov_audit_check_status",
                  "Each check of rtprov audit: 0 ok, 1 warn, 2 fail ('rtprov audit' says why "
                  "and what to do).");
    // one sample per check and subject (a check that repeats shows its worst status), as
    // the exposition format allows a label set once
    std::map<std::pair<std::string, std::string>, audit::Status> worst;
    std::vector<std::pair<std::string, std::string>> order;
    for (const audit::Check& c : report.checks) {
        auto [it, fresh] = worst.try_emplace({c.id, c.subject}, c.status);
        if (fresh)
            order.push_back(it->first);
        else
            it->second = audit::worst(it->second, c.status);
    }
    for (const auto& key : order)
        out += "rtprov_audit_check_status{check=" + prometheus_label(key.first) +
               ",subject=" + prometheus_label(key.second) + "} " + level(worst[key]) + "\n";
    out += metric("rtprov_audit_last_run_timestamp_seconds",
                  "When rtprov audit last ran, in seconds since the epoch.");
    return out + "rtprov_audit_last_run_timestamp_seconds " +
           std::to_string(std::int64_t(std::time(nullptr))) + "\n";
}

} // namespace

void add_audit_options(CLI::App& command, AuditCommand& c) {
    c.app = &command;
    c.app->add_flag("--json", c.json, "Print JSON");
    c.app
        ->add_option("--prometheus", c.prometheus_file,
                     "Also write the outcome as a Prometheus textfile (node-exporter's textfile "
                     "collector; Debian's reads /var/lib/prometheus/node-exporter/*.prom), "
                     "atomically")
        ->check(output_file_name_problem)
        ->type_name("FILE");
    c.app
        ->add_option("--sysroot", c.sysroot,
                     "Read /proc, /sys, /boot, /dev, /etc (rtprov's profile, group, passwd, "
                     "security/limits.conf, mpd.conf, systemd units) and /usr (units, RTKit) "
                     "from DIR instead of '/' (a copied tree)")
        ->type_name("DIR");
}

int run_audit(const AuditCommand& c) {
    if (!c.prometheus_file.empty())
        check_output_file(c.prometheus_file);
    // The files every audit reads first; a tree without them would pass on warnings.
    if (c.app->count("--sysroot") > 0)
        check_sysroot(c.sysroot, {"proc/cmdline", "sys/devices/system/cpu/online"},
                      "audit this machine");
    std::optional<pipeline::AppliedSystem> applied =
        pipeline::load_applied_system(c.sysroot, data_dir("apps"));
    std::vector<std::string> units;
    if (applied)
        for (const audit::ServiceExpectation& s : applied->expected.services)
            units.push_back(s.unit);
    audit::SystemView view = audit::read_system_view(c.sysroot, units);
    const audit::Expectation* expectation = applied ? &applied->expected : nullptr;
    audit::AuditReport report = audit::run_audit(view, expectation);
    std::string name = applied ? applied->profile.name : "";
    // 'advise' (the default) and 'write': the players' buffers against the newest kept
    // self-test's worst wake-up; 'keep': nothing.
    std::optional<PlayersAdvice> players;
    if (!applied || applied->profile.tuning.audio_buffers != core::BufferMode::keep) {
        players.emplace();
        if (auto newest = newest_selftest(fs::Root(c.sysroot))) {
            const selftest::Verdict v = selftest::verdict(*newest);
            players->measured_at = newest->started_at;
            if (v.worst)
                players->players = pipeline::advise_players(
                    c.sysroot,
                    applied ? std::optional<core::Profile>(applied->profile) : std::nullopt,
                    profile::load_apps(data_dir("apps")), v.worst->latency.max_us);
        }
    }
    std::cout << (c.json ? audit_json(report, name, players) : audit_text(report, name, players));
    if (!c.prometheus_file.empty())
        write_file(c.prometheus_file, audit_prometheus(report, name));
    return report.overall() == audit::Status::fail ? k_exit_not_passed : k_exit_ok;
}

} // namespace rtprov::cli
