// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/core/cpu_list.hpp"
#include "provisioner/pipeline/selftest_run.hpp"
#include "provisioner/selftest/audio_run.hpp"
#include "provisioner/selftest/load.hpp"
#include "provisioner/selftest/underrun_watch.hpp"

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

// The underrun test around a self-test run (rtprov selftest --audio): the device chosen,
// the player that holds it stopped for the run and started again, the file-reading load,
// and the playing, in a thread of its own beside the latency measurement.
namespace rtprov::cli {

class AudioSession {
  public:
    // Chooses the device ('loopback' loads snd-aloop first) and makes it free: a device a
    // sound server holds is played to through the server's ALSA plugin, one a service
    // holds is refused unless the plan says --stop-player, which stops the service (and
    // its socket) here. Throws rtprov::Error with the whole refusal; nothing is stopped
    // then. 'this_machine': 'sysroot' is this machine's root; otherwise no module is
    // loaded here on its word ('loopback' is refused when the tree has no such card).
    AudioSession(pipeline::AudioPlan plan, const std::string& sysroot, bool this_machine);
    // Stops the playing and starts again what was stopped, whatever way the run ended.
    ~AudioSession();
    AudioSession(const AudioSession&) = delete;
    AudioSession& operator=(const AudioSession&) = delete;

    // Whether a player was stopped: a second Ctrl-C must then not end rtprov before it
    // is started again.
    bool stopped_player() const { return !m_stopped.empty(); }
    // How the device was chosen and what it is, for stderr before the run.
    const std::string& note() const { return m_note; }
    // The ALSA name played to.
    const std::string& device() const { return m_plan.options.device; }

    // Starts playing for 'duration' in a thread of its own; with 'load', the seed's load
    // beside it: files read on 'load_cpus' and, as the player's own other threads, at
    // SCHED_OTHER on its CPUs. A watcher reads what ran on the player's CPUs (all online
    // ones when it is not pinned) at each of the first underruns. Returns once the device
    // plays; throws rtprov::Error when it cannot be opened or set up, before anything else
    // is measured.
    void start(std::chrono::milliseconds duration, bool load, const core::CpuList& load_cpus);
    // Ends the playing (at once when the latency run ended early) and returns its result,
    // with what ran at its first underruns.
    selftest::AudioResult finish();

    unsigned min_headroom_percent() const { return m_plan.min_headroom_percent; }

  private:
    void restart_stopped() noexcept;

    pipeline::AudioPlan m_plan;
    std::string m_note;
    std::vector<std::string> m_stopped; // units to start again, in order: the socket first
    std::atomic<bool> m_stop{false};
    selftest::AudioLive m_live; // outlives the watcher and the playing
    std::unique_ptr<selftest::UnderrunWatch> m_watch;
    std::atomic<bool> m_playing{false}; // the device is set up and played to
    std::atomic<bool> m_ended{false};   // the playing thread has returned or thrown
    std::unique_ptr<selftest::FileReadLoad> m_reader;
    std::thread m_thread;
    std::optional<selftest::AudioResult> m_result;
    std::string m_failure; // what run_audio threw in its thread
};

} // namespace rtprov::cli
