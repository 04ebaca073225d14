// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/pipeline/flow_io.hpp"

#include <string>

// Where what first boot and a trial's check tell goes: the journal, as structured
// entries with their message ids, and stdout and stderr.
namespace rtprov::cli {

// The journal message id of 'event' (journalctl MESSAGE_ID=...), as rtprov(1) and
// docs/firstboot.md list them.
const char* message_id(pipeline::FlowEvent event);

// 'rtprov trial': each step a journal entry and a line on stdout alike ('rtprov trial:
// ...'); the message is sent past the output filter, and names the system gave (in a
// report's failing lines) stay on one line.
class TrialLog final : public pipeline::FlowLog {
  public:
    void event(pipeline::FlowEvent event, pipeline::Priority priority, const std::string& message,
               const std::string& field) override;
    void progress(const std::string&) override {}
    void line(const std::string& text) override;
    void warning(const std::string& message) override;
    bool failed(const std::string&) override { return false; }
};

// 'rtprov health': the verdict a structured journal entry with its id (the command prints
// the report itself, on stdout, where --json keeps only JSON); progress for 'systemctl
// status' (sd_notify STATUS=); lines and warnings on stderr.
class HealthLog final : public pipeline::FlowLog {
  public:
    void event(pipeline::FlowEvent event, pipeline::Priority priority, const std::string& message,
               const std::string& field) override;
    void progress(const std::string& status) override;
    void line(const std::string& text) override;
    void warning(const std::string& message) override;
    bool failed(const std::string&) override { return false; }
};

// 'rtprov firstboot', run by rtprov-firstboot.service, whose stdout and stderr are the
// journal: each step once there (a structured entry, printed only where stdout is not
// the journal), its progress for 'systemctl status' (sd_notify STATUS=) and on stdout.
class FirstbootLog final : public pipeline::FlowLog {
  public:
    void event(pipeline::FlowEvent event, pipeline::Priority priority, const std::string& message,
               const std::string& field) override;
    void progress(const std::string& status) override;
    void line(const std::string& text) override;
    void warning(const std::string& message) override;
    bool failed(const std::string& message) override;
};

} // namespace rtprov::cli
