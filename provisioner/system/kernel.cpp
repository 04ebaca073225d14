// SPDX-License-Identifier: Apache-2.0
#include "provisioner/system/kernel.hpp"

#include "provisioner/core/text.hpp"

namespace rtprov::system {

bool is_preempt_rt(std::string_view uname_version) {
    return core::has_word(uname_version, "PREEMPT_RT");
}

} // namespace rtprov::system
