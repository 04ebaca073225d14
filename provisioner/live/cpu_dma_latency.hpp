// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/core/fd.hpp"

#include <string>

namespace rtprov::live {

// Opens 'path' (/dev/cpu_dma_latency) and writes a 32-bit 0: while the returned
// descriptor stays open, the kernel keeps every CPU out of idle states whose exit
// latency is above 0 µs (Documentation/power/pm_qos_interface.rst). Closing it ends
// the request. Throws rtprov::Error when it cannot.
core::Fd hold_cpu_dma_latency(const std::string& path = "/dev/cpu_dma_latency");

} // namespace rtprov::live
