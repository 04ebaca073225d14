// SPDX-License-Identifier: Apache-2.0
#include "provisioner/core/app.hpp"

#include <algorithm>

namespace rtprov::core {

const AppKnowledge* find_app(const std::vector<AppKnowledge>& apps, const std::string& name,
                             const std::string& unit) {
    for (const AppKnowledge& app : apps)
        if (app.key == name ||
            std::find(app.units.begin(), app.units.end(), unit) != app.units.end())
            return &app;
    return nullptr;
}

} // namespace rtprov::core
