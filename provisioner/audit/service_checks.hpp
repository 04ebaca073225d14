// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/audit/check.hpp"
#include "provisioner/audit/expectation.hpp"
#include "provisioner/audit/system_view.hpp"

#include <vector>

// Checks of one configured service: its threads (policy, priority, CPUs) and its limits.
namespace rtprov::audit {

struct ServiceAudit {
    ServiceThreads table;      // every thread of the service's processes
    std::vector<Check> checks; // 'service-threads'; 'service-limits' when it runs
};

// Judges every thread of the processes in the service's cgroup:
// - a thread whose name matches the app's rt_threads must run at the app's policy and
//   priority (fail otherwise);
// - with a unit-wide policy, the main thread must run at it (fail otherwise);
// - any other real-time thread warns, unless the app's thread names are not known and
//   it runs at the app's policy and priority or above;
// - with pinned CPUs, every thread must be allowed only on them (fail otherwise).
// A service without a process warns that it is not running. Pure.
ServiceAudit audit_service(const SystemView& view, const ServiceExpectation& service);

} // namespace rtprov::audit
