// SPDX-License-Identifier: Apache-2.0
// What rtprov's own units run on the booted machine: rtprov-sched-features.service,
// rtprov-cpu-dma-latency.service and rtprov-cpuset-partition.service. Each says what it
// found and did once: as a structured journal entry when systemd started it
// ($INVOCATION_ID), else on stdout or stderr.
#include "provisioner/cli/commands.hpp"
#include "provisioner/live/cpu_dma_latency.hpp"
#include "provisioner/live/cpuset_partition.hpp"
#include "provisioner/live/sched_features.hpp"
#include "provisioner/systemd/libsystemd.hpp"

#include <syslog.h>

#include <csignal>
#include <cstdlib>
#include <iostream>

namespace rtprov::cli {

// rtprov-sched-features.service: the RT_PUSH_IPI guard at every boot. What it found
// and did goes to the journal as one structured entry when systemd runs it.
int run_sched_features() {
    live::PushIpiResult result = live::ensure_rt_push_ipi({}, live::mount_debugfs);
    static const char* k_actions[] = {"leave-rt-kernel", "already-on", "enable", "unknown"};
    const char* action = k_actions[static_cast<int>(result.action)];
    // Started by systemd: one structured journal entry (stdout would log it twice);
    // printed when it is not (or cannot be) sent.
    if (!std::getenv("INVOCATION_ID") ||
        !systemd::journal_send({"MESSAGE=rtprov sched-features: " + result.message,
                                "MESSAGE_ID=5b0c2a1e6f3d4c8e9a7b1d2c3e4f5a6b",
                                "PRIORITY=" + std::to_string(result.ok ? LOG_INFO : LOG_ERR),
                                std::string("RTPROV_RT_PUSH_IPI=") + action}))
        (result.ok ? std::cout : std::cerr) << "rtprov sched-features: " << result.message << "\n";
    return result.ok ? k_exit_ok : k_exit_failed;
}

// rtprov-cpu-dma-latency.service: holds /dev/cpu_dma_latency at 0 until stopped.
int run_hold_cpu_dma_latency() {
    core::Fd held = live::hold_cpu_dma_latency();
    std::cout << "rtprov: holding /dev/cpu_dma_latency at 0 until stopped" << std::endl;
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGTERM);
    sigaddset(&signals, SIGINT);
    sigprocmask(SIG_BLOCK, &signals, nullptr);
    int received = 0;
    sigwait(&signals, &received);
    held.reset(); // ends the request
    return k_exit_ok;
}

// rtprov-cpuset-partition.service: SLICE becomes a cpuset partition of type MODE.
int run_cpuset_partition(const CpusetPartitionCommand& c) {
    if (c.slice.find('/') != std::string::npos || !c.slice.ends_with(".slice"))
        throw CLI::ValidationError("SLICE", "a slice name such as rtprov.slice");
    live::PartitionResult result = live::set_cpuset_partition("/sys/fs/cgroup/" + c.slice, c.mode);
    if (!std::getenv("INVOCATION_ID") ||
        !systemd::journal_send({"MESSAGE=rtprov cpuset-partition: " + result.message,
                                "PRIORITY=" + std::to_string(result.ok ? LOG_INFO : LOG_ERR)}))
        (result.ok ? std::cout : std::cerr)
            << "rtprov cpuset-partition: " << result.message << "\n";
    return result.ok ? k_exit_ok : k_exit_failed;
}

void add_cpuset_partition_options(CLI::App& command, CpusetPartitionCommand& c) {
    command.add_option("slice", c.slice, "Slice, e.g. rtprov.slice")->required();
    command.add_option("mode", c.mode, "isolated or root")
        ->required()
        ->check(CLI::IsMember({"isolated", "root"}));
}

} // namespace rtprov::cli
