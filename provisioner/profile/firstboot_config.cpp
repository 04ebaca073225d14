#include "provisioner/profile/firstboot_config.hpp"

#include "provisioner/core/error.hpp"
#include "provisioner/profile/yaml_tree.hpp"

#include <charconv>

namespace rtprov::profile {

namespace {

Error at(const Tree& node, const std::string& message) {
    return Error(node.origin.to_string() + ": " + message);
}

const std::string& scalar(const std::string& key, const Tree& node, const char* expected) {
    if (node.kind != Tree::Kind::scalar)
        throw at(node, "'" + key + "' must be " + expected);
    return node.scalar;
}

bool boolean(const std::string& key, const Tree& node) {
    const std::string& value = scalar(key, node, "true or false");
    if (value != "true" && value != "false")
        throw at(node, "'" + key + "' must be true or false");
    return value == "true";
}

unsigned seconds(const std::string& key, const Tree& node) {
    const char* expected = "a number of seconds (0-3600)";
    const std::string& text = scalar(key, node, expected);
    unsigned value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value > 3600)
        throw at(node, "'" + key + "' must be " + expected);
    return value;
}

} // namespace

FirstbootConfig parse_firstboot_config(const std::string& text, const std::string& label) {
    FirstbootConfig config;
    std::vector<core::ProfileProblem> problems;
    Tree root = parse_yaml(text, label, problems, EmptyDocument::null);
    if (!problems.empty())
        throw Error(problems.front().origin.to_string() + ": " + problems.front().message);
    if (root.kind == Tree::Kind::null)
        return config;
    if (root.kind != Tree::Kind::map)
        throw at(root, "expected keys such as 'profile:', 'set:' and 'reboot:'");
    for (const TreeEntry& item : root.entries) {
        const std::string& key = item.key;
        const Tree& value = item.value;
        if (key == "profile") {
            config.profile = scalar(key, value, "a profile name");
        } else if (key == "set") {
            if (value.kind != Tree::Kind::sequence)
                throw at(value, "'set' must be a list such as [\"tuning.cores.reserved=3\"]");
            for (const Tree& entry : value.items)
                config.sets.push_back(scalar(key, entry, "a list of KEY=VALUE strings"));
        } else if (key == "install_packages") {
            config.install_packages = boolean(key, value);
        } else if (key == "reboot") {
            config.reboot = boolean(key, value);
        } else if (key == "selftest_s") {
            config.selftest_s = seconds(key, value);
        } else if (key == "pi_probe_s") {
            config.pi_probe_s = seconds(key, value);
        } else {
            throw Error(item.key_origin.to_string() + ": " +
                        unknown_key(key, {"profile", "set", "install_packages", "reboot",
                                          "selftest_s", "pi_probe_s"}));
        }
    }
    return config;
}

} // namespace rtprov::profile
