// SPDX-License-Identifier: Apache-2.0
#pragma once

namespace rtprov::player {} // namespace rtprov::player
