// SPDX-License-Identifier: Apache-2.0
#include "provisioner/cli/selftest_audio.hpp"

#include "provisioner/core/error.hpp"
#include "provisioner/core/text.hpp"
#include "provisioner/fs/root.hpp"
#include "provisioner/system/cpus.hpp"
#include "provisioner/system/pcm_holders.hpp"
#include "provisioner/system/playback.hpp"
#include "provisioner/system/sysroot.hpp"
#include "provisioner/target/run_in_root.hpp"

#include <algorithm>
#include <iostream>

namespace rtprov::cli {

namespace {

// Runs a command of this machine (systemctl, modprobe) and returns its exit status; its
// output goes to stderr.
int run_here(const std::vector<std::string>& argv) {
    return target::run_in_root(fs::Root("/"), argv, target::RunMode::live);
}

// The playback devices, or the refusal why they cannot be read.
std::vector<system::PlaybackDevice> playback_devices(const system::SysRoot& root) {
    auto devices = system::read_playback_devices(root);
    if (!devices)
        throw Error("cannot list the sound cards: " + devices.problem);
    return *devices;
}

} // namespace

AudioSession::AudioSession(pipeline::AudioPlan plan, const std::string& sysroot, bool this_machine)
    : m_plan(std::move(plan)) {
    const system::SysRoot root(sysroot);
    std::optional<system::PlaybackDevice> device;
    if (m_plan.wanted == "loopback") {
        device = system::loopback_device(playback_devices(root));
        if (!device && !this_machine)
            throw UsageError("--audio", "'loopback' loads snd-aloop on this machine when "
                                        "--sysroot " +
                                            quoted(sysroot) +
                                            " has no loopback card, and rtprov does not act "
                                            "on a machine it did not read; leave --sysroot "
                                            "out, or give the tree a loopback card");
        if (!device) {
            const int rc = run_here({"modprobe", "snd-aloop"});
            if (rc != 0)
                throw Error("cannot load snd-aloop for --audio=loopback: 'modprobe snd-aloop' "
                            "exited with " +
                            std::to_string(rc) +
                            "; install the kernel's modules (Debian's linux-image packages "
                            "carry snd-aloop) or play to a card: --audio=DEVICE");
            device = system::loopback_device(playback_devices(root));
            if (!device)
                throw Error("snd-aloop is loaded but no loopback card plays: is "
                            "/proc/asound/cards listing 'Loopback'? Its index may be taken; "
                            "'modprobe -r snd-aloop' and try again");
        }
        m_plan.options.device = device->alsa_name;
        m_note = "a loopback card (" + device->alsa_name +
                 "): this measures the scheduling, not the DAC's own path";
    } else {
        const core::Result<system::PlaybackChoice> choice =
            system::choose_playback_device(playback_devices(root), m_plan.wanted);
        if (!choice)
            throw Error(choice.problem);
        m_plan.options.device = choice->alsa_name;
        device = choice->device;
        m_note = choice->note;
    }
    if (!device)
        return; // a name alsa-lib knows ('pipewire', 'default'): nothing to look up

    // Who holds it: a sound server (played through), a service (stopped with
    // --stop-player), or refused.
    auto holders = system::read_pcm_holders(root, device->card, device->device);
    if (!holders)
        throw Error("cannot tell whether '" + device->node + "' is free: " + holders.problem);
    if (holders->holders.empty() && holders->unseen == 0)
        return;
    if (std::optional<system::ServerHold> server = system::sound_server_of(holders->holders)) {
        const std::string pcm = system::server_pcm(server->server);
        const system::PluginCheck plugin = system::plugin_available(root, pcm);
        if (!plugin.available)
            throw Error(system::to_string(server->server) + " holds " + device->alsa_name + " (" +
                        server->holder.comm + ", pid " + std::to_string(server->holder.pid) +
                        "), and its ALSA plugin to test through it is missing: " + plugin.problem);
        m_plan.options.device = pcm;
        m_note += "; " + system::to_string(server->server) +
                  " holds the card: played through its ALSA plugin '" + pcm +
                  "', at the server's period";
        return;
    }
    // Only system services are stopped: a user's service, a login session's process or one
    // that could not be seen is refused with what frees it.
    std::vector<std::string> units;
    bool all_services = holders->unseen == 0;
    for (const system::PcmHolder& holder : holders->holders) {
        if (holder.user || !holder.unit.ends_with(".service"))
            all_services = false;
        else if (std::find(units.begin(), units.end(), holder.unit) == units.end())
            units.push_back(holder.unit);
    }
    if (!m_plan.stop_player || !all_services)
        throw Error(system::holder_refusal(*device, *holders));
    // A socket would start the service again at the first client (mpd.socket and mpc):
    // stopped first and started again first: systemd refuses to start a socket whose service
    // is already running ('Socket service mpd.service already active, refusing'), and the
    // service's start then takes it from the socket again.
    std::vector<std::string> to_stop;
    for (const std::string& unit : units) {
        const std::string socket = unit.substr(0, unit.size() - 8) + ".socket";
        if (run_here({"systemctl", "--quiet", "is-active", socket}) == 0)
            to_stop.push_back(socket);
        to_stop.push_back(unit);
    }
    for (const std::string& unit : to_stop) {
        std::cerr << "rtprov selftest: stopping " << unit << " for the underrun test\n";
        const int rc = run_here({"systemctl", "stop", unit});
        if (rc != 0) {
            restart_stopped();
            throw Error("cannot stop " + quoted(unit) + ": 'systemctl stop " + unit +
                        "' exited with " + std::to_string(rc) + "; stop it by hand");
        }
        m_stopped.push_back(unit); // started again in the same order
    }
    auto after = system::read_pcm_holders(root, device->card, device->device);
    if (after && (!after->holders.empty() || after->unseen > 0)) {
        restart_stopped();
        throw Error(system::holder_refusal(*device, *after) + " (still, after stopping " +
                    units.front() + ": is something starting it again?)");
    }
    m_note += "; " + units.front() + " stopped for the run";
}

AudioSession::~AudioSession() {
    m_stop.store(true);
    if (m_thread.joinable())
        m_thread.join();
    if (m_reader)
        m_reader->stop();
    restart_stopped();
}

void AudioSession::restart_stopped() noexcept {
    for (const std::string& unit : m_stopped) {
        try {
            std::cerr << "rtprov selftest: starting " << unit << " again\n";
            if (const int rc = run_here({"systemctl", "start", unit}); rc != 0)
                std::cerr << "rtprov: warning: 'systemctl start " << unit << "' exited with " << rc
                          << "; start it by hand\n";
        } catch (const std::exception& e) {
            std::cerr << "rtprov: warning: cannot start " << unit << " again: " << e.what()
                      << "; run 'systemctl start " << unit << "'\n";
        }
    }
    m_stopped.clear();
}

void AudioSession::start(std::chrono::milliseconds duration, bool load,
                         const core::CpuList& load_cpus) {
    if (load) {
        std::vector<selftest::ThreadSpec> readers;
        selftest::ThreadSpec housekeeping;
        housekeeping.name = "rtprov-read-hk";
        housekeeping.cpus = load_cpus;
        readers.push_back(housekeeping);
        selftest::ThreadSpec player;
        player.name = "rtprov-read-pl";
        player.cpus = m_plan.options.cpus;
        readers.push_back(player);
        m_reader = std::make_unique<selftest::FileReadLoad>(readers);
    }
    selftest::AudioOptions options = m_plan.options;
    options.duration = duration;
    options.interrupt = &m_stop;
    options.live = &m_live;
    // What competes with the player is read from the running system's /proc, whatever
    // tree the device was chosen from: the audio plays here.
    const system::SysRoot here("/");
    core::CpuList watched = options.cpus;
    if (watched.empty())
        watched = system::read_cpus(here).online.value.value_or(core::CpuList());
    if (!watched.empty())
        m_watch = std::make_unique<selftest::UnderrunWatch>(here, watched, options.cpus, m_live);
    options.playing = &m_playing;
    m_thread = std::thread([this, options] {
        try {
            m_result = selftest::run_audio(options, nullptr);
        } catch (const std::exception& e) {
            m_failure = e.what();
        }
        m_ended.store(true);
    });
    // A device that cannot be opened or set up (a wrong name, sizes it does not take) is
    // said now, not after a latency run of minutes or days that its failure would discard.
    while (!m_playing.load() && !m_ended.load())
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (!m_playing.load()) {
        m_thread.join();
        if (m_reader)
            m_reader->stop();
        throw Error("the underrun test: " +
                    (m_failure.empty() ? std::string("it did not start") : m_failure));
    }
}

selftest::AudioResult AudioSession::finish() {
    m_stop.store(true);
    if (m_thread.joinable())
        m_thread.join();
    if (m_reader)
        m_reader->stop();
    std::vector<std::optional<selftest::WhatRan>> running;
    if (m_watch)
        running = m_watch->finish();
    if (!m_failure.empty())
        throw Error("the underrun test: " + m_failure);
    if (!m_result)
        throw Error("the underrun test did not run");
    // finish() itself stopped it, at the end of the latency run: not an interruption (a
    // signal is the caller's to say, selftest_cmd's g_interrupted)
    m_result->interrupted = false;
    selftest::attach_what_ran(*m_result, running);
    return *m_result;
}

} // namespace rtprov::cli
