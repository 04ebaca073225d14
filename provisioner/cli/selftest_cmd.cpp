// SPDX-License-Identifier: Apache-2.0
// rtprov selftest: measures on this machine what the tuning promises, and keeps the
// result. The measuring is provisioner/selftest/, the choice of CPUs, limits and idle
// policies pipeline::plan_selftest_run's; this file shows progress and writes the reports.
#include "provisioner/cli/commands.hpp"
#include "provisioner/cli/environment.hpp"
#include "provisioner/cli/selftest_audio.hpp"
#include "provisioner/cli/selftest_render.hpp"
#include "provisioner/core/error.hpp"
#include "provisioner/core/fd.hpp"
#include "provisioner/core/plan.hpp"
#include "provisioner/fs/root.hpp"
#include "provisioner/pipeline/applied_system.hpp"
#include "provisioner/pipeline/buffer_choice.hpp"
#include "provisioner/pipeline/selftest_run.hpp"
#include "provisioner/profile/app_loader.hpp"
#include "provisioner/selftest/report.hpp"
#include "provisioner/selftest/timerlat_run.hpp"
#include "provisioner/selftest/timerlat_session.hpp"
#include "provisioner/system/cpus.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <set>
#include <sstream>

namespace stdfs = std::filesystem;

namespace rtprov::cli {

namespace {

// Progress on stderr: rewritten in place on a terminal, a line every 5 s otherwise (the
// journal, when first boot runs it).
selftest::ProgressCallback progress_for(std::string what) {
    bool tty = isatty(STDERR_FILENO);
    return [what = std::move(what), tty, last = -5.0](double elapsed, double total) mutable {
        double left = total - elapsed;
        if (!tty && elapsed - last < 5.0)
            return;
        last = elapsed;
        std::fprintf(stderr, "%srtprov selftest: %s: %.0f s left%s", tty ? "\r\033[K" : "",
                     what.c_str(), left < 0 ? 0.0 : left, tty ? "" : "\n");
    };
}

void end_progress() {
    if (isatty(STDERR_FILENO))
        std::fputs("\r\033[K", stderr);
}

// Set by the first SIGINT, SIGTERM or SIGHUP of a run; the run ends within a second and
// the report is made of what was measured.
std::atomic<bool> g_interrupted{false};
static_assert(std::atomic<bool>::is_always_lock_free); // async-signal-safe

extern "C" void on_interrupt(int) {
    g_interrupted.store(true);
}

// Catches those signals while it lives. SA_RESETHAND: a second Ctrl-C ends rtprov at once,
// as it would without this; not while 'keep' (a player stopped for the underrun test must
// be started again first).
class InterruptHandler {
  public:
    explicit InterruptHandler(bool keep = false) {
        struct sigaction action {};
        action.sa_handler = on_interrupt;
        action.sa_flags = keep ? 0 : static_cast<int>(SA_RESETHAND);
        sigemptyset(&action.sa_mask);
        for (std::size_t i = 0; i < std::size(k_signals); ++i)
            sigaction(k_signals[i], &action, &m_old[i]);
    }
    ~InterruptHandler() {
        for (std::size_t i = 0; i < std::size(k_signals); ++i)
            sigaction(k_signals[i], &m_old[i], nullptr);
    }
    InterruptHandler(const InterruptHandler&) = delete;
    InterruptHandler& operator=(const InterruptHandler&) = delete;

  private:
    static constexpr int k_signals[] = {SIGINT, SIGTERM, SIGHUP};
    struct sigaction m_old[std::size(k_signals)]{};
};

// "1:02:03" for 3723 s, "45 s" under a minute.
std::string clock_text(double seconds) {
    const auto s = static_cast<long long>(seconds);
    if (s < 60)
        return std::to_string(s) + " s";
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%lld:%02lld:%02lld", s / 3600, s / 60 % 60, s % 60);
    return buffer;
}

} // namespace

namespace {

// The files a run ends in: --json, --prometheus, --html, and the report kept in the
// history folder with its lines in history.tsv. A soak run rewrites them as it goes.
class ReportFiles {
  public:
    enum class Stage { so_far, final };

    // Reads the history kept so far (the trend and --compare); one that cannot be read is
    // a warning, as a history that cannot be kept.
    explicit ReportFiles(const SelftestCommand& c) : m_c(c) {
        try {
            stdfs::create_directories(c.history_dir);
            fs::Root history(c.history_dir);
            if (auto old = history.read("/history.tsv", fs::caps::k_state))
                m_past = selftest::parse_history(old->content);
        } catch (const std::exception& e) {
            warn_history(e);
        }
    }

    // Writes every file, the kept report first. Returns what could not be written of the
    // files the user named: while the run goes on that is a warning, once per file, and the
    // run goes on; at the final stage the caller shows the result first and then fails with
    // it, so a run is never lost to a file. The history adds its lines only for a final run
    // that was not interrupted: only whole runs are compared.
    std::vector<std::string> write(const selftest::SelftestReport& report, Stage stage) {
        const std::string json = selftest_json(report);
        keep(report, json, stage);
        std::vector<std::string> failed;
        auto user_file = [&](const std::string& path, auto&& content) {
            if (path.empty() || path == "-")
                return;
            try {
                write_file(path, content());
            } catch (const std::exception& e) {
                if (stage == Stage::final)
                    failed.push_back(e.what());
                else if (m_warned.insert(path).second)
                    std::cerr << "rtprov: warning: " << e.what() << "; the run goes on\n";
            }
        };
        user_file(m_c.json_file, [&] { return json; });
        user_file(m_c.prometheus_file, [&] { return selftest_prometheus(report); });
        user_file(m_c.html_file, [&] { return selftest_html(report, m_past); });
        return failed;
    }

    // Keeps 'trace' (a stopped run's last trace lines) beside the report, as
    // '<report name>.trace.txt'; returns its path, "" (with a warning) when it cannot.
    std::string keep_trace(const selftest::SelftestReport& report, const std::string& trace) {
        try {
            fs::Root history(m_c.history_dir);
            name(report, history);
            const std::string file = m_name.substr(0, m_name.size() - 5) + ".trace.txt";
            core::FileState state;
            state.content = trace;
            history.write("/" + file, state);
            return (stdfs::path(m_c.history_dir) / file).string();
        } catch (const std::exception& e) {
            warn_history(e);
            return "";
        }
    }

    const std::vector<selftest::HistoryEntry>& past() const { return m_past; }
    // The kept report's path, "" when it could not be kept.
    std::string kept_as() const {
        return m_name.empty() ? "" : (stdfs::path(m_c.history_dir) / m_name).string();
    }

  private:
    void keep(const selftest::SelftestReport& report, const std::string& json, Stage stage) {
        if (m_history_failed)
            return;
        try {
            fs::Root history(m_c.history_dir);
            name(report, history);
            core::FileState state;
            state.content = json;
            history.write("/" + m_name, state);
            if (stage == Stage::final && !report.interrupted) {
                // Read again under a lock of the folder: another run may have added its
                // lines since this one began, and would lose them to a copy made then.
                const core::Fd folder = history.open_folder();
                if (flock(folder.get(), LOCK_EX) != 0)
                    throw Error("cannot lock " + quoted(m_c.history_dir) + ": " +
                                std::strerror(errno));
                std::vector<selftest::HistoryEntry> now;
                if (auto old = history.read("/history.tsv", fs::caps::k_state))
                    now = selftest::parse_history(old->content);
                state.content = selftest::format_history(now) +
                                selftest::format_history(selftest::history_entries(report));
                history.write("/history.tsv", state);
            }
        } catch (const std::exception& e) {
            m_name.clear();
            m_history_failed = true;
            warn_history(e);
        }
    }

    // The report's name in the history, chosen once: ISO 8601's basic format
    // (20261203T142638Z.json), no colons, which FAT (a USB stick), Windows and scp's
    // HOST:PATH read otherwise. Two runs in the same second keep both reports.
    void name(const selftest::SelftestReport& report, const fs::Root& history) {
        if (!m_name.empty())
            return;
        // Claimed by creating it (O_EXCL): two runs started in the same second would
        // otherwise both find the name free and keep one report.
        std::string stamp = utc_text(report.started_unix, "%Y%m%dT%H%M%SZ");
        const core::Fd folder = history.open_folder();
        for (int n = 1;; ++n) {
            const std::string name = stamp + (n == 1 ? "" : "-" + std::to_string(n)) + ".json";
            const core::Fd claimed(openat(folder.get(), name.c_str(),
                                          O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                                          0644));
            if (claimed.get() >= 0) {
                m_name = name;
                return;
            }
            if (errno != EEXIST)
                throw Error("cannot create " + quoted(history.shown("/" + name)) + ": " +
                            std::strerror(errno));
        }
    }

    void warn_history(const std::exception& e) const {
        std::cerr << "rtprov: warning: cannot keep the report in " << quoted(m_c.history_dir)
                  << ": " << e.what() << "; pass --history DIR, ignoring\n";
    }

    const SelftestCommand& m_c;
    std::vector<selftest::HistoryEntry> m_past;
    std::string m_name;
    bool m_history_failed = false;
    std::set<std::string> m_warned;
};

// A core's figures so far in a soak run's summary line.
std::string summary_text(const selftest::CoreReport& c) {
    const selftest::CoreLatency& l = c.latency;
    return "CPU " + std::to_string(l.cpu) + " max " + fixed(l.max_us, 0) + " µs, p99 " +
           fixed(l.p99_us, 0) + " µs, " + std::to_string(l.overruns) + " missed" +
           (c.passed ? ""
                     : " (over its limit of " + std::to_string(c.threshold_us) + " µs" +
                           (c.missed_too_many ? " or missing wake-ups" : "") + ")");
}

} // namespace

void add_selftest_options(CLI::App& command, SelftestCommand& c) {
    c.app = &command;
    auto* app = c.app;
    app->add_option("--cpus", c.cpus,
                    "CPUs to measure (default: every reserved core and one housekeeping core "
                    "of the applied profile; without one, every CPU)")
        ->type_name("LIST");
    app->add_option("--duration", c.duration_s,
                    "Seconds per idle policy, up to a week (default: the profile's "
                    "selftest.duration_s, 10); Ctrl-C ends a run early with a complete report "
                    "of what was measured")
        ->check(CLI::Range(1u, core::k_max_selftest_duration_s))
        ->type_name("SECONDS");
    app->add_option("--summary", c.summary_s,
                    "Every SECONDS, print a summary line and rewrite the report files "
                    "(--json, --html, --prometheus and the kept report) with what was measured "
                    "so far (default: 60 for runs longer than 10 minutes, else never; 0: never)")
        ->check(CLI::Range(0u, core::k_max_selftest_duration_s))
        ->type_name("SECONDS");
    app->add_option("--interval", c.interval_us,
                    "Microseconds between wake-ups (default: the profile's, 100)")
        ->check(CLI::Range(20u, 1000000u))
        ->type_name("US");
    app->add_option("--priority", c.priority, "SCHED_FIFO priority of the measuring threads")
        ->check(CLI::Range(1, 99))
        ->capture_default_str();
    app->add_option("--idle", c.idle,
                    "Idle policy: default (deep idle allowed, as the box runs), held "
                    "(/dev/cpu_dma_latency held at 0, like cyclictest), or both")
        ->check(CLI::IsMember({"default", "held", "both"}))
        ->capture_default_str();
    app->add_flag("--load", c.load,
                  "Load the housekeeping cores (or the CPUs not measured) while measuring");
    app->add_option("--stop-above", c.stop_above_us,
                    "Stop the run at the first wake-up later than US microseconds (as "
                    "cyclictest --breaktrace), on any measured CPU; the report says which and "
                    "when, and the rest (the other idle policy too) is not measured")
        ->check(CLI::Range(1u, 10'000'000u))
        ->type_name("US");
    app->add_flag("--trace", c.trace,
                  "Measure with the kernel's timerlat tracer, in a tracefs instance of its own, "
                  "and say why each core's worst wake-up was late: the timer's IRQ, exit from "
                  "idle, and the IRQs, softirqs and threads in the way, by name; where the "
                  "kernel has no such tracer the report says so and rtprov measures as "
                  "without --trace");
    app->add_option("--pi-probe", c.pi_probe_s, "Seconds of PI-boost probe; 0 leaves it out")
        ->check(CLI::Range(0u, 3600u))
        ->capture_default_str()
        ->type_name("SECONDS");
    app->add_option("--json", c.json_file, "Also write the report as JSON to FILE ('-': stdout)")
        ->type_name("FILE");
    app->add_option("--prometheus", c.prometheus_file,
                    "Also write the result in node-exporter textfile format to FILE")
        ->check(output_file_name_problem)
        ->type_name("FILE");
    app->add_option("--html", c.html_file,
                    "Also write the report as one self-contained HTML page to FILE: the "
                    "verdict, histograms, kernel facts and the trend of earlier runs")
        ->check(output_file_name_problem)
        ->type_name("FILE");
    app->add_flag("--compare", c.compare,
                  "Compare with the last run with the same CPU, duration, interval, priority, "
                  "load and idle policy");
    app->add_option("--history", c.history_dir, "Where reports are kept")
        ->capture_default_str()
        ->type_name("DIR");
    auto* audio =
        app->add_option("--audio", c.audio,
                        "Also play to a sound card for the whole run, as the profile's player "
                        "would (its period, buffer, thread priority and CPUs, memory locked), "
                        "and count the underruns a listener would hear; DEVICE: an ALSA name "
                        "(hw:CARD=DAC,DEV=0), 'loopback' (loads snd-aloop: the scheduling "
                        "without a DAC), or none for tuning.selftest.audio_device, else the "
                        "only playback card")
            ->expected(0, 1)
            ->type_name("[DEVICE]");
    app->add_flag("--tone", c.tone,
                  "Play a quiet 440 Hz sine (-30 dBFS) instead of digital silence")
        ->needs(audio);
    app->add_option("--period", c.period,
                    "The ALSA period to play with, e.g. 125ms or 1024frames (default: the "
                    "player's; a quarter of --buffer when only that is given)")
        ->needs(audio)
        ->type_name("SIZE");
    app->add_option("--buffer", c.buffer,
                    "The ALSA buffer to play with, e.g. 500ms or 2048frames (default: the "
                    "player's; four periods when only --period is given)")
        ->needs(audio)
        ->type_name("SIZE");
    app->add_flag("--stop-player", c.stop_player,
                  "When a service holds the card, stop it for the run and start it again "
                  "afterwards, however the run ends (Ctrl-C, SIGTERM, a failure)")
        ->needs(audio);
    app->add_option("--sysroot", c.sysroot,
                    "Read the applied profile and /sys from DIR instead of '/' (the "
                    "measurement itself always runs on this machine)")
        ->type_name("DIR");
}

int run_selftest(const SelftestCommand& c) {
    // the files the run ends in: refused now, not after minutes of measuring
    for (const std::string* file : {&c.json_file, &c.prometheus_file, &c.html_file})
        if (!file->empty() && *file != "-")
            check_output_file(*file);
    if (c.app->count("--sysroot") > 0)
        check_sysroot(c.sysroot, {"sys/devices/system/cpu/online"}, "use this machine's");
    std::optional<core::Profile> profile = pipeline::applied_profile(c.sysroot);
    auto given = [&c](const char* option, unsigned value) {
        return c.app->count(option) > 0 ? std::optional<unsigned>(value) : std::nullopt;
    };
    const pipeline::SelftestRequest request{c.cpus,
                                            given("--duration", c.duration_s),
                                            given("--interval", c.interval_us),
                                            c.priority,
                                            c.idle,
                                            c.load,
                                            c.stop_above_us,
                                            given("--summary", c.summary_s)};
    pipeline::SelftestRun run = pipeline::plan_selftest_run(
        request, profile, system::read_cpus(system::SysRoot(c.sysroot)));

    selftest::SelftestReport report;
    report.started_unix = now_unix();
    report.started_at = utc_text(report.started_unix);
    report.profile = profile ? profile->name : "";
    utsname names{};
    uname(&names);
    report.kernel_release = names.release;
    report.kernel = selftest::read_kernel_context(
        (stdfs::path(c.sysroot) / "sys/kernel/debug/sched/features").string());
    const selftest::Thresholds& thresholds = run.thresholds;
    const unsigned duration_s = run.duration_s;
    selftest::LatencyOptions& options = run.options;
    report.parameters = run.parameters();

    // --trace: the kernel's tracer measures where this kernel has it; where it has not, the
    // report says why and rtprov's own threads measure (never a cause guessed).
    std::string tracefs;
    report.trace.asked = c.trace;
    if (c.trace) {
        core::Result<std::string> found = selftest::find_timerlat();
        if (found) {
            tracefs = *found;
            report.trace.traced = true;
            report.parameters.method = "timerlat";
        } else {
            report.trace.not_traced_because = found.problem;
            std::cerr << "rtprov selftest: not traced: " << found.problem
                      << "; measuring with rtprov's own threads\n";
        }
    }
    pipeline::schedule_selftest_run(run, request);
    const std::vector<selftest::IdlePolicy>& policies = run.policies;
    const unsigned total_s = run.total_s, summary_s = run.summary_s;

    // --audio: the device is chosen and made free (the player stopped) before the run;
    // the signals are caught from here, so that no Ctrl-C leaves a player stopped.
    const pipeline::AudioRequest audio_request{
        c.app->count("--audio") > 0 ? std::optional<std::string>(c.audio) : std::nullopt, c.tone,
        c.app->count("--period") > 0 ? std::optional<std::string>(c.period) : std::nullopt,
        c.app->count("--buffer") > 0 ? std::optional<std::string>(c.buffer) : std::nullopt,
        c.stop_player};
    std::optional<pipeline::AudioPlan> audio_plan;
    if (audio_request.device)
        audio_plan = pipeline::plan_audio(audio_request, profile, run.roles,
                                          profile::load_apps(data_dir("apps")));
    // The holders of a card are read under --sysroot, but systemctl and modprobe act on
    // this machine: never on the word of another tree.
    std::error_code same_ec;
    const bool this_machine = stdfs::equivalent(c.sysroot, "/", same_ec);
    if (audio_plan && audio_plan->stop_player && !this_machine)
        throw UsageError("--stop-player",
                         "it stops and starts services on this machine, but --sysroot " +
                             quoted(c.sysroot) +
                             " is another tree, whose /proc rtprov read: rtprov does not act "
                             "on a machine it did not read; leave --sysroot out, or free the "
                             "card by hand");
    InterruptHandler interrupt_handler(audio_plan && audio_plan->stop_player);
    g_interrupted.store(false);
    std::optional<AudioSession> audio;
    if (audio_plan) {
        audio.emplace(*audio_plan, c.sysroot, this_machine);
        std::cerr << "rtprov selftest: playing to " << quoted(audio->device()) << " ("
                  << audio->note() << ") with " << audio_plan->sizes_from << ": a "
                  << audio_plan->options.period.to_string() << " period in a "
                  << audio_plan->options.buffer.to_string() << " buffer, "
                  << core::to_string(audio_plan->options.policy) << " "
                  << audio_plan->options.priority << " (" << audio_plan->thread_from << ")"
                  << (audio_plan->options.cpus.empty()
                          ? std::string()
                          : " on CPUs " + audio_plan->options.cpus.to_string())
                  << "\n";
    }

    if (audio) // it plays, or its failure is said before anything is measured
        audio->start(std::chrono::milliseconds(std::uint64_t(total_s) * 1000), c.load,
                     options.load_cpus);
    ReportFiles files(c);
    std::cerr << "rtprov selftest: measuring CPUs " << options.cpus.to_string() << " for "
              << clock_text(total_s)
              << (c.pi_probe_s
                      ? ", then the PI-boost probe for " + std::to_string(c.pi_probe_s) + " s"
                      : std::string())
              << (summary_s ? "; a summary every " + clock_text(summary_s) : std::string())
              << "; Ctrl-C ends it early with a report of what was measured\n";
    options.interrupt = &g_interrupted;
    options.summary_every = std::chrono::seconds(summary_s);
    for (std::size_t i = 0; i < policies.size() && !g_interrupted.load(); ++i) {
        options.idle = policies[i];
        const std::string policy_name(selftest::to_string(policies[i]));
        // A soak run's summary: a line on stderr, and every report file rewritten with
        // what was measured so far, so that a run cut off (power, a kill) leaves one.
        options.on_summary = [&](const std::vector<selftest::CoreLatency>& so_far,
                                 double elapsed_s) {
            selftest::SelftestReport partial = report;
            for (const selftest::CoreLatency& latency : so_far)
                partial.cores.push_back(
                    selftest::judge_core(run.role_of(latency.cpu), latency, thresholds));
            partial.complete = false;
            selftest::conclude(partial);
            end_progress();
            std::string line = "rtprov selftest: " + clock_text(elapsed_s) + " of " +
                               clock_text(duration_s) + ", idle " + policy_name + ":";
            for (std::size_t k = report.cores.size(); k < partial.cores.size(); ++k)
                line += (k == report.cores.size() ? " " : "; ") + summary_text(partial.cores[k]);
            std::cerr << line << "\n";
            files.write(partial, ReportFiles::Stage::so_far);
        };
        const selftest::ProgressCallback progress =
            progress_for((tracefs.empty() ? "latency, idle " : "timerlat, idle ") + policy_name);
        std::vector<selftest::CoreLatency> results;
        if (tracefs.empty()) {
            results = selftest::run_latency(options, progress);
        } else {
            selftest::TracedRun traced =
                selftest::run_traced_latency(options, tracefs, run.stack_above_us, progress);
            results = std::move(traced.cores);
            report.trace.lost_events += traced.lost_events;
            report.trace.unparsed_lines += traced.unparsed_lines;
            if (!traced.kept_trace.empty())
                report.trace.kept_trace = files.keep_trace(report, traced.kept_trace);
        }
        end_progress();
        bool stopped = false;
        for (selftest::CoreLatency& latency : results) {
            unsigned cpu = latency.cpu;
            stopped = stopped || latency.stopped_run;
            report.cores.push_back(
                selftest::judge_core(run.role_of(cpu), std::move(latency), thresholds));
        }
        if (stopped)
            break; // what --stop-above was for: the rest is not measured
    }
    if (audio) {
        selftest::AudioResult played = audio->finish();
        played.interrupted = played.interrupted || g_interrupted.load();
        report.audio = selftest::judge_audio(std::move(played), audio->min_headroom_percent());
        audio.reset(); // the player starts again now, before the probe
    }
    report.interrupted = g_interrupted.load();
    if (c.pi_probe_s > 0 && !report.interrupted) {
        selftest::PiProbeOptions probe;
        probe.duration = std::chrono::milliseconds(std::uint64_t(c.pi_probe_s) * 1000);
        probe.interrupt = &g_interrupted;
        // The probe watches its own threads: always this machine's /proc.
        auto result = selftest::run_pi_probe(probe, progress_for("PI-boost probe"));
        end_progress();
        report.pi_probe = selftest::judge_pi_probe(std::move(result), thresholds);
        report.interrupted = g_interrupted.load();
    }
    selftest::conclude(report);
    // The players' buffers against this run's worst wake-up on their cores
    // (docs/audio-buffers.md): advice, not part of the verdict.
    if (const selftest::Verdict v = selftest::verdict(report); v.worst && !report.interrupted)
        report.players = pipeline::advise_players(
            c.sysroot, profile, profile::load_apps(data_dir("apps")), v.worst->latency.max_us);
    if (report.interrupted)
        std::cerr << "rtprov selftest: interrupted; the report holds what was measured\n";

    std::ostream& out = c.json_file == "-" ? std::cerr : std::cout;
    const std::vector<std::string> unwritten = files.write(report, ReportFiles::Stage::final);
    out << selftest_text(report);
    if (!files.kept_as().empty())
        out << "report kept in " << files.kept_as()
            << (report.interrupted ? " (interrupted: not added to the history of comparable runs)"
                                   : "")
            << "\n";
    if (c.compare)
        out << comparison_text(selftest::compare(report, files.past()));
    if (c.json_file == "-")
        std::cout << selftest_json(report);
    if (!unwritten.empty()) {
        std::string all;
        for (const std::string& e : unwritten)
            all += (all.empty() ? "" : "; ") + e;
        throw Error(all + (files.kept_as().empty()
                               ? std::string()
                               : " (the report is kept in " + files.kept_as() + ")"));
    }
    return report.passed ? k_exit_ok : k_exit_not_passed;
}

} // namespace rtprov::cli
