// SPDX-License-Identifier: Apache-2.0
#pragma once

namespace rtprov::selftest {

// The process's memory locked in RAM (mlockall) while at least one MemoryLock lives: no
// page fault may delay a measuring or playing thread. Counted, so that the latency
// measurement and the underrun test, which run side by side, each hold it and the first
// to end does not unlock the other's memory (munlockall is process-wide).
class MemoryLock {
  public:
    enum class IfRefused {
        throw_error, // rtprov::Error saying which limit to raise
        go_on,       // locked() is false
    };
    explicit MemoryLock(IfRefused if_refused);
    ~MemoryLock();
    MemoryLock(const MemoryLock&) = delete;
    MemoryLock& operator=(const MemoryLock&) = delete;

    bool locked() const { return m_locked; }

  private:
    bool m_locked = false;
};

} // namespace rtprov::selftest
