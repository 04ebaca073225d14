// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>

namespace rtprov::live {

struct PartitionResult {
    bool ok = false;
    std::string message; // what was found and done, for the journal
};

// Makes the cgroup 'cgroup_dir' (/sys/fs/cgroup/rtprov.slice) a cpuset partition of
// type 'mode' ('isolated' or 'root'): writes cpuset.cpus.partition and reads it back,
// since the kernel answers 'isolated invalid (<reason>)' instead of failing the write
// (Documentation/admin-guide/cgroup-v2.rst). systemd 257 has no setting for it
// (systemd.resource-control(5)), so rtprov-cpuset-partition.service does it at boot.
PartitionResult set_cpuset_partition(const std::string& cgroup_dir, const std::string& mode);

// Whether the read-back 'state' of cpuset.cpus.partition shows 'mode' in force ('isolated'
// does; 'isolated invalid (...)' does not). Pure.
bool partition_took(const std::string& mode, const std::string& state);

} // namespace rtprov::live
