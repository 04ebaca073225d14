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
        text<F>(
            "profile", +[](F & f) -> auto& { return f.profile; }, non_empty),
        strings<F>(
            "set", +[](F & f) -> auto& { return f.sets; }, non_empty),
        flag<F>(
            "install_packages", +[](F & f) -> auto& { return f.install_packages; }),
        flag<F>(
            "reboot", +[](F & f) -> auto& { return f.reboot; }),
        number<F>(
            "selftest_s", +[](F & f) -> auto& { return f.selftest_s; }, 0, 3600),
        number<F>(
            "pi_probe_s", +[](F & f) -> auto& { return f.pi_probe_s; }, 0, 3600),
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
