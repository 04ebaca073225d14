// SPDX-License-Identifier: Apache-2.0
#include "provisioner/live/cpu_dma_latency.hpp"

#include "provisioner/core/error.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

namespace rtprov::live {

core::Fd hold_cpu_dma_latency(const std::string& path) {
    core::Fd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
    if (!fd)
        throw Error("cannot open " + quoted(path) + ": " + std::strerror(errno));
    const std::int32_t zero = 0;
    if (::write(fd.get(), &zero, sizeof zero) != sizeof zero)
        throw Error("cannot write to " + quoted(path) + ": " + std::strerror(errno));
    return fd;
}

} // namespace rtprov::live
