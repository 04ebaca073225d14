// SPDX-License-Identifier: Apache-2.0
#include "provisioner/pipeline/buffer_choice.hpp"

#include "provisioner/core/error.hpp"
#include "provisioner/core/text.hpp"
#include "provisioner/player/player_plan.hpp"

#include "provisioner/target/probe.hpp"

#include <cmath>
#include <cstdio>

namespace rtprov::pipeline {

namespace {

std::string ms_text(double us) {
    char text[32];
    std::snprintf(text, sizeof text, "%.2f ms", us / 1000.0);
    return text;
}

std::string sizes(const core::BufferSetting& s) {
    return s.period.to_string() + " in " + s.buffer.to_string();
}

// What one step's underrun test heard: the audio part of its report (a self-test that
// did not pass on its latency alone still played the setting through).
void judge_step(BufferStep& step, int rc, const ReadSelftestReport& read_report,
                const std::string& path) {
    using Heard = BufferStep::Heard;
    step.heard = Heard::error;
    if (rc != 0 && rc != 3) {
        step.result = "error (self-test exit " + std::to_string(rc) + ")";
        return;
    }
    try {
        const selftest::SelftestReport report = read_report(path);
        if (!report.audio) {
            step.result = "error (the underrun test did not run)";
            return;
        }
        const selftest::AudioResult& a = report.audio->result;
        if (!a.stopped_because.empty()) {
            step.result = "error (stopped: " + a.stopped_because + ")";
            return;
        }
        const std::string left = a.min_left_ms < 0
                                     ? std::string()
                                     : ", at worst " + ms_text(1000.0 * a.min_left_ms) + " left";
        if (report.audio->passed) {
            step.heard = Heard::passed;
            step.result = "passed (0 underruns" + left + ")";
        } else {
            step.heard = Heard::underran;
            step.result = std::to_string(a.underruns) +
                          (a.underruns == 1 ? " underrun" : " underruns") + left +
                          (a.underruns ? "" : ", less than the headroom asked");
        }
    } catch (const std::exception& e) {
        step.result = std::string("error (its report cannot be read: ") + e.what() + ")";
    }
}

} // namespace

std::vector<selftest::PlayerAdvice> advise_players(const std::string& sysroot,
                                                   const std::optional<core::Profile>& profile,
                                                   const std::vector<core::AppKnowledge>& apps,
                                                   double worst_us) {
    std::vector<selftest::PlayerAdvice> out;
    if (profile && profile->tuning.audio_buffers == core::BufferMode::keep)
        return out;
    core::TargetFacts facts;
    facts.mode = core::TargetMode::live;
    try {
        std::vector<std::string> units;
        if (profile)
            for (const core::ServiceTuning& service : profile->tuning.services)
                units.push_back(service.unit);
        target::probe_players(fs::Root(sysroot), units, facts);
    } catch (const std::exception& e) {
        selftest::PlayerAdvice unread;
        unread.name = "players";
        unread.problem = std::string("their configuration cannot be read: ") + e.what();
        out.push_back(std::move(unread));
        return out;
    }
    for (const player::PlayerAdvice& a : player::advise_players(
             player::players_now(facts, apps, profile ? &*profile : nullptr), worst_us)) {
        selftest::PlayerAdvice r;
        r.app = a.now.app->key;
        r.name = a.now.app->name;
        if (a.now.setting) {
            r.now = sizes(*a.now.setting);
            r.now_deadline_ms = std::round(core::buffer_deadline_us(*a.now.setting)) / 1000.0;
        }
        r.now_default = a.now.from_default;
        r.where = a.now.where;
        r.problem = a.now.problem;
        r.now_holds = a.now_holds;
        r.need_ms = std::round(a.choice.need_us) / 1000.0;
        if (a.choice.setting) {
            r.supports = sizes(*a.choice.setting);
            r.deadline_ms = std::round(a.choice.deadline_us) / 1000.0;
            r.setting = player::setting_text(a.now.stack, *a.choice.setting,
                                             a.now.where.substr(0, a.now.where.rfind(':')));
        }
        out.push_back(std::move(r));
    }
    return out;
}

std::vector<const core::ServiceTuning*> auto_players(const AppliedSystem& applied,
                                                     const std::vector<core::AppKnowledge>& apps) {
    std::vector<const core::ServiceTuning*> out;
    if (applied.profile.tuning.audio_buffers != core::BufferMode::write)
        return out;
    for (const core::ServiceTuning& service : applied.profile.tuning.services) {
        const core::AppKnowledge* app = core::find_app(apps, service.name, service.unit);
        auto stack = app ? core::buffer_stack(app->key) : std::nullopt;
        if (stack && !service.period && !service.buffer && core::default_buffers(*app) &&
            applied.facts.has_executable(player::player_program(*stack)))
            out.push_back(&service);
    }
    return out;
}

BufferChoiceOutcome choose_player_buffers(Machine& machine, const AppliedSystem& applied,
                                          const std::vector<core::AppKnowledge>& apps,
                                          const ReadSelftestReport& read_report,
                                          const std::string& profile_name,
                                          const std::vector<std::string>& sets,
                                          const std::string& host_dir, unsigned measure_s) {
    BufferChoiceOutcome out;
    const std::vector<const core::ServiceTuning*> players = auto_players(applied, apps);
    if (players.empty())
        return out;
    const std::string duration = std::to_string(measure_s);
    std::vector<std::string> summaries;
    std::vector<std::string> restart; // the units of the players a setting is written for

    // The measurement: the worst wake-up on the player's cores under load.
    machine.log.progress("buffers: measuring the worst wake-up under load");
    const std::string measured = host_dir + "/buffers-measure.json";
    const int rc = machine.rtprov.run(
        {"selftest", "--duration", duration, "--load", "--pi-probe", "0", "--json", measured});
    if (rc == 0 || rc == 3) {
        try {
            const selftest::SelftestReport report = read_report(measured);
            const selftest::Verdict v = selftest::verdict(report);
            if (v.worst)
                out.worst_us = v.worst->latency.max_us;
        } catch (const std::exception& e) {
            machine.log.warning(std::string("buffers: the measurement cannot be read: ") +
                                e.what());
        }
    }
    if (!out.worst_us) {
        out.summary = "not chosen: the measurement gave no wake-up latency (self-test exit " +
                      std::to_string(rc) + "); nothing written";
        out.details = out.summary + "\n";
        return out;
    }
    out.details = "worst wake-up under load on the player's cores: " + ms_text(*out.worst_us) +
                  "; rtprov's margin: a deadline of " + std::to_string(core::k_buffer_margin) +
                  " x that, " + ms_text(core::k_buffer_margin * *out.worst_us) + "\n";

    for (const core::ServiceTuning* service : players) {
        const core::AppKnowledge& app = *core::find_app(apps, service->name, service->unit);
        const core::BufferStack stack = *core::buffer_stack(app.key);
        const core::BufferSetting upto = *core::default_buffers(app);
        const core::BufferChoice choice = core::choose_buffers(stack, *out.worst_us);
        if (!choice.setting) {
            const std::string line = app.name + ": no setting up to the longest rtprov tries "
                                                "holds the margin; nothing written";
            out.details += line + "\n";
            summaries.push_back(line);
            continue;
        }
        std::optional<core::BufferSetting> passed;
        for (const core::BufferSetting& s : core::buffer_steps(stack, *choice.setting, upto)) {
            machine.log.progress("buffers: " + app.name + " at " + sizes(s) +
                                 ", the underrun test under load");
            const std::string report = host_dir + "/buffers-" + app.key + "-" +
                                       std::to_string(out.steps.size() + 1) + ".json";
            BufferStep step{app.name, s, BufferStep::Heard::error, ""};
            const int played =
                machine.rtprov.run({"selftest", "--duration", duration, "--load", "--pi-probe", "0",
                                    "--audio", "--stop-player", "--period", s.period.to_string(),
                                    "--buffer", s.buffer.to_string(), "--json", report});
            judge_step(step, played, read_report, report);
            out.details += app.name + " " + sizes(s) + " (deadline " +
                           ms_text(core::buffer_deadline_us(s)) + "): " + step.result + "\n";
            out.steps.push_back(step);
            if (step.heard == BufferStep::Heard::passed) {
                passed = s;
                break;
            }
            if (step.heard == BufferStep::Heard::error) // no verdict on the size: stop
                break;
        }
        if (!passed) {
            const std::string line =
                app.name + ": " +
                (out.steps.empty() || out.steps.back().heard == BufferStep::Heard::underran
                     ? "every setting up to its default " + sizes(upto) +
                           " did not pass (underruns, or less left than the headroom asked)"
                     : "the underrun test could not run (" + out.steps.back().result + ")") +
                "; nothing written";
            summaries.push_back(line);
            continue;
        }
        restart.push_back(service->unit);
        out.sets.push_back("tuning.services." + service->name +
                           ".period=" + passed->period.to_string());
        out.sets.push_back("tuning.services." + service->name +
                           ".buffer=" + passed->buffer.to_string());
        char margin[16];
        std::snprintf(margin, sizeof margin, "%.1f",
                      core::buffer_deadline_us(*passed) / *out.worst_us);
        summaries.push_back(app.name + " " + sizes(*passed) + ": 0 underruns, margin " + margin +
                            " x the worst wake-up " + ms_text(*out.worst_us));
    }
    if (!out.sets.empty()) {
        std::vector<std::string> args = {"apply", "--live", "--profile", profile_name};
        for (const std::string& set : sets)
            args.insert(args.end(), {"--set", set});
        for (const std::string& set : out.sets)
            args.insert(args.end(), {"--set", set});
        machine.log.progress("buffers: writing the chosen settings");
        if (int apply = machine.rtprov.run(args); apply != 0)
            throw Error("'rtprov apply' of the chosen buffers failed (exit " +
                        std::to_string(apply) + "); its messages are in the journal");
        // the players read the setting when they start
        if (machine.run_command)
            for (const std::string& unit : restart)
                if (int restarted = machine.run_command({"systemctl", "try-restart", unit});
                    restarted != 0)
                    machine.log.warning("buffers: 'systemctl try-restart " + unit +
                                        "' failed (exit " + std::to_string(restarted) +
                                        "): it reads the new setting at its next start");
    }
    out.summary = core::join(summaries, "; ");
    return out;
}

} // namespace rtprov::pipeline
