// SPDX-License-Identifier: Apache-2.0
#include "provisioner/selftest/memory_lock.hpp"

#include "tests/unit/catch.hpp"
#include "tests/unit/sanitizer.hpp"
#include "tests/unit/temp_dir.hpp"

#include <unistd.h>

#include <optional>
#include <sstream>

using rtprov::selftest::MemoryLock;

namespace {

// VmLck of /proc/self/status in kB: the memory locked now.
long locked_kb() {
    std::istringstream status(TempDir::read_host_file("/proc/self/status"));
    std::string line;
    while (std::getline(status, line))
        if (line.rfind("VmLck:", 0) == 0)
            return std::stol(line.substr(6));
    return -1;
}

} // namespace

TEST_CASE("the memory stays locked until the last of two holders ends") {
    if (RTPROV_SANITIZED) {
        WARN("a sanitizer's mlockall is a no-op; not checked");
        return;
    }
    std::optional<MemoryLock> latency(std::in_place, MemoryLock::IfRefused::go_on);
    if (!latency->locked()) {
        WARN("mlockall is not permitted here; not checked");
        return;
    }
    CHECK(locked_kb() > 0);
    {
        const MemoryLock audio(MemoryLock::IfRefused::throw_error);
        CHECK(audio.locked());
        latency.reset(); // the latency run ends first: the audio test's memory stays locked
        CHECK(locked_kb() > 0);
    }
    CHECK(locked_kb() == 0);
}
