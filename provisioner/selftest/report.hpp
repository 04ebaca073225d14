// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/selftest/audio_run.hpp"
#include "provisioner/selftest/latency_run.hpp"
#include "provisioner/selftest/pi_probe.hpp"

#include <optional>
#include <string>
#include <vector>

// What one `rtprov selftest` run found, judged against the profile's thresholds, and
// how it compares with the last run measured the same way.
namespace rtprov::selftest {

// Why a CPU was measured: it is reserved for the audio services, it does the
// housekeeping, or no profile gives it a role (none is applied, or the CPU is in neither
// list). An unassigned CPU is judged as a reserved one: on an audio box a CPU may run
// audio unless the profile says it does the housekeeping.
enum class CoreRole { reserved, housekeeping, unassigned };
std::string_view to_string(CoreRole role);

// Everything that makes two runs comparable (like with like: on the reference box the
// same core measures 43 µs or 211 µs depending on the idle policy alone).
struct RunParameters {
    unsigned duration_ms = 10'000;
    unsigned interval_us = 100;
    int priority = 99;
    std::string load_cpus;      // CPU list with the load generator, "" for none
    unsigned stop_above_us = 0; // --stop-above; 0: the run goes its whole duration
    // Who woke and timed the measuring threads: "rtprov" (its own threads) or "timerlat"
    // (the kernel's tracer, --trace); the two compare only with their own kind.
    std::string method = "rtprov";
    // "duration=10000ms interval=100us priority=99 load=none" (and " stop_above=Nus" for a
    // run that may stop early, " method=timerlat" for a traced one: each compares only
    // with its own kind); the idle policy and the CPU are part of each core's key.
    std::string key() const;
};

// A second of the run with a wake-up above the core's limit or a missed one.
struct LateSecond {
    unsigned at_s = 0;        // whole seconds from the start
    std::uint32_t max_us = 0; // its largest latency, rounded up to the µs
    std::uint32_t missed = 0; // planned wake-ups missed in it
};

struct CoreReport {
    CoreRole role = CoreRole::unassigned;
    CoreLatency latency;
    CoreRole threshold_role = CoreRole::reserved; // whose limit applies: reserved or
                                                  // housekeeping (unassigned: reserved)
    unsigned threshold_us = 0;                    // the largest latency that passes
    std::uint64_t above = 0;                      // samples above the threshold
    // Planned wake-ups: the samples taken plus those skipped (latency.overruns, "missed").
    std::uint64_t planned = 0;
    unsigned max_missed_per_mille = 0;    // the most missed wake-ups that pass, per 1000 planned
    bool missed_too_many = false;         // latency.overruns above that
    bool passed = false;                  // nothing above the threshold, not too many missed
    std::vector<LateSecond> late_seconds; // when in the run it went over or missed, in order:
                                          // the k_max_late_seconds worst when there were more
    std::uint64_t late_seconds_total = 0; // how many seconds went over or missed

    // Missed wake-ups in percent of the planned ones; 0 when none was planned.
    double missed_percent() const;
};

struct PiProbeReport {
    PiProbeResult result;
    double limit_us = 0; // the longest wait for the lock that passes
    bool passed = false; // no starved window and no wait above the limit
};

// The trace a run asked for (--trace): whether the kernel's timerlat tracer measured it,
// or why not.
struct TraceReport {
    bool asked = false;
    bool traced = false;
    std::string not_traced_because;   // asked and not traced: why, and which kernels have it
    std::uint64_t lost_events = 0;    // the kernel dropped these: the causes may be short
    std::uint64_t unparsed_lines = 0; // trace lines rtprov could not read: the same
    std::string kept_trace;           // the file holding the trace's last lines (a stopped run)
};

// One player's buffers against a measured worst wake-up (pipeline::advise_players).
struct PlayerAdvice {
    std::string app;            // 'mpd', the app table's key
    std::string name;           // 'MPD'
    std::string now;            // what it runs with, '125ms in 500ms'; "" when not known
    bool now_default = false;   // 'now' is the player's own default: nothing is set
    double now_deadline_ms = 0; // the deadline 'now' leaves (buffer - period); 0: not known
    std::string where;          // "file:line" of the setting, or the file that would hold it
    std::string problem;        // why 'now' is not known
    // 'now' leaves a deadline of at least rtprov's margin times the worst wake-up;
    // nullopt: 'now' not known
    std::optional<bool> now_holds;
    std::string supports;   // the shortest setting the rule allows; "" none it tries does
    double need_ms = 0;     // the deadline the rule asks for (margin x worst wake-up)
    double deadline_ms = 0; // the deadline of 'supports' (buffer - period)
    std::string setting;    // the exact setting that gives 'supports', where the player reads it
};

// The underrun test judged: what a listener would have heard.
struct AudioReport {
    AudioResult result; // its times in whole µs (ms to 3 decimals, s to 3); its seconds the
                        // k_max_report_audio_seconds worst when there were more
    std::uint64_t seconds_total = 0;    // seconds the test gave (result.seconds before the cap)
    unsigned min_headroom_percent = 25; // tuning.selftest.audio_min_headroom_percent
    double min_headroom_ms = 0;         // that percent of the buffer, in ms (whole µs)
    bool passed = false;                // see audio_passes()
};

// The seconds of the audio test a report keeps: the worst (most underruns, then the least
// audio left) when there were more, as for the late seconds.
inline constexpr std::size_t k_max_report_audio_seconds = 3600;

struct SelftestReport {
    std::string started_at;        // UTC, ISO 8601
    std::int64_t started_unix = 0; // the same, in seconds since 1970
    std::string profile;           // the applied profile's name, "" without one
    std::string kernel_release;
    KernelContext kernel;
    RunParameters parameters;
    std::vector<CoreReport> cores; // per CPU and idle policy, in the order measured
    std::optional<PiProbeReport> pi_probe;
    std::optional<AudioReport> audio; // the underrun test; nullopt: not run
    // Each installed player's buffers against this run's worst wake-up
    // (tuning.audio.buffers 'advise' or 'write'; docs/audio-buffers.md). Advice, not
    // judged: 'passed' does not follow from it.
    std::vector<PlayerAdvice> players;
    TraceReport trace;
    // false: a snapshot of a run still going (a soak run's report, rewritten as it goes)
    bool complete = true;
    bool interrupted = false; // ended early by a signal (Ctrl-C): measured less than asked
    bool passed = false;      // complete, not cut short, every core, the probe and the audio passed
};

struct Thresholds {
    unsigned reserved_us = 500; // also used for unassigned CPUs
    unsigned housekeeping_us = 10'000;
    // A wake-up more than a whole interval late hides the ones it passed: they are not
    // measured at all, so a core can show a fine maximum while its thread missed a fifth
    // of its wake-ups. Per mille of the planned wake-ups (10: 1 %).
    unsigned max_missed_per_mille = 10;
};

// The late seconds a report keeps per core: a week-long run on a bad box can have one in
// every second, and a report is read back on a small board.
inline constexpr std::size_t k_max_late_seconds = 3600;

// Judges one core's result: it passes when it took samples, none is above its role's
// limit and it missed at most 'max_missed_per_mille' of its planned wake-ups. Pure.
CoreReport judge_core(CoreRole role, CoreLatency latency, const Thresholds& thresholds);

// The rules judge_core() and judge_pi_probe() apply, for a report read back. Pure.
bool core_passes(const CoreReport& core);
bool probe_passes(const PiProbeReport& probe);

// Judges the probe: a lock holder boosted by priority inheritance should run at once, so
// the RT thread should wait at most one critical section plus the worst wake-up latency
// tolerated on a housekeeping core; a schedstat window showing a thread runnable but
// not running is the starvation of the RT_PUSH_IPI regression (LKML, 2026-08-14).
// Pure.
PiProbeReport judge_pi_probe(PiProbeResult result, const Thresholds& thresholds);

// Judges the underrun test: it passes when it played (a frame was written), the device did
// not stop it early, no write underran, and at every write at least 'min_headroom_percent'
// of the buffer was left to play. Its times are rounded to whole µs, as the report keeps
// them, so a report read back is judged alike. Pure.
AudioReport judge_audio(AudioResult result, unsigned min_headroom_percent);

// The rule judge_audio() applies, for a report read back. Pure.
bool audio_passes(const AudioReport& audio);

// Sets 'passed' from the parts: the run is complete and was not interrupted, every core
// passed and none stopped the run (--stop-above), and the probe and the audio test (each
// when it ran) passed. Pure.
void conclude(SelftestReport& report);

// Everything that makes two audio tests comparable: the device and what it took (rate,
// format, channels, period, buffer), the playing thread (policy, priority, CPUs), and the
// run around it (RunParameters::key(): its duration, load and the measuring threads, which
// compete with the player). No tab or newline: "audio device=hw:CARD=DAC,DEV=0
// rate=48000 format=S32_LE channels=2 period=1024frames buffer=4096frames policy=fifo
// priority=40 cpus=2-3; duration=10000ms ...". Pure.
std::string audio_key(const AudioResult& result, const RunParameters& parameters);

// The audio test's part of a history line.
struct AudioHistory {
    std::uint64_t underruns = 0;
    double min_left_ms = -1; // -1: none measured
    double longest_gap_ms = 0;
};

// One line of the history: a core's result in a past run, or (audio set) its audio test's.
struct HistoryEntry {
    std::string started_at;
    std::string parameters; // RunParameters::key(); for the audio test audio_key()
    unsigned cpu = 0;       // a core's line: the core, its idle policy and latencies
    std::string idle;       // to_string(IdlePolicy)
    double avg_us = 0;
    double p99_us = 0;
    double max_us = 0;
    bool passed = false;
    std::optional<AudioHistory> audio; // set: the audio test's line (cpu to max_us unused)
};

// The history lines of 'report', one per core and idle policy, then the audio test's. Pure.
std::vector<HistoryEntry> history_entries(const SelftestReport& report);

// 'history.tsv' text for 'entries' (tab-separated, one line each) and back. Lines that do
// not parse are skipped (a hand-edited or truncated file must not stop a self-test). A
// core's line has 8 fields (as since the first history); the audio test's has 7, the third
// 'audio', so a reader that knows only core lines skips it.
std::string format_history(const std::vector<HistoryEntry>& entries);
std::vector<HistoryEntry> parse_history(const std::string& text);

// A core of this run (or its audio test) next to the same core, idle policy and parameters
// (the same audio key) in the latest earlier run that has them.
struct Comparison {
    HistoryEntry now;
    std::optional<HistoryEntry> before; // nullopt: no such earlier run
};

// Compares each core of 'report', then its audio test, with 'history' (the earlier runs,
// oldest first; the report's own lines are not in it). Pure.
std::vector<Comparison> compare(const SelftestReport& report,
                                const std::vector<HistoryEntry>& history);

// What a run means for an audio player, in numbers the verdict words are made from.
// The player's threads run on the reserved cores (every measured core when none is
// reserved); the latency that counts is the worst one there under the idle policy the
// box runs with ('default' when it was measured, else 'held').
struct Verdict {
    const CoreReport* worst = nullptr; // the core with the worst wake-up; null: no sample
    // The shortest ALSA period, in frames at 'rate' Hz, that this wake-up latency leaves
    // safe (safe_period_frames); 0: none up to k_max_period_frames.
    unsigned period_frames = 0;
    unsigned rate = 48000;
    // Cores whose thread missed more wake-ups than their limit (a whole interval late):
    // no period is safe while one does.
    std::vector<const CoreReport*> missed;
    // Cores with no sample or a wake-up over their limit: no period is promised either.
    std::vector<const CoreReport*> failed;
};

inline constexpr unsigned k_min_period_frames = 32;
inline constexpr unsigned k_max_period_frames = 8192;

// The shortest power-of-two period from k_min_period_frames frames in which a wake-up
// 'worst_us' late takes at most half the period: with the usual two periods per buffer,
// the player must write the next period within one period of the wake-up, and the other
// half is left for its own work. 0 when no period up to k_max_period_frames is.
unsigned safe_period_frames(double worst_us, unsigned rate);

Verdict verdict(const SelftestReport& report, unsigned rate = 48000);

} // namespace rtprov::selftest
