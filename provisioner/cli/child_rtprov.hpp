// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/pipeline/flow_io.hpp"

#include <string>
#include <vector>

namespace rtprov::cli {

// Runs this rtprov binary with 'args'; its stdout goes to 'stdout_path' when given. The
// child gets the root lock the caller holds ('lock_fd', kept open across exec and named
// in RTPROV_ROOT_LOCK_FD), so its apply runs under that lock instead of finding the root
// locked. Returns its exit code (128+N for a signal).
int run_rtprov(int lock_fd, const std::vector<std::string>& args,
               const std::string& stdout_path = "");

// The children of first boot and a trial's check: this binary, run under 'lock'.
class ChildRtprov final : public pipeline::RtprovRunner {
  public:
    explicit ChildRtprov(const fs::RootLock& lock) : m_lock_fd(lock.fd()) {}
    int run(const std::vector<std::string>& args, const std::string& stdout_path) override {
        return run_rtprov(m_lock_fd, args, stdout_path);
    }

  private:
    int m_lock_fd;
};

} // namespace rtprov::cli
