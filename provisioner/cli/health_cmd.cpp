// SPDX-License-Identifier: Apache-2.0
// rtprov health: the verdict on the running system that update frameworks read before
// they keep an update (pipeline::run_health: the self-test and the audit as children,
// within a time bound, one rule for their exit codes, the verdict kept in
// /var/lib/rtprov/health). rtprov-health.service runs it with --boot before
// boot-complete.target (docs/update-gate.md).
#include "provisioner/cli/child_rtprov.hpp"
#include "provisioner/cli/commands.hpp"
#include "provisioner/cli/flow_log.hpp"
#include "provisioner/cli/health_render.hpp"
#include "provisioner/core/error.hpp"
#include "provisioner/fs/root.hpp"
#include "provisioner/fs/root_lock.hpp"
#include "provisioner/pipeline/health.hpp"

#include <iostream>

namespace rtprov::cli {

void add_health_options(CLI::App& command, HealthCommand& c) {
    c.app = &command;
    c.app->add_flag("--json", c.json,
                    "Print the verdict as JSON (the object kept in "
                    "/var/lib/rtprov/health/verdict.json)");
    c.app
        ->add_option("--prometheus", c.prometheus_file,
                     "Also write the verdict as a Prometheus textfile (node-exporter's textfile "
                     "collector), atomically; the folder must exist")
        ->check(output_file_name_problem)
        ->type_name("FILE");
    c.app
        ->add_option("--timeout", c.timeout_s,
                     "Give up after SECONDS, stopping what runs, with the verdict 'could not "
                     "judge' (default: the applied profile's self-test time, twice with the "
                     "underrun test, and 120 s)")
        ->check(CLI::Range(1u, core::k_max_selftest_duration_s))
        ->type_name("SECONDS");
    c.app->add_flag("--boot", c.boot,
                    "As rtprov-health.service runs it at boot: when the verdict is not healthy "
                    "and the boot loader counts tries of this boot's entry (systemd-boot's "
                    "LoaderBootCountPath), reboot so that it tries again or falls back; never "
                    "on a boot that is not counted");
    c.app
        ->add_option("--sysroot", c.sysroot,
                     "Judge the system tree DIR instead of '/' (a copied tree: its /proc, /sys "
                     "and /etc are read, its /var/lib/rtprov written; the self-test still "
                     "measures this machine)")
        ->type_name("DIR");
}

int run_health(const HealthCommand& c) {
    const bool tree = c.app->count("--sysroot") > 0 && c.sysroot != "/";
    if (c.boot && tree)
        throw UsageError("--boot", "reboots this machine, so it judges this machine: leave out "
                                   "--sysroot");
    if (!c.prometheus_file.empty())
        check_output_file(c.prometheus_file);
    if (tree)
        check_sysroot(c.sysroot, {"proc/cmdline", "sys/devices/system/cpu/online"},
                      "judge this machine");
    fs::Root root(c.sysroot);
    fs::RootLock lock(root); // one rtprov on a root: a second is refused, naming the first
    ChildRtprov rtprov(lock);
    pipeline::SystemdBus manager;
    HealthLog log;
    pipeline::Machine machine{root, lock,   c.sysroot, true, !tree,
                              {},   rtprov, manager,   log,  utc_now};
    pipeline::HealthRequest request;
    if (c.app->count("--timeout") > 0)
        request.timeout_s = c.timeout_s;
    request.on_failure =
        c.boot ? pipeline::OnFailure::reboot_if_counted : pipeline::OnFailure::exit;
    const pipeline::Health health = pipeline::run_health(machine, request);
    std::cout << (c.json ? pipeline::health_json(health) : health_text(health)) << std::flush;
    if (!c.prometheus_file.empty())
        write_file(c.prometheus_file, health_prometheus(health, now_unix()));
    pipeline::reboot_if_decided(machine, health); // after the verdict is told and kept
    return pipeline::health_exit_code(health.verdict);
}

} // namespace rtprov::cli
