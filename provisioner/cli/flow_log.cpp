// SPDX-License-Identifier: Apache-2.0
#include "provisioner/cli/flow_log.hpp"

#include "provisioner/cli/firstboot_output.hpp"
#include "provisioner/core/text.hpp"
#include "provisioner/systemd/libsystemd.hpp"

#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include <cstdlib>
#include <iostream>

namespace rtprov::cli {

static_assert(int(pipeline::Priority::error) == LOG_ERR &&
              int(pipeline::Priority::warning) == LOG_WARNING &&
              int(pipeline::Priority::notice) == LOG_NOTICE &&
              int(pipeline::Priority::info) == LOG_INFO);

namespace {

// Journal message ids (journalctl MESSAGE_ID=...), documented in docs/firstboot.md
// (first boot) and rtprov(1) (the trial, the health gate).
constexpr const char* k_id_failed = "e6c8a0f2b4d64a8c1e3f5b7d9a2c4e6f";

std::string priority_field(pipeline::Priority priority) {
    return "PRIORITY=" + std::to_string(int(priority));
}

// True when file descriptor 'fd' is the journal stream systemd gave the unit
// ($JOURNAL_STREAM, systemd.exec(5)).
bool is_journal(int fd) {
    const char* stream = std::getenv("JOURNAL_STREAM");
    struct stat st {};
    return stream && ::fstat(fd, &st) == 0 &&
           is_journal_stream(stream, std::uint64_t(st.st_dev), std::uint64_t(st.st_ino));
}

} // namespace

const char* message_id(pipeline::FlowEvent event) {
    switch (event) {
    case pipeline::FlowEvent::firstboot_start:
        return "8d2f6c1a4b7e4e0f9a3c5d7e1f2a4b6c";
    case pipeline::FlowEvent::firstboot_applied:
        return "3e9a1c5f7b2d4a6e8c0f1a3b5d7e9f1b";
    case pipeline::FlowEvent::firstboot_reboot:
        return "c4a7e2f9d1b34c6a8e5f7a9b1c3d5e7f";
    case pipeline::FlowEvent::firstboot_missing:
        return "a1f3c5e7b9d24f6a8c0e2b4d6f8a1c3e";
    case pipeline::FlowEvent::firstboot_done:
        return "5f7b9d1e3a6c4e8f0b2d4f6a8c1e3a5d";
    case pipeline::FlowEvent::trial_committed:
        return "2b8e4f6a1c3d4e5f9a7b8c0d1e2f3a4b";
    case pipeline::FlowEvent::trial_fell_back:
        return "9c1d3e5f7a2b4c6d8e0f1a3b5c7d9e2f";
    case pipeline::FlowEvent::health_healthy:
        return "cdfcab7aab7d4f30b6470c62aa602fd7";
    case pipeline::FlowEvent::health_not_healthy:
        return "9106d2d07f0a494f9fec96e0f1221bd0";
    case pipeline::FlowEvent::health_could_not_judge:
        return "e7abbb05435e4851b10003e8e7635cd6";
    case pipeline::FlowEvent::health_reboot:
        return "d3897e4c69e14ed0a357dfec1dedfa85";
    }
    return "";
}

void TrialLog::event(pipeline::FlowEvent event, pipeline::Priority priority,
                     const std::string& text, const std::string&) {
    const std::string message = core::one_line(text);
    systemd::journal_send({"MESSAGE=rtprov trial: " + message,
                           std::string("MESSAGE_ID=") + message_id(event),
                           priority_field(priority)});
    std::cout << "rtprov trial: " << message << std::endl;
}

void TrialLog::line(const std::string& text) {
    std::cout << text << "\n";
}

void TrialLog::warning(const std::string& message) {
    std::cerr << "rtprov: warning: " << message << "\n";
}

// The verdict, once, as a structured entry: the command prints its own report (text or
// JSON) on stdout, which under rtprov-health.service is the journal too.
void HealthLog::event(pipeline::FlowEvent event, pipeline::Priority priority,
                      const std::string& text, const std::string& field) {
    std::vector<std::string> fields = {"MESSAGE=rtprov health: " + core::one_line(text),
                                       std::string("MESSAGE_ID=") + message_id(event),
                                       priority_field(priority)};
    if (!field.empty())
        fields.push_back(field);
    systemd::journal_send(fields);
}

// What runs now, for 'systemctl status rtprov-health' (sd_notify STATUS=).
void HealthLog::progress(const std::string& status) {
    systemd::notify("rtprov health: " + status);
}

void HealthLog::line(const std::string& text) {
    std::cerr << "rtprov health: " << text << "\n";
}

void HealthLog::warning(const std::string& message) {
    std::cerr << "rtprov: warning: " << message << "\n";
}

// A step worth finding later: the status line, and a structured journal entry with its
// id (docs/firstboot.md); printed too only where stdout is not the journal, so the
// journal has it once. The message is one line (core::one_line) in the journal as on
// stdout: it is sent past the output filter, and may name the board as its firmware does.
void FirstbootLog::event(pipeline::FlowEvent event, pipeline::Priority priority,
                         const std::string& text, const std::string& field) {
    const std::string message = core::one_line(text);
    systemd::notify("rtprov first boot: " + message);
    Delivery delivery = deliver(is_journal(STDOUT_FILENO));
    if (delivery.send) {
        std::vector<std::string> fields = {"MESSAGE=rtprov first boot: " + message,
                                           std::string("MESSAGE_ID=") + message_id(event),
                                           priority_field(priority)};
        if (!field.empty())
            fields.push_back(field);
        if (!systemd::journal_send(fields))
            delivery.print = true; // not sent: the message on stdout at least
    }
    if (delivery.print)
        std::cout << "rtprov firstboot: " << message << std::endl;
}

// Progress for 'systemctl status' (sd_notify STATUS=, needs NotifyAccess=main in a
// oneshot unit, systemd.service(5)) and a line on stdout, which is the journal in the unit.
void FirstbootLog::progress(const std::string& status) {
    systemd::notify("rtprov first boot: " + status);
    std::cout << "rtprov firstboot: " << status << std::endl;
}

void FirstbootLog::line(const std::string& text) {
    std::cout << "rtprov firstboot: " << text << "\n";
}

void FirstbootLog::warning(const std::string& message) {
    std::cerr << "rtprov: warning: " << message << "\n";
}

bool FirstbootLog::failed(const std::string& message) {
    const bool sent = systemd::journal_send({"MESSAGE=rtprov first boot: failed: " + message,
                                             std::string("MESSAGE_ID=") + k_id_failed,
                                             priority_field(pipeline::Priority::error)});
    systemd::notify("rtprov first boot failed: " + message);
    // On a terminal main() prints the error; where stderr is the journal the entry above
    // is that message already, unless it could not be sent.
    return sent && is_journal(STDERR_FILENO);
}

} // namespace rtprov::cli
