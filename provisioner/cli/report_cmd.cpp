// SPDX-License-Identifier: Apache-2.0
// rtprov report: a kept self-test report shown again, as text and as the HTML page with
// the trend of the runs measured the same way.
#include "provisioner/cli/commands.hpp"
#include "provisioner/cli/selftest_render.hpp"
#include "provisioner/core/error.hpp"
#include "provisioner/fs/root.hpp"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <regex>

namespace stdfs = std::filesystem;

namespace rtprov::cli {

namespace {

// The newest report the history folder holds: its names sort by time
// (20261203T142638Z.json, then -2, -3 for more in the same second). Only regular files
// with a real date and time count: a folder, a link or a name like 99999999T999999Z.json
// shadows nothing. "" when there is none.
std::string newest_report(const std::string& dir) {
    static const std::regex name(
        R"(([0-9]{4}(0[1-9]|1[0-2])(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3])[0-5][0-9])"
        R"(([0-5][0-9]|60)Z)(-([0-9]{1,6}))?\.json)");
    std::error_code ec;
    std::string newest;
    std::pair<std::string, unsigned long> newest_key;
    for (const auto& entry : stdfs::directory_iterator(dir, ec)) {
        std::smatch m;
        const std::string file = entry.path().filename().string();
        std::error_code type_ec;
        if (!std::regex_match(file, m, name) ||
            entry.symlink_status(type_ec).type() != stdfs::file_type::regular)
            continue;
        std::pair<std::string, unsigned long> key{m[1], m[7].matched ? std::stoul(m[7]) : 1};
        if (newest.empty() || key > newest_key) {
            newest = file;
            newest_key = key;
        }
    }
    if (ec)
        throw Error("cannot read the history folder " + rtprov::quoted(dir) + ": " + ec.message() +
                    "; pass --history DIR, or --from FILE");
    return newest; // "" when there is none
}

} // namespace

std::optional<selftest::SelftestReport> newest_selftest(const fs::Root& root) {
    const std::string dir = root.host_path(k_selftest_history);
    std::error_code ec;
    const stdfs::file_type type = stdfs::symlink_status(dir, ec).type();
    if (type == stdfs::file_type::not_found)
        return std::nullopt;
    if (type != stdfs::file_type::directory) {
        // not followed (a link could lead out of the root), but said: the metrics are missing
        std::cerr << "rtprov: warning: " << rtprov::quoted(dir)
                  << " is not a folder (a link, or another kind of file): the newest "
                     "self-test is left out of the textfile; make it the folder 'rtprov "
                     "selftest' keeps its reports in\n";
        return std::nullopt;
    }
    const std::string newest = newest_report(dir);
    if (newest.empty())
        return std::nullopt;
    const std::string file = std::string(k_selftest_history) + "/" + newest;
    const auto kept = root.read(file, fs::caps::k_report);
    if (!kept)
        return std::nullopt;
    return read_selftest_json(kept->content, root.shown(file));
}

std::string newest_selftest_prometheus(const fs::Root& root) {
    const std::optional<selftest::SelftestReport> newest = newest_selftest(root);
    return newest ? selftest_prometheus(*newest) : "";
}

void add_report_options(CLI::App& command, ReportCommand& c) {
    c.app = &command;
    c.app->add_option("--history", c.history_dir, "Where reports are kept")
        ->capture_default_str()
        ->type_name("DIR");
    c.app
        ->add_option("--from", c.from,
                     "The report to show (a JSON report rtprov selftest wrote, such as "
                     "/var/lib/rtprov/firstboot/selftest.json); default: the newest in --history")
        ->type_name("FILE");
    c.app
        ->add_option("--html", c.html_file,
                     "Write the page to FILE: the verdict, histograms, the worst wake-ups' "
                     "causes when traced, kernel facts and the trend")
        ->check(output_file_name_problem)
        ->type_name("FILE");
}

int run_report(const ReportCommand& c) {
    if (!c.html_file.empty())
        check_output_file(c.html_file);
    // a link is followed to the file it names, which must be a regular file
    std::string newest;
    if (c.from.empty() && (newest = newest_report(c.history_dir)).empty())
        throw Error("no self-test report in " + rtprov::quoted(c.history_dir) +
                    "; run 'rtprov selftest' first, or pass --from FILE");
    stdfs::path file = stdfs::weakly_canonical(c.from.empty() ? stdfs::path(c.history_dir) / newest
                                                              : stdfs::absolute(c.from));
    if (!c.html_file.empty() && stdfs::weakly_canonical(stdfs::absolute(c.html_file)) == file)
        throw Error("--html " + rtprov::quoted(c.html_file) +
                    " is the report it would be made from; name another file for the page");
    const fs::Root folder(file.parent_path().string());
    const auto kept = folder.read("/" + file.filename().string(), fs::caps::k_report);
    if (!kept)
        throw Error("cannot read " + rtprov::quoted(file.string()) +
                    ": it does not exist; pass --from "
                    "a report rtprov selftest wrote");
    const selftest::SelftestReport report = read_selftest_json(kept->content, file.string());

    // the trend (only the page shows it): the history's runs, without this one's own lines
    std::vector<selftest::HistoryEntry> past;
    if (!c.html_file.empty())
        try {
            const fs::Root history(c.history_dir);
            if (auto tsv = history.read("/history.tsv", fs::caps::k_state))
                for (selftest::HistoryEntry& e : selftest::parse_history(tsv->content))
                    if (e.started_at != report.started_at)
                        past.push_back(std::move(e));
        } catch (const std::exception& e) {
            std::cerr << "rtprov: warning: cannot read the history in "
                      << rtprov::quoted(c.history_dir) << ": " << e.what()
                      << "; the page has no trend, ignoring\n";
        }
    std::cout << selftest_text(report) << "report read from " << file.string() << "\n";
    if (!c.html_file.empty()) {
        write_file(c.html_file, selftest_html(report, past));
        std::cout << "page written to " << c.html_file << "\n";
    }
    return k_exit_ok;
}

} // namespace rtprov::cli
