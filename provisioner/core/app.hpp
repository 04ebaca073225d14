// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/core/audio_size.hpp"
#include "provisioner/core/sched_policy.hpp"

#include <optional>
#include <string>
#include <vector>

namespace rtprov::core {

// What rtprov knows about an audio app that makes some of its threads real-time itself
// (shipped as data: board-profiles/apps/*.yaml).
struct AppKnowledge {
    std::string key;                        // 'mpd', matched against a profile's service name
    std::string name;                       // 'MPD', for messages
    std::vector<std::string> units;         // 'mpd.service', matched against the service's unit
    std::string threads;                    // 'rtio and output:* threads', for messages
    SchedPolicy policy = SchedPolicy::fifo; // fifo or rr
    int priority = 0;                       // the lowest priority of its own real-time threads
    int highest_priority = 0;               // the highest of them (0: 'priority')
    // fnmatch(3) globs for the names (comm) of the threads the app makes real-time at
    // exactly 'policy' and 'priority' ('rtio', 'output:*'); empty where the names are not
    // known or the threads use several priorities. rtprov audit checks them.
    std::vector<std::string> rt_threads;
    // The ALSA period and buffer it opens the card with by default, as its sources set
    // them; nullopt where not known. The underrun test plays with them.
    std::optional<AudioSize> alsa_period;
    std::optional<AudioSize> alsa_buffer;
};

// The app knowledge for a service, by its profile name or unit; nullptr when unknown.
const AppKnowledge* find_app(const std::vector<AppKnowledge>& apps, const std::string& name,
                             const std::string& unit);

} // namespace rtprov::core
