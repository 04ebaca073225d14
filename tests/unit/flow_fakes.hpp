// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/pipeline/flow_io.hpp"

#include "tests/unit/temp_dir.hpp"

#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <vector>

// Fakes for the seams of first boot and a trial's check (pipeline/flow_io.hpp): child
// rtprov runs that are recorded and answer as told, a service manager that records the
// reboot it is asked for, and a log that keeps what the flow told.
namespace flow_fakes {

using namespace rtprov;

struct Run {
    std::vector<std::string> args;
    std::string stdout_path;
    pipeline::Deadline deadline;
};

// Answers each 'rtprov VERB ...' with the exit code set for VERB (0 unless set; a
// pipeline::k_child_timed_out: it ran past its deadline); writes the output set for VERB
// to the stdout file it is given; 'effect' runs for VERB first (a child apply that writes
// the applied profile).
class FakeRtprov final : public pipeline::RtprovRunner {
  public:
    int run(const std::vector<std::string>& args, const std::string& stdout_path,
            const pipeline::Deadline& deadline) override {
        runs.push_back({args, stdout_path, deadline});
        const std::string& verb = args.front();
        if (auto effect = effects.find(verb); effect != effects.end())
            effect->second();
        if (!stdout_path.empty())
            std::ofstream(stdout_path) << (output.count(verb) ? output.at(verb) : "");
        return codes.count(verb) ? codes.at(verb) : 0;
    }
    std::vector<std::string> verbs() const {
        std::vector<std::string> out;
        for (const Run& r : runs)
            out.push_back(r.args.front());
        return out;
    }
    std::vector<Run> runs;
    std::map<std::string, int> codes;
    std::map<std::string, std::string> output;
    std::map<std::string, std::function<void()>> effects;
};

class FakeManager final : public pipeline::ServiceManager {
  public:
    systemd::OnlineResult tell(const systemd::OnlineActions&) override { return {}; }
    live::IrqTuneResult restore_irqs() override { return {}; }
    void reboot(const std::string& argument) override { reboots.push_back(argument); }
    std::vector<std::string> reboots;
};

struct Told {
    pipeline::FlowEvent event;
    pipeline::Priority priority;
    std::string message;
    std::string field;
};

class RecordingLog final : public pipeline::FlowLog {
  public:
    void event(pipeline::FlowEvent event, pipeline::Priority priority, const std::string& message,
               const std::string& field) override {
        events.push_back({event, priority, message, field});
    }
    void progress(const std::string& status) override { progress_lines.push_back(status); }
    void line(const std::string& text) override { lines.push_back(text); }
    void warning(const std::string& message) override { warnings.push_back(message); }
    bool failed(const std::string& message) override {
        failures.push_back(message);
        return failure_told;
    }
    std::vector<Told> events;
    std::vector<std::string> progress_lines, lines, warnings, failures;
    bool failure_told = false;
};

inline const std::string k_now = "2026-12-24T18:00:00Z";

// A machine whose root and sysroot are 'root' (a test's temporary folder), with 'run'
// for its commands (empty: none may run).
inline pipeline::Machine machine_on(fs::Root& root, const fs::RootLock& lock, FakeRtprov& rtprov,
                                    FakeManager& manager, RecordingLog& log,
                                    target::CommandRunner run = {}) {
    return {root,           lock,   root.path(), true, true,
            std::move(run), rtprov, manager,     log,  [] { return k_now; }};
}

} // namespace flow_fakes
