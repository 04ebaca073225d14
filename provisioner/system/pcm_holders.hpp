// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/system/playback.hpp"
#include "provisioner/system/sysroot.hpp"

#include <optional>
#include <string>
#include <vector>

// Who holds a playback device open, what frees it, and whether a sound server (PipeWire,
// JACK, PulseAudio) owns the card and can be played through with its ALSA plugin.
namespace rtprov::system {

// A process that has a PCM's device node open.
struct PcmHolder {
    int pid = 0;
    std::string comm; // its name (/proc/PID/comm), on one line (core::one_line)
    // Its systemd unit ('mpd.service', 'session-2.scope'; "" in none), on one line, and the
    // user whose manager runs it (unit_of_cgroup).
    std::string unit;
    std::optional<unsigned> user;
};

struct PcmHolders {
    std::string node;               // '/dev/snd/pcmC1D0p'
    std::vector<PcmHolder> holders; // by pid
    // Processes whose open files could not be looked at (/proc/PID/fd unreadable: another
    // user's, to a caller who is not root): one of them may hold it too.
    std::size_t unseen = 0;
    std::string unseen_problem; // the first one's reason, one line
};

// The processes that have /dev/snd/pcmC<card>D<device>p open: each /proc/PID/fd/N whose link
// names that node (or a node of that name below another root, a chroot's or a container's
// /dev/snd; ' (deleted)' after it once the device is gone: a USB DAC unplugged). A process
// that ends while it is looked at is left out; one whose descriptors cannot be listed is
// counted in 'unseen'. Fails only when /proc cannot be listed.
Fact<PcmHolders> read_pcm_holders(const SysRoot& root, unsigned card, unsigned device);

// The command that frees the device of 'holder': 'systemctl stop UNIT' for a service of the
// system, 'systemctl --user --machine=UID@ stop UNIT' for a user's (systemctl(1), --machine:
// a user's own manager since systemd 248), 'kill PID' for a process in no service (a scope
// is a login session or a terminal's, which stopping would end).
std::vector<std::string> free_command(const PcmHolder& holder);

// The refusal when 'device' is busy: who holds it, in which service, the commands that free
// it, and --stop-player for the services among them; the processes that could not be seen
// are said, never taken for nobody.
std::string holder_refusal(const PlaybackDevice& device, const PcmHolders& holders);

enum class SoundServer { pipewire, jack, pulseaudio };

// 'PipeWire', 'JACK', 'PulseAudio'.
std::string to_string(SoundServer server);
// The ALSA PCM that plays through the server (its alsa-lib plugin): 'pipewire', 'jack',
// 'pulse'.
std::string server_pcm(SoundServer server);

struct ServerHold {
    SoundServer server;
    PcmHolder holder;
};

// The sound server among the holders: a process named pipewire, pipewire-pulse or
// wireplumber (PipeWire), jackd or jackdbus (JACK), pulseaudio (PulseAudio); nullopt when
// none is.
std::optional<ServerHold> sound_server_of(const std::vector<PcmHolder>& holders);

// Where alsa-lib looks for its plugin modules on this architecture, first first: Debian's
// '/usr/lib/<multiarch>/alsa-lib', then '/usr/lib/alsa-lib' and '/usr/lib64/alsa-lib'.
std::vector<std::string> alsa_plugin_dirs();

// Whether alsa-lib can open the PCM 'pcm' ('pipewire', 'jack', 'pulse') through its plugin.
struct PluginCheck {
    bool available = false;
    std::string module;  // the plugin's file when found: '.../libasound_module_pcm_jack.so'
    std::string config;  // the configuration that defines the PCM: '/etc/alsa/conf.d/50-jack.conf'
    std::string problem; // why not, and what to do, when not available
};

// Looks for the module libasound_module_pcm_<pcm>.so in alsa_plugin_dirs() and for a
// configuration file with 'pcm' in its name in the folders alsa.conf loads
// (/etc/alsa/conf.d, /usr/etc/alsa/conf.d, /var/lib/alsa/conf.d); Debian's packages put it
// in /usr/share/alsa/alsa.conf.d and link it there (pipewire-alsa, libasound2-plugins).
PluginCheck plugin_available(const SysRoot& root, const std::string& pcm);

} // namespace rtprov::system
