// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <functional>
#include <optional>
#include <string>

// The RT_PUSH_IPI guard run at boot by rtprov-sched-features.service.
namespace rtprov::live {

enum class PushIpiAction {
    leave_rt_kernel, // PREEMPT_RT: the kernel pushes RT tasks itself; leave it alone
    already_on,      // RT_PUSH_IPI already set
    enable,          // NO_RT_PUSH_IPI: write RT_PUSH_IPI
    unknown,         // the features file lists neither
};

// Decides from the kernel's version string (uname -v: '#1 SMP PREEMPT_RT ...' on a
// PREEMPT_RT kernel, utsversion.h in Debian's linux-headers) and the content of
// /sys/kernel/debug/sched/features. Pure.
PushIpiAction decide_push_ipi(const std::string& uname_version, const std::string& features);

struct PushIpiResult {
    PushIpiAction action = PushIpiAction::unknown;
    std::string message; // what was found and done, one line, for the journal
    bool ok = true;
};

// Where to look; the defaults are the running system's. Tests point them at fixtures.
struct SchedFeaturesPaths {
    std::string features = "/sys/kernel/debug/sched/features";
    std::string debugfs = "/sys/kernel/debug";
    std::string uname_version; // empty: uname(2)
};

// Mounts debugfs on a folder; returns false on failure. The real one calls mount(2).
using DebugfsMounter = std::function<bool(const std::string& dir)>;
bool mount_debugfs(const std::string& dir);

// Makes sure RT_PUSH_IPI is on where it should be: on PREEMPT_RT kernels does nothing;
// mounts debugfs if the features file is missing; writes RT_PUSH_IPI when the kernel
// says NO_RT_PUSH_IPI and reads it back. Workaround from the regression report
// on LKML (2026-08-14): echo RT_PUSH_IPI > /sys/kernel/debug/sched/features.
// https://lore.kernel.org/all/CAEB5A_91hob8ddOhW=PrO1=O7GrFmSxY3r1-_Ard6x8KHHuJGA@mail.gmail.com/
PushIpiResult ensure_rt_push_ipi(const SchedFeaturesPaths& paths, const DebugfsMounter& mount);

} // namespace rtprov::live
