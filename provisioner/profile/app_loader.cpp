#include "provisioner/profile/app_loader.hpp"

#include "provisioner/core/error.hpp"
#include "provisioner/core/grammar.hpp"
#include "provisioner/profile/yaml_tree.hpp"
#include "provisioner/target/root.hpp"

#include <algorithm>
#include <charconv>
#include <filesystem>

namespace rtprov::profile {

namespace fs = std::filesystem;

namespace {

Error at(const Tree& node, const std::string& message) {
    return Error(node.origin.to_string() + ": " + message);
}

// The app's key 'key' as a string; 'fallback' when it is not there.
std::string text(const std::string& app, const Tree& facts, const char* key,
                 const std::optional<std::string>& fallback) {
    const Tree* node = facts.find(key);
    if (!node) {
        if (!fallback)
            throw at(facts, "app '" + app + "' needs '" + key + "'");
        return *fallback;
    }
    if (node->kind != Tree::Kind::scalar || node->scalar.empty())
        throw at(*node, "app '" + app + "': '" + key + "' must be a string");
    return node->scalar;
}

// A list of non-empty strings; 'what' says what its items are.
std::vector<std::string> strings(const std::string& app, const Tree& node, const std::string& key,
                                 const std::string& what) {
    const std::string problem = "app '" + app + "': '" + key + "' must be a list of " + what;
    if (node.kind != Tree::Kind::sequence)
        throw at(node, problem);
    std::vector<std::string> out;
    for (const Tree& item : node.items) {
        if (item.kind != Tree::Kind::scalar || item.scalar.empty())
            throw at(item, problem);
        out.push_back(item.scalar);
    }
    return out;
}

core::AppKnowledge read_app(const std::string& key, const Tree& facts) {
    if (facts.kind != Tree::Kind::map)
        throw at(facts, "app '" + key + "' must be a map of its facts");
    static const std::vector<std::string_view> k_keys = {"name",   "units",    "threads",
                                                         "policy", "priority", "rt_threads"};
    for (const TreeEntry& entry : facts.entries)
        if (std::find(k_keys.begin(), k_keys.end(), entry.key) == k_keys.end())
            throw Error(entry.key_origin.to_string() + ": app '" + key +
                        "': " + unknown_key(entry.key, k_keys));
    core::AppKnowledge app;
    app.key = key;
    app.name = text(key, facts, "name", key);
    const Tree* units = facts.find("units");
    if (!units)
        throw at(facts, "app '" + key + "' needs 'units', the systemd units that run it");
    app.units = strings(key, *units, "units", "systemd unit names such as [mpd.service]");
    for (const std::string& unit : app.units)
        if (auto broken = core::grammar::service_unit(unit))
            throw at(*units, "app '" + key + "': unit '" + unit + "': " + *broken);
    app.threads = text(key, facts, "threads", std::string());
    const std::string policy = text(key, facts, "policy", std::string("fifo"));
    const std::optional<core::SchedPolicy> parsed = core::sched_policy_from_word(policy);
    if (parsed != core::SchedPolicy::fifo && parsed != core::SchedPolicy::rr)
        throw at(*facts.find("policy"), "app '" + key + "': 'policy' must be fifo or rr");
    app.policy = *parsed;
    const Tree* priority = facts.find("priority");
    if (!priority)
        throw at(facts, "app '" + key +
                            "' needs 'priority', the lowest of its own real-time "
                            "threads");
    const std::string& value = priority->scalar;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), app.priority);
    if (priority->kind != Tree::Kind::scalar || value.empty() || ec != std::errc() ||
        end != value.data() + value.size())
        throw at(*priority, "app '" + key + "': 'priority' must be a whole number");
    if (app.priority < 1 || app.priority > 99)
        throw at(*priority, "priority " + std::to_string(app.priority) + " is outside 1-99");
    if (const Tree* globs = facts.find("rt_threads"))
        app.rt_threads =
            strings(key, *globs, "rt_threads", "thread-name globs such as [rtio, \"output:*\"]");
    return app;
}

} // namespace

std::vector<core::AppKnowledge> load_apps(const std::string& dir) {
    // Without this knowledge rtprov would not know which apps set their own real-time
    // priorities, and would plan the very inversion it exists to refuse.
    const std::string missing =
        "rtprov's knowledge of audio apps (which set their own real-time priorities: MPD, "
        "PipeWire, JACK, ...) is missing: ";
    const std::string fix = "; reinstall rtprov, or build the 'rtprov_apps' target";
    std::error_code ec;
    if (!fs::is_directory(dir, ec))
        throw Error(missing + "no folder " + quoted(dir) + fix);
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(dir, ec))
        if (entry.path().extension() == ".yaml")
            files.push_back(entry.path());
    if (files.empty())
        throw Error(missing + quoted(dir) + " holds no *.yaml file" + fix);
    std::sort(files.begin(), files.end());
    std::vector<core::AppKnowledge> apps;
    for (const fs::path& path : files) {
        const std::string file = path.string();
        std::vector<core::ProfileProblem> problems;
        Tree root = parse_yaml(target::read_host_file(file, target::caps::k_config).value_or(""),
                               file, problems);
        if (!problems.empty())
            throw Error(problems.front().origin.to_string() + ": " + problems.front().message);
        const Tree* list = root.find("apps");
        if (!list || list->kind != Tree::Kind::map)
            throw at(list ? *list : root, "expected 'apps:' mapping app keys to their facts");
        for (const TreeEntry& entry : list->entries)
            apps.push_back(read_app(entry.key, entry.value));
    }
    return apps;
}

} // namespace rtprov::profile
