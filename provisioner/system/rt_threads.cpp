// SPDX-License-Identifier: Apache-2.0
#include "provisioner/system/rt_threads.hpp"

#include "provisioner/core/text.hpp"

namespace rtprov::system {

Fact<CpuThreads> rt_threads_on(const SysRoot& root, const core::CpuList& cpus, std::size_t limit) {
    Fact<std::vector<int>> pids = root.numbered("/proc");
    if (!pids)
        return Fact<CpuThreads>::failed(pids.problem);
    CpuThreads out;
    for (int pid : *pids) {
        const std::string task = "/proc/" + std::to_string(pid) + "/task";
        // a process that ended, or one this caller may not look at: its threads unread
        for (int tid : root.numbered(task).value.value_or(std::vector<int>{})) {
            if (out.looked_at == limit) {
                out.truncated = true;
                return {std::move(out), {}, false};
            }
            Fact<std::string> text = root.text(task + "/" + std::to_string(tid) + "/stat");
            if (!text)
                continue; // it ended
            ++out.looked_at;
            std::optional<TaskStat> stat = parse_stat(*text);
            if (!stat || stat->processor < 0 ||
                !cpus.contains(static_cast<unsigned>(stat->processor)))
                continue;
            const bool realtime = stat->policy && core::is_realtime(*stat->policy);
            if (!realtime && stat->state != 'R')
                continue;
            CpuThread t;
            t.pid = pid;
            t.tid = tid;
            t.comm = core::one_line(stat->comm);
            t.policy = stat->policy;
            t.priority = stat->rt_priority;
            t.cpu = static_cast<unsigned>(stat->processor);
            t.state = stat->state;
            out.threads.push_back(std::move(t));
        }
    }
    return {std::move(out), {}, false};
}

} // namespace rtprov::system
