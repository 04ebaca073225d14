// SPDX-License-Identifier: Apache-2.0
#include "provisioner/cli/command_table.hpp"

namespace rtprov::cli {

namespace {

void no_options(CLI::App&, Invocation&) {}

// clang-format off
const Command k_commands[] = {
    {"profiles", "List the profiles rtprov can find",
     [](CLI::App& c, Invocation& a) { add_profiles_options(c, a.target, a.profiles); },
     [](const Invocation& a) { return run_profiles(a.target, a.profiles); }},
    {"plan", "Show what apply would change; writes nothing",
     [](CLI::App& c, Invocation& a) { add_plan_command_options(c, a.target, a.plan); },
     [](const Invocation& a) { return run_plan(a.target, a.plan); }},
    {"apply", "Make the planned changes (a second run changes nothing)",
     [](CLI::App& c, Invocation& a) { add_apply_options(c, a.target, a.apply); },
     [](const Invocation& a) { return run_apply(a.target, a.apply); }},
    {"status", "Which profile is applied, when, and drift since",
     [](CLI::App& c, Invocation& a) { add_status_options(c, a.target, a.status); },
     [](const Invocation& a) { return run_status(a.target, a.status); }},
    {"rollback", "Restore every file rtprov changed and remove what it created",
     [](CLI::App& c, Invocation& a) { add_rollback_options(c, a.target, a.rollback); },
     [](const Invocation& a) { return run_rollback(a.target, a.rollback); }},
    {"sched-features",
     "Turn RT_PUSH_IPI on if this non-PREEMPT_RT kernel has it off (run at boot by "
     "rtprov-sched-features.service)",
     no_options, [](const Invocation&) { return run_sched_features(); }},
    {"hold-cpu-dma-latency",
     "Hold /dev/cpu_dma_latency at 0 until stopped (run by rtprov-cpu-dma-latency.service)",
     no_options, [](const Invocation&) { return run_hold_cpu_dma_latency(); }},
    {"cpuset-partition",
     "Make a slice's cgroup a cpuset partition and check it took (run by "
     "rtprov-cpuset-partition.service)",
     [](CLI::App& c, Invocation& a) { add_cpuset_partition_options(c, a.cpuset_partition); },
     [](const Invocation& a) { return run_cpuset_partition(a.cpuset_partition); }},
    {"selftest",
     "Measure wake-up latency on the reserved and a housekeeping core, and run "
     "the PI-boost starvation probe; keeps every report",
     [](CLI::App& c, Invocation& a) { add_selftest_options(c, a.selftest); },
     [](const Invocation& a) { return run_selftest(a.selftest); }},
    {"report",
     "Show a kept self-test report again (the newest by default), and write it as "
     "one HTML page with the trend of the runs measured the same way",
     [](CLI::App& c, Invocation& a) { add_report_options(c, a.report); },
     [](const Invocation& a) { return run_report(a.report); }},
    {"audit",
     "Check this running system against the applied profile: thread priorities "
     "and CPUs, boot parameters, isolation, IRQs, RT_PUSH_IPI; and, profile or not, "
     "timers, file systems, the users' real-time limits; changes nothing",
     [](CLI::App& c, Invocation& a) { add_audit_options(c, a.audit); },
     [](const Invocation& a) { return run_audit(a.audit); }},
    {"firstboot",
     "First boot of an appliance (run by rtprov-firstboot.service): apply the "
     "profile live, reboot once if needed, self-test, audit, record the outcome",
     [](CLI::App& c, Invocation& a) { add_firstboot_options(c, a.firstboot); },
     [](const Invocation& a) { return run_firstboot(a.firstboot); }},
    {"trial",
     "The trial of a boot configuration armed by 'apply --trial': status, check "
     "(run at boot by rtprov-trial.service), commit, abort",
     [](CLI::App& c, Invocation& a) { add_trial_options(c, a.trial); },
     [](const Invocation& a) { return run_trial(a.trial); }},
    {"health",
     "The verdict on this running system for an update framework: self-test and audit "
     "against the applied profile, bounded in time; exit 0 healthy, 3 not healthy, 1 could "
     "not judge (run at boot by rtprov-health.service with --boot)",
     [](CLI::App& c, Invocation& a) { add_health_options(c, a.health); },
     [](const Invocation& a) { return run_health(a.health); }},
    {"irq-tune",
     "Set the IRQ threads' priorities and the sound IRQs' CPUs as the profile "
     "laid them out (run by rtprov-irq-tune@.service at boot and for each sound "
     "card that appears); --restore puts back what was there before",
     [](CLI::App& c, Invocation& a) { add_irq_tune_options(c, a.irq_tune); },
     [](const Invocation& a) { return run_irq_tune(a.irq_tune); }},
};
// clang-format on

} // namespace

std::span<const Command> commands() {
    return k_commands;
}

} // namespace rtprov::cli
