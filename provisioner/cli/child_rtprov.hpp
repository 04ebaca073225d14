// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/pipeline/flow_io.hpp"

#include <string>
#include <vector>

namespace rtprov::cli {

// Runs this rtprov binary with 'args'; its stdout goes to 'stdout_path' when given. The
// child gets the root lock the caller holds ('lock_fd', kept open across exec and named
// in RTPROV_ROOT_LOCK_FD), so its apply runs under that lock instead of finding the root
// locked. Returns its exit code (128+N for a signal), or pipeline::k_child_timed_out when
// it was still running at 'deadline' and was stopped (SIGTERM, then SIGKILL).
int run_rtprov(int lock_fd, const std::vector<std::string>& args,
               const std::string& stdout_path = "", const pipeline::Deadline& deadline = {});

// The children of first boot, a trial's check and the health gate: this binary, run under
// 'lock'.
class ChildRtprov final : public pipeline::RtprovRunner {
  public:
    explicit ChildRtprov(const fs::RootLock& lock) : m_lock_fd(lock.fd()) {}
    int run(const std::vector<std::string>& args, const std::string& stdout_path,
            const pipeline::Deadline& deadline) override {
        return run_rtprov(m_lock_fd, args, stdout_path, deadline);
    }

  private:
    int m_lock_fd;
};

} // namespace rtprov::cli
