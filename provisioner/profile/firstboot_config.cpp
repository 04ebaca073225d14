// SPDX-License-Identifier: Apache-2.0
#include "provisioner/profile/firstboot_config.hpp"

#include "provisioner/core/error.hpp"
#include "provisioner/profile/schema.hpp"
#include "provisioner/profile/yaml_tree.hpp"

#include <yaml-cpp/emitter.h>

#include <algorithm>

namespace rtprov::profile {

namespace {

using F = FirstbootConfig;

// Every key of firstboot.yaml (docs/firstboot.md).
const schema::Keys<F>& firstboot_keys() {
    using namespace schema;
    static const Keys<F> k_keys = {
        text<F>("profile", RTPROV_FIELD(F, profile)), // "": detect the board
        strings<F>("set", RTPROV_FIELD(F, sets), non_empty),
        flag<F>("install_packages", RTPROV_FIELD(F, install_packages)),
        flag<F>("reboot", RTPROV_FIELD(F, reboot)),
        flag<F>("trial", RTPROV_FIELD(F, trial)),
        number<F>("selftest_s", RTPROV_FIELD(F, selftest_s), 0, 3600),
        number<F>("pi_probe_s", RTPROV_FIELD(F, pi_probe_s), 0, 3600),
    };
    return k_keys;
}

// The keys that are first boot's own: those --firstboot-set may set. 'profile' and 'set'
// are what the apply itself was given.
bool apply_given(std::string_view key) {
    return key == "profile" || key == "set";
}

} // namespace

std::vector<std::string> firstboot_key_names() {
    return schema::paths(firstboot_keys());
}

FirstbootConfig parse_firstboot_config(const std::string& text, const std::string& label) {
    FirstbootConfig config;
    std::vector<core::ProfileProblem> problems;
    Tree root = parse_yaml(text, label, problems, EmptyDocument::null);
    if (problems.empty()) {
        schema::Reader reader(problems);
        if (root.kind != Tree::Kind::map && root.kind != Tree::Kind::null)
            reader.fail(root.origin, "expected keys such as 'profile:', 'set:' and 'reboot:'");
        else
            schema::read(reader, root, label, "", firstboot_keys(), config);
    }
    if (!problems.empty())
        schema::throw_problems(problems);
    return config;
}

std::string write_firstboot_config(const FirstbootConfig& config, const std::string& header) {
    YAML::Emitter out;
    schema::write(out, firstboot_keys(), config);
    // yaml-cpp refuses what it cannot write (a string that is not UTF-8) by an error
    // state, not an exception.
    if (!out.good())
        throw Error("cannot write first boot's configuration as YAML: " + out.GetLastError());
    std::string text = header + out.c_str() + "\n";
    // What first boot reads back must be what was written: a value it would refuse (a
    // byte that is not UTF-8) or read otherwise is refused here, before any file is.
    const std::string label = "firstboot.yaml as written";
    std::string problem;
    try {
        if (parse_firstboot_config(text, label) != config)
            problem = "it would read back otherwise";
    } catch (const Error& e) {
        problem = e.what();
    }
    if (!problem.empty())
        throw Error("cannot write first boot's configuration for profile " +
                    quoted(config.profile) + " as YAML it reads back: " + problem);
    return text;
}

void set_firstboot_keys(FirstbootConfig& config, const std::vector<std::string>& settings) {
    std::vector<core::ProfileProblem> problems;
    // The settings as a map of the file's keys, each value parsed as YAML where it was
    // given, so that the table reads them as it reads the file.
    Tree tree{Tree::Kind::map, {}, {}, {}, core::Origin{"--firstboot-set"}};
    for (const std::string& setting : settings) {
        const core::Origin origin{"--firstboot-set " + shown(setting)};
        const auto equals = setting.find('=');
        if (equals == std::string::npos || equals == 0) {
            problems.push_back({origin, "expected KEY=VALUE, e.g. 'reboot=false'"});
            continue;
        }
        const std::string key = setting.substr(0, equals);
        if (apply_given(key)) {
            problems.push_back({origin, "'" + key +
                                            "' of firstboot.yaml is what the apply itself is "
                                            "given: use --" +
                                            (key == "set" ? "set" : "profile") + " instead"});
            continue;
        }
        std::vector<core::ProfileProblem> value_problems;
        Tree value = parse_yaml(setting.substr(equals + 1), "--firstboot-set", value_problems,
                                EmptyDocument::null);
        if (!value_problems.empty()) {
            problems.push_back(
                {origin, "value is not valid YAML: " + value_problems.front().message});
            continue;
        }
        value.origin = origin;
        if (Tree* known = tree.find(key))
            *known = std::move(value); // the last one given wins, as with --set
        else
            tree.entries.push_back({key, origin, std::move(value)});
    }
    schema::Keys<F> own;
    std::copy_if(firstboot_keys().begin(), firstboot_keys().end(), std::back_inserter(own),
                 [](const schema::Key<F>& key) { return !apply_given(key.path); });
    schema::Reader reader(problems);
    schema::read(reader, tree, "--firstboot-set", "", own, config);
    if (!problems.empty())
        schema::throw_problems(problems);
}

} // namespace rtprov::profile
