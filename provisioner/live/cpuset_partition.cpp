// SPDX-License-Identifier: Apache-2.0
#include "provisioner/live/cpuset_partition.hpp"

#include "provisioner/fs/kernel_file.hpp"

#include <cstring>

namespace rtprov::live {

namespace {

std::string first_line(const std::string& text) {
    return text.substr(0, text.find('\n'));
}

} // namespace

PartitionResult set_cpuset_partition(const std::string& cgroup_dir, const std::string& mode) {
    PartitionResult r;
    const std::string file = cgroup_dir + "/cpuset.cpus.partition";
    const fs::KernelWrite wrote = fs::write_kernel_file(file, mode);
    if (!wrote.opened) {
        r.message = "cannot open " + file + ": " + std::strerror(wrote.error) +
                    " (is the slice active and the cpuset controller enabled?)";
        return r;
    }
    if (!wrote) {
        r.message = "cannot write '" + mode + "' to " + file + ": " + std::strerror(wrote.error) +
                    wrote.holding;
        return r;
    }
    // the first line of each, as they read: "isolated", "2-3"
    const std::string state = first_line(fs::read_kernel_file(file).value.value_or(""));
    const std::string cpus =
        first_line(fs::read_kernel_file(cgroup_dir + "/cpuset.cpus.effective").value.value_or(""));
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
