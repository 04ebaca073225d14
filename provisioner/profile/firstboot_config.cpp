// SPDX-License-Identifier: Apache-2.0
#include "provisioner/profile/firstboot_config.hpp"

#include "provisioner/profile/schema.hpp"
#include "provisioner/profile/yaml_tree.hpp"

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

} // namespace rtprov::profile
