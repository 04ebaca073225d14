// SPDX-License-Identifier: Apache-2.0
#include "provisioner/core/board_match.hpp"

#include "provisioner/core/error.hpp"

#include <fnmatch.h>

namespace rtprov::core {

namespace {

bool any_glob(const std::vector<std::string>& globs, const std::string& value) {
    for (const std::string& glob : globs)
        if (fnmatch(glob.c_str(), value.c_str(), 0) == 0)
            return true;
    return false;
}

// A glob list the profile gives must match the fact, which must be known.
bool holds(const std::vector<std::string>& globs, const std::optional<std::string>& fact) {
    return fact && any_glob(globs, *fact);
}

} // namespace

std::optional<unsigned> match_score(const BoardMatch& match, const BoardFacts& facts) {
    unsigned score = 0;
    if (!match.device_tree_model.empty()) {
        if (!holds(match.device_tree_model, facts.device_tree_model))
            return std::nullopt;
        ++score;
    }
    if (!match.dmi_product_name.empty()) {
        if (!holds(match.dmi_product_name, facts.dmi_product_name))
            return std::nullopt;
        ++score;
    }
    if (!match.os_id.empty()) {
        bool found = false;
        for (const std::string& id : facts.os_ids)
            found = found || any_glob(match.os_id, id);
        if (!found)
            return std::nullopt;
        ++score;
    }
    if (match.cpu_count) {
        if (*match.cpu_count != facts.cpu_count)
            return std::nullopt;
        ++score;
    }
    return score;
}

std::string describe(const BoardFacts& facts) {
    std::string out;
    if (facts.device_tree_model)
        out += "model " + quoted(*facts.device_tree_model) + ", ";
    if (facts.dmi_product_name)
        out += "product " + quoted(*facts.dmi_product_name) + ", ";
    out += "OS " +
           (facts.os_ids.empty() ? std::string("unknown") : one_line(facts.os_ids.front())) + ", " +
           std::to_string(facts.cpu_count) + (facts.cpu_count == 1 ? " CPU" : " CPUs");
    return out;
}

std::string choose_board(const std::vector<BoardCandidate>& candidates, const BoardFacts& facts) {
    std::vector<std::string> best;
    unsigned best_score = 0;
    for (const BoardCandidate& c : candidates) {
        auto score = match_score(c.match, facts);
        // A profile without any criterion matches everything and says nothing: never
        // chosen by detection.
        if (!score || *score == 0 || *score < best_score)
            continue;
        if (*score > best_score)
            best.clear();
        best_score = *score;
        best.push_back(c.name);
    }
    if (best.size() == 1)
        return best.front();
    if (best.empty())
        throw Error("no profile's board.match fits this machine (" + describe(facts) +
                    "); name one with 'profile:' in /etc/rtprov/firstboot.yaml");
    std::string names;
    for (const std::string& name : best)
        names += (names.empty() ? "" : ", ") + quoted(name);
    throw Error("profiles " + names + " fit this machine (" + describe(facts) +
                ") equally well; name one with 'profile:' in /etc/rtprov/firstboot.yaml");
}

} // namespace rtprov::core
