// SPDX-License-Identifier: Apache-2.0
// What the boot loaders' plans share: the kernel parameters and the keys rtprov owns, the
// merge into a command-line file, the refusals every trial has, the regeneration (now, at
// first boot, never), the PREEMPT_RT packages; and the table's answers about commands and
// files. Each loader's own plan is in boot/*_loader.cpp.
#include "provisioner/boot/boot_plan.hpp"

#include "provisioner/boot/cmdline.hpp"
#include "provisioner/boot/kernel_params.hpp"
#include "provisioner/boot/loader.hpp"
#include "provisioner/boot/plan_steps.hpp"
#include "provisioner/core/grammar.hpp"
#include "provisioner/core/text.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdlib>

namespace rtprov::boot {

using namespace rtprov::core;

void error(Plan& plan, const std::string& code, const std::string& message) {
    plan.findings.push_back({Severity::error, code, message});
}
void warning(Plan& plan, const std::string& code, const std::string& message) {
    plan.findings.push_back({Severity::warning, code, message});
}
void info(Plan& plan, const std::string& code, const std::string& message) {
    plan.findings.push_back({Severity::info, code, message});
}

std::string content_of(const TargetFacts& facts, const std::string& path) {
    const FileState* file = facts.file(path);
    return file ? file->content : std::string();
}

bool changes(const Plan& plan, const std::string& path) {
    return std::any_of(plan.changes.begin(), plan.changes.end(),
                       [&](const FileChange& c) { return c.path == path; });
}

// Merges the parameters into a command-line file's text, keeping every other byte,
// reports values that were there before rtprov for keys it sets, and records the edit
// for rollback and drift.
std::string merge_into(PlanContext& c, const std::string& path, CmdlineScope scope) {
    CmdlineText current = parse_cmdline_text(content_of(c.facts, path), scope);
    auto original = parse_cmdline_text(c.facts.original_content(path).value_or(""), scope).tokens;
    MergedCmdline merged = merge_cmdline(current, original, c.params, c.keys);
    for (const ForeignValue& f : merged.foreign)
        warning(c.plan, "foreign-value",
                path + " had '" + f.foreign + "' before rtprov; rtprov's '" + f.ours +
                    "' replaces it (rollback brings it back)");
    c.plan.cmdline_edits[path] = CmdlineEdit{scope == CmdlineScope::first_line, c.keys,
                                             owned_part(merged.text.tokens, c.keys)};
    return render(merged.text);
}

// A command line rtprov cannot add to: a NUL byte ends the text for the firmware and for
// kernel-install alike (both read it as a C string), and after an unclosed quote every
// added token is part of the quoted value. Returns true, with a refusal, for either.
bool refuse_unreadable(PlanContext& c, const std::string& path, CmdlineScope scope) {
    const std::string& text = content_of(c.facts, path);
    std::size_t nul = text.find('\0');
    if (nul != std::string::npos) {
        error(c.plan, "cmdline-nul",
              path + " has a NUL byte at byte " + std::to_string(nul + 1) +
                  ": the kernel command line ends there, so what follows it — rtprov's "
                  "parameters included — would never reach the kernel; remove it (nothing was "
                  "written)");
        return true;
    }
    if (parse_cmdline_text(text, scope).unclosed_quote) {
        error(c.plan, "cmdline-quote",
              path + " has a '\"' that is never closed: the kernel reads everything after it "
                     "as one quoted value (lib/cmdline.c), so rtprov's parameters would become "
                     "part of it; close the quote (nothing was written)");
        return true;
    }
    return false;
}

namespace {

// The boot loader's regeneration commands an earlier apply planned and did not finish
// (it failed, or rtprov was killed while it ran): rtprov's state lists them as pending.
std::vector<std::vector<std::string>> unfinished_regeneration(const PlanContext& c) {
    const Loader& planned = loader_for(c.profile, c.facts);
    std::vector<std::vector<std::string>> out;
    for (const auto& argv : c.facts.pending_commands)
        if (planned.regenerates && planned.regenerates(argv))
            out.push_back(argv);
    return out;
}

} // namespace

// An earlier apply left the regeneration for first boot and it has not happened yet, or
// did not finish it: the boot configuration may lack what the files rtprov wrote say.
bool regeneration_pending(const PlanContext& c) {
    return c.facts.file(k_pending_regeneration_path) != nullptr ||
           !unfinished_regeneration(c).empty();
}

// What only the trial boot's command line carries: the marker rtprov-trial.service
// looks for, a panic that reboots instead of hanging (unless the profile sets panic=),
// and the deadline target, whose job timeout reboots a boot that never reaches the check.
std::vector<KernelParam> trial_params(const PlanContext& c) {
    std::vector<KernelParam> out = {{k_trial_param, c.options.trial_id}};
    if (std::none_of(c.params.begin(), c.params.end(),
                     [](const KernelParam& p) { return p.key == "panic"; }))
        out.push_back({"panic", std::to_string(k_trial_panic_s)});
    out.push_back({"systemd.wants", k_trial_deadline_target});
    return out;
}

// Keeps a file as it is when it is there: a trial leaves the default boot alone, and
// the default may be an earlier apply's.
void keep_as_is(PlanContext& c, const std::string& path, const std::string& reason) {
    if (const FileState* file = c.facts.file(path))
        add_file_change(c.plan, c.facts, path, *file, reason);
}

// Regeneration of the boot loader's configuration after its input changed.
void regenerate(PlanContext& c, std::vector<std::vector<std::string>> argvs,
                const std::string& needs_executable, const std::string& what,
                const std::string& input, const std::vector<std::string>& produces) {
    const std::vector<std::vector<std::string>> unfinished = unfinished_regeneration(c);
    std::string unfinished_text;
    for (const auto& argv : unfinished)
        unfinished_text += (unfinished_text.empty() ? "'" : ", '") + shell_command(argv) + "'";
    switch (c.options.regenerate) {
    case Regenerate::now:
        if (!c.facts.has_executable(needs_executable)) {
            warning(c.plan, "regenerate-missing",
                    what + " not regenerated: " + needs_executable +
                        " is not installed in the target; it picks the change up when it is");
            return;
        }
        for (auto& argv : argvs)
            c.plan.commands.push_back(
                {std::move(argv),
                 "regenerate " + what +
                     (unfinished.empty() ? "" : "; the last apply's did not finish"),
                 true, produces});
        return;
    case Regenerate::first_boot: {
        FileState marker;
        marker.content = owned_file_header(c.profile.name);
        for (const auto& argv : argvs) {
            std::string line;
            for (const std::string& word : argv)
                line += (line.empty() ? "" : " ") + word;
            marker.content += line + "\n";
        }
        add_file_change(c.plan, c.facts, k_pending_regeneration_path, std::move(marker),
                        "commands the first-boot flow runs to regenerate " + what);
        // The marker goes before the file that needs it: an apply killed in between
        // leaves the marker, never a changed file without it.
        auto marker_change =
            std::find_if(c.plan.changes.begin(), c.plan.changes.end(),
                         [](const FileChange& f) { return f.path == k_pending_regeneration_path; });
        auto input_change = std::find_if(c.plan.changes.begin(), c.plan.changes.end(),
                                         [&](const FileChange& f) { return f.path == input; });
        if (marker_change != c.plan.changes.end() && input_change < marker_change)
            std::rotate(input_change, marker_change, marker_change + 1);
        info(c.plan, "regenerate-first-boot",
             what + " is regenerated at first boot (recorded in " + k_pending_regeneration_path +
                 "; --regenerate-boot=now does it now)");
        // What the last apply did not finish is first boot's now, recorded with the rest;
        // it leaves the state's pending list when the marker is written.
        if (!unfinished.empty()) {
            c.plan.recorded_for_first_boot = unfinished;
            warning(c.plan, "command-pending",
                    unfinished_text + " did not finish in the last apply, so " + what +
                        " may lack what rtprov wrote; it is recorded for first boot (" +
                        k_pending_regeneration_path +
                        "), or 'rtprov apply --regenerate-boot=now' runs it now");
        }
        return;
    }
    case Regenerate::never:
        warning(c.plan, "regenerate-never",
                what + " not regenerated (--regenerate-boot=never): regenerate it before the "
                       "next boot");
        return;
    }
}

namespace {

// What no trial may have, whatever the boot loader: the trial's own parameters in the
// profile, a panic that hangs instead of rebooting, a self-test longer than its deadline.
// Returns true, with the refusal, for any of them.
bool refuse_trial(PlanContext& c) {
    for (const KernelParam& p : c.params) {
        const bool ours = p.key == k_trial_param ||
                          (p.key == "systemd.wants" && p.value.rfind("rtprov-", 0) == 0);
        // The kernel reads panic= with kstrtoint(base 0): '0x0', '00' and '-0' are 0 too,
        // and a value it cannot read leaves the built-in timeout (0 on Debian).
        // sysctl.kernel.panic= (kernels from 5.8 apply sysctl.* boot parameters) sets the
        // same timeout, after panic= is read.
        bool hangs = false;
        if (p.key == "panic" || p.key == "sysctl.kernel.panic" || p.key == "sysctl.kernel/panic") {
            char* end = nullptr;
            errno = 0;
            long long seconds = std::strtoll(p.value.c_str(), &end, 0);
            hangs = p.value.empty() || *end != '\0' || errno != 0 || seconds == 0 ||
                    seconds < INT_MIN || seconds > INT_MAX ||
                    std::isspace(static_cast<unsigned char>(p.value.front()));
        }
        if (ours || hangs) {
            error(c.plan, "trial-param-reserved",
                  "tuning.kernel.extra has '" + p.token() + "', which " +
                      (ours ? std::string("is the trial's own")
                            : std::string("makes a panicking trial kernel hang instead of "
                                          "rebooting (panic= must be a number of seconds "
                                          "other than 0)")) +
                      "; take it out of the profile for a trial (nothing was written)");
            return true;
        }
    }
    if (c.profile.tuning.selftest.duration_s > k_trial_selftest_max_s) {
        error(c.plan, "trial-selftest-too-long",
              "tuning.selftest.duration_s is " +
                  std::to_string(c.profile.tuning.selftest.duration_s) +
                  " s; a trial's check must finish within its deadline (" +
                  std::to_string(k_trial_deadline_s) +
                  " s, rtprov-trial-deadline.target), so its self-test may take at most " +
                  std::to_string(k_trial_selftest_max_s) +
                  " s: lower it for the trial and run the long self-test after the commit "
                  "(nothing was written)");
        return true;
    }
    return false;
}

void plan_packages(PlanContext& c) {
    if (!c.profile.tuning.kernel.realtime)
        return;
    std::vector<std::string> missing;
    for (const std::string& package : c.profile.board.kernel.rt_packages) {
        c.plan.packages.push_back(package);
        if (!c.facts.installed_packages.count(package))
            missing.push_back(package);
    }
    if (missing.empty())
        return;
    const std::string list = core::join(missing, " ");
    if (c.options.install_packages) {
        // Images are often built with the package lists removed: update them first.
        std::vector<std::string> argv = {"apt-get", "install", "-y", "--no-install-recommends"};
        argv.insert(argv.end(), missing.begin(), missing.end());
        c.plan.commands.insert(c.plan.commands.begin(),
                               {{{"apt-get", "update"}, "package lists for the install", false, {}},
                                {argv, "install the PREEMPT_RT kernel", false, {}}});
    } else {
        warning(c.plan, "packages-missing",
                "the PREEMPT_RT kernel is not installed (" + list +
                    "): install it in the image (rtprov plan --packages lists it) or pass "
                    "--install-packages");
    }
}

} // namespace

// The PREEMPT_RT kernel flavour the profile installs ('rt-amd64' of linux-image-rt-amd64),
// nullopt without PREEMPT_RT; a package not named linux-image-* is refused.
std::optional<std::string> rt_flavour_of(PlanContext& c) {
    if (!c.profile.tuning.kernel.realtime)
        return std::nullopt;
    const auto& rt = c.profile.board.kernel.rt_packages;
    if (rt.empty() || rt.front().rfind("linux-image-", 0) != 0) {
        error(c.plan, "rt-package-unknown",
              "tuning.kernel.realtime is true but board.kernel.rt_packages names no "
              "linux-image-* package (Debian: linux-image-rt-amd64)");
        return std::nullopt;
    }
    return rt.front().substr(std::string("linux-image-").size());
}

std::vector<std::string> produces_of(const std::vector<std::string>& argv) {
    for (const Loader* l : loaders())
        if (l->regenerates && l->regenerates(argv))
            return l->regenerated;
    return {};
}

std::vector<std::string> readers_of(const std::string& path) {
    for (const Loader* l : loaders())
        if (std::find(l->regenerated.begin(), l->regenerated.end(), path) != l->regenerated.end())
            return l->regenerated_readers;
    return {};
}

bool is_runtime_path(const std::string& path) {
    return std::any_of(loaders().begin(), loaders().end(), [&](const Loader* l) {
        return l->runtime_file && l->runtime_file->path == path;
    });
}

std::string loader_of(const std::vector<std::string>& argv) {
    for (const Loader* l : loaders())
        if (l->regenerates && l->regenerates(argv))
            return l->name();
    return "";
}

bool is_planned_command(const std::vector<std::string>& argv, const std::string& loader,
                        CommandUse use) {
    const std::string regenerates = loader_of(argv);
    if (!regenerates.empty())
        return regenerates == loader;
    if (use != CommandUse::pending)
        return false;
    if (argv == std::vector<std::string>{"apt-get", "update"})
        return true;
    if (const Loader* l = find_loader(loader);
        l && !l->trial_arming_command.empty() && argv == l->trial_arming_command)
        return true;
    if (argv.size() >= 5 && argv[0] == "apt-get" && argv[1] == "install" && argv[2] == "-y" &&
        argv[3] == "--no-install-recommends")
        return std::all_of(argv.begin() + 4, argv.end(), [](const std::string& package) {
            return !grammar::debian_package(package);
        });
    return false;
}

void plan_boot(Plan& plan, const Profile& profile, const std::optional<ResolvedCores>& cores,
               const TargetFacts& facts, const PlanOptions& options) {
    ParamDecision decision = kernel_params(profile, cores, facts.kernels);
    plan.findings.insert(plan.findings.end(), decision.findings.begin(), decision.findings.end());
    // Keys an earlier apply owned stay rtprov's, so one the profile dropped is taken back.
    std::vector<std::string> keys = owned_keys(profile);
    for (const std::string& key : facts.previous_owned_keys)
        if (std::find(keys.begin(), keys.end(), key) == keys.end())
            keys.push_back(key);
    PlanContext c{plan, profile, facts, options, std::move(decision.params), std::move(keys)};
    if (options.trial && refuse_trial(c))
        return;
    const Loader& row = loader_for(profile, facts);
    plan.boot_loader = row.id;
    row.plan(c);
    plan_packages(c);
}

} // namespace rtprov::boot
