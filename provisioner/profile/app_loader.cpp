// SPDX-License-Identifier: Apache-2.0
#include "provisioner/profile/app_loader.hpp"

#include "provisioner/core/error.hpp"
#include "provisioner/core/grammar.hpp"
#include "provisioner/fs/root.hpp"
#include "provisioner/profile/schema.hpp"
#include "provisioner/profile/yaml_tree.hpp"

#include <algorithm>
#include <filesystem>

namespace rtprov::profile {

namespace stdfs = std::filesystem;

namespace {

using A = core::AppKnowledge;

// The policies an app's own real-time threads run at: those with a static priority.
core::Words<core::SchedPolicy> app_policies() {
    static const auto k_words = [] {
        std::vector<std::pair<std::string_view, core::SchedPolicy>> out;
        for (const core::SchedPolicyName& name : core::sched_policy_names())
            if (name.static_priority)
                out.emplace_back(name.word, name.policy);
        return out;
    }();
    return k_words;
}

// A period or buffer: '125ms' or '1024frames' (core::parse_audio_size).
schema::Key<A> audio_size(std::string_view name, std::optional<core::AudioSize> A::*field) {
    return schema::custom<A>(
        name,
        [field](schema::Reader& c, const Tree& t, const std::string& shown, A& a) {
            if (auto text = c.text(t, shown, schema::non_empty)) {
                core::Result<core::AudioSize> size = core::parse_audio_size(*text);
                if (size)
                    a.*field = *size;
                else
                    c.fail(t.origin, "'" + shown + "': " + size.problem);
            }
        },
        {});
}

// Every key of an app's facts.
const schema::Keys<A>& app_keys() {
    using namespace schema;
    static const Keys<A> k_keys = {
        text<A>("name", RTPROV_FIELD(A, name), non_empty),
        {"units",
         [](Reader& c, const Tree& t, const std::string& shown, A& a) {
             if (auto units = c.strings(t, shown, core::grammar::service_unit))
                 a.units = std::move(*units);
         },
         {},
         {},
         "the systemd units that run it"},
        text<A>("threads", RTPROV_FIELD(A, threads), non_empty),
        custom<A>("policy",
                  [](Reader& c, const Tree& t, const std::string& shown, A& a) {
                      if (auto policy = c.choice(t, shown, app_policies()))
                          a.policy = *policy;
                  },
                  {}),
        {"priority",
         [](Reader& c, const Tree& t, const std::string& shown, A& a) {
             if (auto priority = c.integer(t, shown, 1, 99))
                 a.priority = int(*priority);
         },
         {},
         {},
         "the lowest of its own real-time threads"},
        // the highest of its own real-time threads, when they use several
        custom<A>("highest_priority",
                  [](Reader& c, const Tree& t, const std::string& shown, A& a) {
                      if (auto priority = c.integer(t, shown, 1, 99))
                          a.highest_priority = int(*priority);
                  },
                  {}),
        strings<A>("rt_threads", RTPROV_FIELD(A, rt_threads), non_empty),
        audio_size("alsa_period", &A::alsa_period),
        audio_size("alsa_buffer", &A::alsa_buffer),
    };
    return k_keys;
}

} // namespace

std::vector<std::string> app_key_names() {
    return schema::paths(app_keys());
}

std::vector<core::AppKnowledge> load_apps(const std::string& dir) {
    // Without this knowledge rtprov would not know which apps set their own real-time
    // priorities, and would plan the very inversion it exists to refuse.
    const std::string missing =
        "rtprov's knowledge of audio apps (which set their own real-time priorities: MPD, "
        "PipeWire, JACK, ...) is missing: ";
    const std::string fix = "; reinstall rtprov, or build the 'rtprov_apps' target";
    std::error_code ec;
    if (!stdfs::is_directory(dir, ec))
        throw Error(missing + "no folder " + quoted(dir) + fix);
    std::vector<stdfs::path> files;
    for (const auto& entry : stdfs::directory_iterator(dir, ec))
        if (entry.path().extension() == ".yaml")
            files.push_back(entry.path());
    if (files.empty())
        throw Error(missing + quoted(dir) + " holds no *.yaml file" + fix);
    std::sort(files.begin(), files.end());
    std::vector<core::AppKnowledge> apps;
    std::vector<core::ProfileProblem> problems;
    for (const stdfs::path& path : files) {
        const std::string file = path.string();
        std::vector<core::ProfileProblem> parsed;
        Tree root =
            parse_yaml(fs::read_host_file(file, fs::caps::k_config).value_or(""), file, parsed);
        if (!parsed.empty()) {
            problems.insert(problems.end(), parsed.begin(), parsed.end());
            continue;
        }
        schema::Reader file_reader(problems);
        const Tree* list = root.find("apps");
        if (!file_reader.map(root, file, {"apps"}))
            continue;
        if (!list || list->kind != Tree::Kind::map) {
            file_reader.fail(list ? list->origin : root.origin,
                             "expected 'apps:' mapping app keys to their facts");
            continue;
        }
        for (const TreeEntry& entry : list->entries) {
            A app;
            app.key = entry.key;
            app.name = entry.key;
            schema::Reader reader(problems, "app " + schema::shown(entry.key) + ": ");
            if (entry.value.kind != Tree::Kind::map)
                reader.fail(entry.value.origin, "must be a map of its facts");
            else
                schema::read(reader, entry.value, entry.key, "", app_keys(), app);
            apps.push_back(std::move(app));
        }
    }
    if (!problems.empty())
        schema::throw_problems(problems);
    return apps;
}

} // namespace rtprov::profile
