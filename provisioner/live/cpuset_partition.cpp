// SPDX-License-Identifier: Apache-2.0
#include "provisioner/live/cpuset_partition.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace rtprov::live {

PartitionResult set_cpuset_partition(const std::string& cgroup_dir, const std::string& mode) {
    PartitionResult r;
    const std::string file = cgroup_dir + "/cpuset.cpus.partition";
    {
        std::ofstream out(file);
        if (!out) {
            r.message = "cannot open " + file + ": " + std::strerror(errno) +
                        " (is the slice active and the cpuset controller enabled?)";
            return r;
        }
        out << mode;
        if (!out.flush()) {
            r.message = "cannot write '" + mode + "' to " + file + ": " + std::strerror(errno);
            return r;
        }
    }
    std::ifstream in(file);
    std::string state;
    std::getline(in, state);
    std::string cpus;
    std::ifstream effective(cgroup_dir + "/cpuset.cpus.effective");
    std::getline(effective, cpus);
    if (!partition_took(mode, state)) {
        r.message = file + " reads '" + state + "' after writing '" + mode +
                    "': the partition was not made";
        return r;
    }
    r.ok = true;
    r.message = cgroup_dir + " is a '" + mode + "' cpuset partition" +
                (cpus.empty() ? "" : " on CPUs " + cpus);
    return r;
}

bool partition_took(const std::string& mode, const std::string& state) {
    return state == mode;
}

} // namespace rtprov::live
