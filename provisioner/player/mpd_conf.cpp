// SPDX-License-Identifier: Apache-2.0
#include "provisioner/player/mpd_conf.hpp"

namespace rtprov::player {} // namespace rtprov::player
