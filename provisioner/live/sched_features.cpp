// SPDX-License-Identifier: Apache-2.0
#include "provisioner/live/sched_features.hpp"

#include "provisioner/core/text.hpp"
#include "provisioner/fs/kernel_file.hpp"
#include "provisioner/system/kernel.hpp"

#include <sys/mount.h>
#include <sys/utsname.h>

#include <cerrno>
#include <cstring>

namespace rtprov::live {

namespace {

using core::has_word;

std::optional<std::string> read_text(const std::string& path) {
    return fs::read_kernel_file(path).value;
}

} // namespace

PushIpiAction decide_push_ipi(const std::string& uname_version, const std::string& features) {
    if (system::is_preempt_rt(uname_version))
        return PushIpiAction::leave_rt_kernel;
    if (has_word(features, "RT_PUSH_IPI"))
        return PushIpiAction::already_on;
    if (has_word(features, "NO_RT_PUSH_IPI"))
        return PushIpiAction::enable;
    return PushIpiAction::unknown;
}

bool mount_debugfs(const std::string& dir) {
    return ::mount("debugfs", dir.c_str(), "debugfs", 0, nullptr) == 0;
}

PushIpiResult ensure_rt_push_ipi(const SchedFeaturesPaths& paths, const DebugfsMounter& mount) {
    PushIpiResult r;
    std::string version = paths.uname_version;
    if (version.empty()) {
        utsname u{};
        uname(&u);
        version = u.version;
    }
    if (system::is_preempt_rt(version)) {
        r.action = PushIpiAction::leave_rt_kernel;
        r.message = "PREEMPT_RT kernel (" + version + "): RT_PUSH_IPI left alone";
        return r;
    }
    auto features = read_text(paths.features);
    if (!features) {
        if (!mount(paths.debugfs)) {
            r.ok = false;
            r.message = "cannot mount debugfs on " + paths.debugfs + ": " + std::strerror(errno) +
                        "; RT_PUSH_IPI not checked";
            return r;
        }
        features = read_text(paths.features);
        if (!features) {
            r.ok = false;
            r.message = paths.features + " is missing even with debugfs mounted (a kernel "
                                         "without CONFIG_SCHED_DEBUG?); RT_PUSH_IPI not checked";
            return r;
        }
    }
    r.action = decide_push_ipi(version, *features);
    switch (r.action) {
    case PushIpiAction::already_on:
        r.message = "RT_PUSH_IPI is already on; nothing to do";
        return r;
    case PushIpiAction::unknown:
        r.ok = false;
        r.message = paths.features + " lists neither RT_PUSH_IPI nor NO_RT_PUSH_IPI; left alone";
        return r;
    case PushIpiAction::leave_rt_kernel:
        return r;
    case PushIpiAction::enable:
        break;
    }
    if (const fs::KernelWrite wrote = fs::write_kernel_file(paths.features, "RT_PUSH_IPI");
        !wrote) {
        r.ok = false;
        r.message = "found NO_RT_PUSH_IPI but cannot write " + paths.features + ": " +
                    std::strerror(wrote.error) + wrote.holding;
        return r;
    }
    auto after = read_text(paths.features).value_or("");
    if (!has_word(after, "RT_PUSH_IPI")) {
        r.ok = false;
        r.message = "found NO_RT_PUSH_IPI, wrote RT_PUSH_IPI, but the kernel still says "
                    "otherwise";
        return r;
    }
    r.message = "found NO_RT_PUSH_IPI (kernel " + version + "); RT_PUSH_IPI is now on";
    return r;
}

} // namespace rtprov::live
