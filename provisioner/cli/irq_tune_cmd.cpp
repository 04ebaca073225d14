// SPDX-License-Identifier: Apache-2.0
// rtprov irq-tune: the IRQ threads of the sound path and the others, PREEMPT_RT's timer
// threads and the unbound workqueues, as the profile laid them out at plan time
// (rtprov-irq-tune@.service passes the numbers); --restore puts back what was there
// before. What it did goes to the journal as one structured entry when systemd runs it.

#include "provisioner/cli/commands.hpp"
#include "provisioner/core/cpu_list.hpp"
#include "provisioner/core/error.hpp"
#include "provisioner/core/text.hpp"
#include "provisioner/live/irq_tune.hpp"
#include "provisioner/systemd/libsystemd.hpp"

#include <syslog.h>

#include <cstdlib>
#include <iostream>

namespace rtprov::cli {

namespace {

constexpr const char* k_id_irq_tune = "7e3a9c1b5d2f4a6e8c0b1d3f5a7c9e2b";

core::CpuList cpus_option(const std::string& name, const std::string& value) {
    core::Result<core::CpuList> list = core::parse_cpu_list(value);
    if (!list || list->empty())
        throw CLI::ValidationError(name, "a CPU list such as 0-2: " +
                                             (list ? std::string("it is empty") : list.problem));
    return *list;
}

} // namespace

void add_irq_tune_options(CLI::App& command, IrqTuneCommand& c) {
    c.app = &command;
    auto* restore = c.app->add_flag("--restore", c.restore,
                                    "Put back the values saved before the first change");
    c.app
        ->add_option("--sound-priority", c.sound_priority,
                     "SCHED_FIFO priority of the sound cards' IRQ threads")
        ->check(CLI::Range(1, 94))
        ->excludes(restore);
    c.app->add_option("--sound-cpus", c.sound_cpus, "CPUs for the sound cards' IRQs")
        ->type_name("LIST")
        ->excludes(restore);
    c.app
        ->add_option("--sound-name", c.sound_names,
                     "Also an IRQ whose handler name matches this glob (repeatable)")
        ->type_name("GLOB")
        ->excludes(restore);
    c.app
        ->add_option("--other-priority", c.other_priority,
                     "SCHED_FIFO priority of every other IRQ thread (below --sound-priority)")
        ->check(CLI::Range(1, 93))
        ->excludes(restore);
    c.app
        ->add_option("--timer-priority", c.timer_priority,
                     "SCHED_FIFO priority of PREEMPT_RT's timer threads (ktimers/N; above "
                     "--sound-priority)")
        ->check(CLI::Range(2, 95))
        ->excludes(restore);
    c.app
        ->add_option("--workqueue-cpus", c.workqueue_cpus,
                     "CPUs for the unbound workqueues (/sys/devices/virtual/workqueue/cpumask)")
        ->type_name("LIST")
        ->excludes(restore);
    c.app->add_option("--state", c.state, "Where the values before the change are kept")
        ->type_name("FILE");
}

int run_irq_tune(const IrqTuneCommand& c) {
    const live::KernelCalls calls = live::real_kernel_calls();
    live::IrqTuneResult result;
    if (c.restore) {
        result = live::restore_irqs("/", calls, c.state);
    } else {
        if (c.sound_priority == 0 && c.sound_cpus.empty() && c.workqueue_cpus.empty())
            throw UsageError("irq-tune", "say what to set: --sound-priority and --sound-cpus, "
                                         "--workqueue-cpus, or --restore");
        if ((c.sound_priority == 0) != c.sound_cpus.empty())
            throw UsageError("--sound-priority", "it goes with --sound-cpus, and they with it");
        live::IrqTuneRequest request;
        // The layout core::irq_layout plans: the other IRQ threads below the sound path's,
        // the timer threads above it (a timer the audio thread waits for fires first).
        if (c.sound_priority != 0 && c.other_priority && *c.other_priority >= c.sound_priority)
            throw UsageError("--other-priority",
                             "fifo " + std::to_string(*c.other_priority) +
                                 " for the other IRQ threads would put them at or above the "
                                 "sound path's fifo " +
                                 std::to_string(c.sound_priority) + ": give them less");
        if (c.sound_priority != 0 && c.timer_priority && *c.timer_priority <= c.sound_priority)
            throw UsageError("--timer-priority",
                             "fifo " + std::to_string(*c.timer_priority) +
                                 " for the timer threads would put them at or below the sound "
                                 "path's fifo " +
                                 std::to_string(c.sound_priority) + ": give them more");
        if (c.sound_priority != 0) {
            request.sound_priority = c.sound_priority;
            request.sound_cpus = cpus_option("--sound-cpus", c.sound_cpus);
            request.sound_names = c.sound_names;
            request.other_priority = c.other_priority;
            request.timer_priority = c.timer_priority;
        } else if (c.other_priority || c.timer_priority || !c.sound_names.empty()) {
            throw UsageError("--sound-priority",
                             "--other-priority, --timer-priority and --sound-name need it");
        }
        if (!c.workqueue_cpus.empty())
            request.workqueue_cpus = cpus_option("--workqueue-cpus", c.workqueue_cpus);
        result = live::tune_irqs("/", request, calls, c.state);
    }
    const std::string verb = c.restore ? "restored" : "set";
    std::string summary = result.done.empty()
                              ? (result.ok ? "nothing to change" : "nothing changed")
                              : verb + " " + std::to_string(result.done.size()) +
                                    (result.done.size() == 1 ? " value" : " values");
    std::vector<std::string> fields = {
        "MESSAGE=rtprov irq-tune: " + summary, std::string("MESSAGE_ID=") + k_id_irq_tune,
        "PRIORITY=" + std::to_string(result.ok ? LOG_INFO : LOG_ERR)};
    for (const std::string& line : result.done)
        fields.push_back("RTPROV_CHANGE=" + line);
    for (const std::string& line : result.findings)
        fields.push_back("RTPROV_FINDING=" + line);
    // Started by systemd: one structured journal entry (stdout would log it twice);
    // printed when it is not (or cannot be) sent.
    if (!std::getenv("INVOCATION_ID") || !systemd::journal_send(fields)) {
        for (const system::SoundCard& card : result.cards) {
            std::string irqs;
            for (const system::SoundIrq& irq : card.irqs)
                irqs += (irqs.empty() ? "" : ", ") + std::to_string(irq.irq) + " (" +
                        core::one_line(irq.via) + ")";
            // the card's name as its driver gave it, on one line (core::one_line)
            std::cout << "card " << card.number << " " << quoted(card.id) << ": "
                      << (irqs.empty() ? "no IRQ found" : "IRQ " + irqs) << "\n";
        }
        for (const std::string& line : result.done)
            std::cout << "rtprov irq-tune: " << line << "\n";
        for (const std::string& line : result.findings)
            std::cerr << "rtprov irq-tune: " << (result.ok ? "note: " : "") << line << "\n";
        std::cout << "rtprov irq-tune: " << summary << "\n";
    }
    return result.ok ? k_exit_ok : k_exit_failed;
}

} // namespace rtprov::cli
