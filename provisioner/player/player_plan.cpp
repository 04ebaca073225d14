// SPDX-License-Identifier: Apache-2.0
#include "provisioner/player/player_plan.hpp"

namespace rtprov::player {} // namespace rtprov::player
