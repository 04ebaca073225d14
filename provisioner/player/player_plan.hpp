// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/core/app.hpp"
#include "provisioner/core/buffer_rule.hpp"
#include "provisioner/core/plan.hpp"
#include "provisioner/core/profile.hpp"
#include "provisioner/player/read_file.hpp"

#include <optional>
#include <string>
#include <vector>

// The players' buffers on a target (docs/audio-buffers.md): what each installed player
// runs with now, what a measurement supports, and, for tuning.audio.buffers 'write', the
// changes that put a setting where each player reads it. Pure.
namespace rtprov::player {

// rtprov's own files for the players, each a drop-in of its own.
inline constexpr const char* k_pipewire_dropin = "/etc/pipewire/pipewire.conf.d/60-rtprov.conf";
inline constexpr const char* k_wireplumber_dropin =
    "/etc/wireplumber/wireplumber.conf.d/60-rtprov.conf";
inline constexpr const char* k_mpd_conf = "/etc/mpd.conf";
// The drop-in that sets jackd's -p and -n in the profile's JACK service.
std::string jack_dropin_path(const std::string& unit);

// The program whose presence says a stack's player is installed ('/usr/bin/mpd').
const char* player_program(core::BufferStack stack);

// Reads, through 'read' and 'list', every file and folder the functions below may take
// from a target: target::probe calls it with readers that record what they see. 'units'
// are the JACK services whose command lines count (the profile's, or the app table's).
void visit_player_files(const ReadFile& read, const ListDir& list,
                        const std::vector<std::string>& jack_units);

// A distro that rebuilds the players' files from its own settings, where a file rtprov
// writes would be overwritten: moOde (from its SQLite database), Volumio (mpd.conf from a
// template).
struct RegeneratingDistro {
    std::string name;  // 'moOde'
    std::string mark;  // the file by which it was recognised
    std::string files; // what it rewrites
    std::string place; // where its own setting is
};
std::optional<RegeneratingDistro> regenerating_distro(const ListDir& list);

// What an installed player runs with now, from its configuration.
struct PlayerNow {
    const core::AppKnowledge* app = nullptr;
    core::BufferStack stack = core::BufferStack::mpd;
    std::string unit; // the profile's service that runs it ('mpd.service'); "": none
    // nullopt when it could not be read with certainty: 'problem' says why.
    std::optional<core::BufferSetting> setting;
    bool from_default = false; // nothing set: the player's own default
    std::string where;         // "file:line" of the setting, or the file that would hold it
    std::string problem;
};

// Every installed player of a stack rtprov knows, in the app table's order. A profile's
// service names the unit of its app: JACK's command line is read from that unit only.
std::vector<PlayerNow> players_now(const core::TargetFacts& facts,
                                   const std::vector<core::AppKnowledge>& apps,
                                   const core::Profile* profile);

// The exact setting that gives a player 'setting', said as its own configuration says
// it: 'buffer_time "100000" and period_time "25000" in the ALSA audio_output of
// /etc/mpd_local.conf'. 'file': where the player's setting is (PlayerNow::where without
// its line); "" for the stack's usual file.
std::string setting_text(core::BufferStack stack, const core::BufferSetting& setting,
                         const std::string& file = "");

// What a measurement says for one player.
struct PlayerAdvice {
    PlayerNow now;
    core::BufferChoice choice; // what the worst wake-up supports
    // now.setting's deadline against choice.need_us: whether what it runs with holds
    // the margin (nullopt: not known).
    std::optional<bool> now_holds;
};
std::vector<PlayerAdvice> advise_players(const std::vector<PlayerNow>& players, double worst_us);

// A setting given in the profile, as its stack takes it: a problem when the units or the
// shape do not fit the stack (MPD's times in frames, a buffer not a whole number of
// periods for squeezelite or JACK, less than two periods).
core::Result<core::BufferSetting> check_setting(core::BufferStack stack,
                                                const core::BufferSetting& setting);

// tuning.audio.buffers 'write': for each service of the profile whose app has a stack and
// is installed, the setting its period and buffer give ('auto' for both: nothing written,
// first boot chooses), written where the player reads it, with findings for what is not.
void plan_player_buffers(core::Plan& plan, const core::Profile& profile,
                         const core::TargetFacts& facts,
                         const std::vector<core::AppKnowledge>& apps);

} // namespace rtprov::player
