// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/core/audio_size.hpp"
#include "provisioner/core/cpu_list.hpp"
#include "provisioner/core/sched_policy.hpp"
#include "provisioner/selftest/pinned_thread.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

// The underrun test: plays to an ALSA playback device for a while as a player would (its
// period and buffer, its thread's policy, priority and CPUs, memory locked) and counts
// what a listener would hear. alsa-lib (libasound.so.2) is loaded at the first run.
namespace rtprov::selftest {

// What the controlling side may watch while the audio plays: written by the playing thread
// without allocating or blocking, read by any other thread.
struct AudioLive {
    std::atomic<std::uint64_t> underruns{0}; // incremented (relaxed) at each underrun
    std::atomic<int> player_tid{0};          // the playing thread's tid once it runs; 0 before
};

struct AudioOptions {
    std::string device;           // an ALSA PCM name: 'hw:CARD=DAC,DEV=0', 'pipewire', 'jack'
    core::AudioSize period;       // asked; the device may round it (AudioResult has what it took)
    core::AudioSize buffer;       // the whole ring; at least two periods
    std::optional<unsigned> rate; // nullopt: the device's own (native) rate
    bool tone = false;            // a quiet sine instead of digital silence
    // The playing thread, as the player's output thread runs.
    core::SchedPolicy policy = core::SchedPolicy::fifo;
    int priority = 40;
    core::CpuList cpus; // its affinity; empty: not pinned
    std::chrono::milliseconds duration{10'000};
    const std::atomic<bool>* interrupt = nullptr; // set: stop at the next period
    AudioLive* live = nullptr;                    // set: kept up to date while playing
    // Set once the device is open and set up and the playing thread runs: a caller playing
    // beside other work waits for it (or for run_audio's exception) before starting that.
    std::atomic<bool>* playing = nullptr;
};

// A thread on the playing thread's CPUs when an underrun was seen: one that could take the
// CPU from the player (real-time) or was waiting for a CPU there (runnable).
struct RunningThread {
    int pid = 0;
    int tid = 0;
    std::string comm;                                                   // on one line
    std::optional<core::SchedPolicy> policy = core::SchedPolicy::other; // nullopt: a number
                                                                        // the kernel names not
    int priority = 0; // rt_priority: 1-99 for fifo and rr, else 0
    unsigned cpu = 0; // the CPU it last ran on
    char state = 'R'; // as /proc shows it: 'R' runnable, 'S' sleeping, 'D' waiting on I/O
};

// What ran on the playing thread's CPUs when an underrun was seen (looked at within a poll,
// about 20 ms, of it): the other threads there that were real-time or runnable.
struct WhatRan {
    std::string cpus;                   // the CPUs looked at, a list: the player's, or all
                                        // online ones when it was not pinned
    std::vector<RunningThread> threads; // the highest priority first; at most
                                        // k_max_running_threads
    std::uint64_t more = 0;             // left out past those
};

inline constexpr std::size_t k_max_running_threads = 8;
// What ran is looked at for the first underruns only: the first are the story, and looking
// costs a read of every thread's stat beside the audio.
inline constexpr std::size_t k_max_underruns_looked_at = 10;

// An underrun: the write found the ring empty (-EPIPE) and the stream was recovered.
struct Underrun {
    double at_s = 0;        // from the start of playback
    double recovery_ms = 0; // from the failed write to the stream playing again
    std::optional<WhatRan> running =
        std::nullopt; // for the first k_max_underruns_looked_at, when looked at
};

// A second of playback: the least audio left in the ring at any write in it.
struct AudioSecond {
    unsigned at_s = 0;
    double min_left_ms = 0;
    std::uint32_t underruns = 0;
};

struct AudioResult {
    std::string device;    // as opened
    std::string card;      // the card's name as alsa-lib reports it; "" for a server's PCM
    std::string through;   // "" straight to the card, "pipewire" or "jack": a server's PCM
    bool loopback = false; // snd-aloop: the scheduling is measured, not a DAC's path
    unsigned rate = 0;     // what the device took
    std::string format;    // 'S16_LE', 'S32_LE', ...
    unsigned channels = 0;
    unsigned period_frames = 0; // what the device took
    unsigned buffer_frames = 0;
    core::SchedPolicy policy = core::SchedPolicy::fifo;
    int priority = 0;
    std::string cpus; // the playing thread's CPUs, as a list; "" not pinned
    bool memory_locked = false;
    double played_s = 0; // from the first write to the last
    std::uint64_t frames_written = 0;
    std::uint64_t underruns = 0;  // every -EPIPE of a write
    double recovery_ms_total = 0; // time lost to recovering them
    double recovery_ms_max = 0;
    double longest_gap_ms = 0; // between the starts of two writes
    double min_left_ms = -1;   // the least audio in the ring at a write; -1: none measured
    double min_left_at_s = 0;
    std::vector<Underrun> underrun_list;       // in order; the first k_max_audio_events
    std::vector<AudioSecond> seconds;          // in order; at most k_max_audio_seconds
    std::optional<std::uint64_t> server_xruns; // the sound server's own count, where it has one
    // The playing thread's own CPU time (CLOCK_THREAD_CPUTIME_ID), from its start to its
    // end: what the test costs per second of audio (bench/audio-cpu.sh).
    double cpu_ms = 0;
    bool interrupted = false;
    std::string stopped_because; // "" it played its whole duration; else why not (the device
                                 // went away, an error of the device), one line

    double ms_of(std::uint64_t frames) const; // at 'rate'
};

inline constexpr std::size_t k_max_audio_events = 1000;
inline constexpr std::size_t k_max_audio_seconds = 7 * 24 * 3600;

// Plays for options.duration (or until *options.interrupt), calling 'progress' about once
// a second from the calling thread. Throws rtprov::Error when the device cannot be opened
// or takes none of the formats, rates or sizes asked (the message names the device and
// what to do: "busy" is the caller's to explain, see system/pcm_holders.hpp), or the
// thread cannot get its policy. A device that fails during the run ends the run early
// with 'stopped_because' set, not an exception: what was measured is kept.
AudioResult run_audio(const AudioOptions& options, const ProgressCallback& progress);

} // namespace rtprov::selftest
