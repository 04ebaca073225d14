// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/core/error.hpp"
#include "provisioner/core/fd.hpp"
#include "provisioner/live/cpu_dma_latency.hpp"

#include <string>

namespace rtprov::selftest {

// The /dev/cpu_dma_latency request of IdlePolicy::held, dropped when the descriptor closes.
class IdleHold {
  public:
    explicit IdleHold(const std::string& path) {
        try {
            m_fd = live::hold_cpu_dma_latency(path);
        } catch (const Error& e) {
            throw Error(std::string(e.what()) +
                        "; the idle policy 'held' needs it: run rtprov as root, or measure "
                        "with the idle policy 'default'");
        }
    }

  private:
    core::Fd m_fd; // closing it ends the request
};

} // namespace rtprov::selftest
