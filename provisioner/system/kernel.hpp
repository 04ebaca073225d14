// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string_view>

namespace rtprov::system {

// True when 'uname_version' (uname -v, /proc/sys/kernel/version) is a PREEMPT_RT
// kernel's: it names the preemption model built in ('#1 SMP PREEMPT_RT Debian ...';
// scripts/mkcompile_h in the kernel tree). The one test of it in rtprov.
bool is_preempt_rt(std::string_view uname_version);

} // namespace rtprov::system
