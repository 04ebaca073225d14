// SPDX-License-Identifier: Apache-2.0
#include "provisioner/audit/audit.hpp"

#include "provisioner/audit/accounts.hpp"
#include "provisioner/audit/filesystem_checks.hpp"
#include "provisioner/audit/irq_checks.hpp"
#include "provisioner/audit/kernel_checks.hpp"
#include "provisioner/audit/machine_checks.hpp"
#include "provisioner/audit/reserved_cpu_checks.hpp"
#include "provisioner/audit/service_checks.hpp"
#include "provisioner/audit/timer_checks.hpp"
#include "provisioner/audit/user_checks.hpp"

namespace rtprov::audit {

Status AuditReport::overall() const {
    Status status = Status::ok;
    for (const Check& c : checks)
        status = worst(status, c.status);
    return status;
}

AuditReport run_audit(const SystemView& view, const Expectation* e) {
    AuditReport report;
    auto& checks = report.checks;
    checks.push_back(check_preemption(view, e));
    checks.push_back(check_rt_push_ipi(view, e));
    checks.push_back(check_rt_throttling(view));
    checks.push_back(check_high_res_timers(view));
    checks.push_back(check_tickless(view));
    checks.push_back(check_cpu_governor(view, e));
    if (e) {
        checks.push_back(check_cmdline(view, *e));
        if (auto c = check_isolated(view, *e))
            checks.push_back(std::move(*c));
        if (auto c = check_nohz_full(view, *e))
            checks.push_back(std::move(*c));
    }
    checks.push_back(check_irq_affinity(view, e));
    checks.push_back(check_unmovable_irqs(view, e));
    checks.push_back(check_sound_irq_sharing(view, e));
    checks.push_back(check_smt(view));
    checks.push_back(check_mitigations(view));
    checks.push_back(check_swappiness(view));
    checks.push_back(check_audio_filesystems(view));
    const AudioUsers users = audio_users(view, e);
    checks.push_back(check_rt_priority(view, users));
    checks.push_back(check_audio_group_limits(view, users));
    checks.push_back(check_cpu_dma_latency_access(view, users));
    if (!e)
        return report;
    checks.push_back(check_reserved_cpu_tasks(view, *e));
    checks.push_back(check_rt_above_audio(view, *e));
    if (auto c = check_sound_irqs(view, *e))
        checks.push_back(std::move(*c));
    for (const ServiceExpectation& s : e->services) {
        ServiceAudit service = audit_service(view, s);
        for (Check& c : service.checks)
            checks.push_back(std::move(c));
        report.services.push_back(std::move(service.table));
    }
    return report;
}

} // namespace rtprov::audit
