// SPDX-License-Identifier: Apache-2.0
// rtprov's command line: the only code that reads argv and the environment, prints,
// or exits. main() puts the output filter in front of stdout and stderr, adds every
// command of the table (command_table.cpp) to CLI11, runs the one asked for and prints
// what it throws; the commands call the library folders (pipeline/ first).
#include "provisioner/cli/command_table.hpp"
#include "provisioner/cli/commands.hpp"
#include "provisioner/cli/printable_buf.hpp"
#include "provisioner/core/error.hpp"
#include "provisioner/target/disk_image.hpp"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <iostream>
#include <vector>

using namespace rtprov;

namespace {

using cli::k_exit_failed;
using cli::k_exit_usage;

const char* const k_exit_codes = R"(Exit codes:
  0  success (for plan: the plan was made, whether or not it changes anything; for
     health: healthy)
  1  failure, or a plan with refusals; the message says why and what to do; for
     health: could not judge (a child's error, the time ran out, the verdict not kept)
  2  wrong usage (unknown option, missing --root)
  3  selftest, audit or health ran and did not pass (the report says which part and why);
     status found drift: a managed file changed by hand or missing, a command of the
     last apply that did not finish (pending: update-grub), or an apply or rollback
     that stopped half way (status --diff shows what changed)

See rtprov(1) for every command and option; the profile format, the JSON outputs, first
boot and the image-builder and Ansible plugins are described in )" RTPROV_INSTALL_DOCDIR
                                 R"( (profile-format.md, json.md, firstboot.md, plugin-*.md).)";

// The command line parsed and the command asked for run; what they throw is printed here,
// with the exit code it calls for.
int run(int argc, char** argv) {
    CLI::App app{"rtprov makes Linux audio machines real-time ready and proves it: it applies "
                 "a board profile (reserved cores, pinning, real-time priorities, boot "
                 "parameters) to an image root or this machine, and can undo it byte for byte.",
                 "rtprov"};
    app.set_version_flag("--version", std::string("rtprov ") + RTPROV_VERSION);
    app.footer(k_exit_codes);
    app.require_subcommand(1);
    cli::Invocation args;
    std::vector<CLI::App*> parsed_by;
    for (const cli::Command& command : cli::commands()) {
        CLI::App* sub = app.add_subcommand(command.name, command.help);
        command.add_options(*sub, args);
        parsed_by.push_back(sub);
    }

    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        app.exit(e);
        return k_exit_usage;
    }

    try {
        for (std::size_t i = 0; i < parsed_by.size(); ++i)
            if (parsed_by[i]->parsed())
                return cli::commands()[i].run(args);
    } catch (const CLI::ValidationError& e) {
        std::cerr << "rtprov: error: " << e.what() << "\n";
        return k_exit_usage;
    } catch (const UsageError& e) {
        std::cerr << "rtprov: error: " << e.what() << "\n";
        return k_exit_usage;
    } catch (const Error& e) {
        // (an image's root names its files as the image's: fs::Root's display name)
        const std::string message = e.what();
        std::size_t start = 0;
        while (start < message.size()) {
            std::size_t nl = message.find('\n', start);
            if (nl == std::string::npos)
                nl = message.size();
            std::cerr << "rtprov: error: " << message.substr(start, nl - start) << "\n";
            start = nl + 1;
        }
        return k_exit_failed;
    }
    return k_exit_usage;
}

} // namespace

int main(int argc, char** argv) {
    std::streambuf* const stdout_buf = std::cout.rdbuf();
    std::streambuf* const stderr_buf = std::cerr.rdbuf();
    cli::PrintableBuf printable_out(stdout_buf), printable_err(stderr_buf);
    std::cout.rdbuf(&printable_out);
    std::cerr.rdbuf(&printable_err);
    // The filters live in this frame: the streams get their own buffers back before it
    // ends (static destructors flush std::cout after main returns).
    struct Restore {
        std::streambuf* out;
        std::streambuf* err;
        ~Restore() {
            std::cout.flush();
            std::cerr.flush();
            std::cout.rdbuf(out);
            std::cerr.rdbuf(err);
        }
    } restore{stdout_buf, stderr_buf};
    // Whatever run() throws, from the command or from setting CLI11 up (a mistake in the
    // command table, std::bad_alloc), is an error message and exit code 1, never an
    // exception out of main (std::terminate: an abort and a core dump).
    int rc = k_exit_failed;
    try {
        rc = run(argc, argv);
    } catch (const std::exception& e) {
        std::cerr << "rtprov: error: " << e.what() << "\n";
        return k_exit_failed;
    }
    // A report that did not reach standard output (a full disk under '>', as the health
    // gate keeps the audit's) is not a pass: the exit code says so, not only the bytes.
    std::cout.flush();
    if (!std::cout || std::fflush(stdout) != 0) {
        std::cerr << "rtprov: error: cannot write standard output: what was printed is "
                     "incomplete; make room where it goes\n";
        return k_exit_failed;
    }
    return rc;
}
