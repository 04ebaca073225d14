// SPDX-License-Identifier: Apache-2.0
#include "provisioner/selftest/memory_lock.hpp"

#include "provisioner/core/error.hpp"
#include "provisioner/selftest/pinned_thread.hpp"

#include <sys/mman.h>
#include <sys/resource.h>

#include <cerrno>
#include <mutex>
#include <string>

namespace rtprov::selftest {

namespace {

std::mutex g_mutex;
unsigned g_holders = 0; // under g_mutex

} // namespace

// MCL_ONFAULT (Linux 4.4) locks the pages that are resident and those faulted in later,
// instead of reading in every mapped page: the histograms, stacks and audio buffers are
// written before the run, so they are locked, while the unused parts of the shared
// libraries (ICU's 30 MB of data, pulled in by libarchive) stay out of memory. Without it
// the self-test's peak RSS was 49 MB against cyclictest's 2.7 MB
// (bench/latency-fidelity.sh).
MemoryLock::MemoryLock(IfRefused if_refused) {
    const std::lock_guard<std::mutex> lock(g_mutex);
    if (g_holders > 0 || mlockall(MCL_CURRENT | MCL_FUTURE | MCL_ONFAULT) == 0) {
        ++g_holders;
        m_locked = true;
        return;
    }
    const int error = errno;
    if (if_refused == IfRefused::go_on)
        return;
    rlimit limit{};
    getrlimit(RLIMIT_MEMLOCK, &limit);
    const std::string bytes =
        limit.rlim_cur == RLIM_INFINITY ? "unlimited" : std::to_string(limit.rlim_cur) + " bytes";
    throw Error("cannot lock the self-test's memory in RAM (mlockall): " + errno_text(error) +
                " (RLIMIT_MEMLOCK is " + bytes +
                "); run rtprov as root, or raise the limit (ulimit -l unlimited, "
                "LimitMEMLOCK=infinity in a service)");
}

MemoryLock::~MemoryLock() {
    if (!m_locked)
        return;
    const std::lock_guard<std::mutex> lock(g_mutex);
    if (--g_holders == 0)
        munlockall();
}

} // namespace rtprov::selftest
