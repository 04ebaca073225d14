// SPDX-License-Identifier: Apache-2.0
#include "provisioner/player/stack_conf.hpp"

namespace rtprov::player {} // namespace rtprov::player
