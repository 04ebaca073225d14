#include "provisioner/profile/firstboot_config.hpp"

#include "provisioner/core/error.hpp"

#include <yaml-cpp/yaml.h>

namespace rtprov::profile {

namespace {

std::string where(const std::string& file, const YAML::Mark& mark) {
    if (mark.line < 0)
        return file;
    return file + ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
}

template <typename T>
T scalar(const std::string& file, const std::string& key, const YAML::Node& node,
         const char* expected) {
    try {
        if (node.IsScalar())
            return node.as<T>();
    } catch (const YAML::Exception&) {
    }
    throw Error(where(file, node.Mark()) + ": '" + key + "' must be " + expected);
}

unsigned seconds(const std::string& file, const std::string& key, const YAML::Node& node) {
    long long value = scalar<long long>(file, key, node, "a number of seconds (0-3600)");
    if (value < 0 || value > 3600)
        throw Error(where(file, node.Mark()) + ": '" + key + "' must be a number of seconds " +
                    "(0-3600)");
    return unsigned(value);
}

} // namespace

FirstbootConfig parse_firstboot_config(const std::string& text, const std::string& label) {
    FirstbootConfig config;
    YAML::Node root;
    try {
        root = YAML::Load(text);
    } catch (const YAML::Exception& e) {
        throw Error(where(label, e.mark) + ": " + e.msg);
    }
    if (root.IsNull())
        return config;
    if (!root.IsMap())
        throw Error(where(label, root.Mark()) +
                    ": expected keys such as 'profile:', 'set:' and 'reboot:'");
    for (const auto& item : root) {
        const std::string key = item.first.Scalar();
        const YAML::Node& value = item.second;
        if (key == "profile") {
            config.profile = scalar<std::string>(label, key, value, "a profile name");
        } else if (key == "set") {
            if (!value.IsSequence())
                throw Error(where(label, value.Mark()) +
                            ": 'set' must be a list such as [\"tuning.cores.reserved=3\"]");
            for (const auto& entry : value)
                config.sets.push_back(
                    scalar<std::string>(label, key, entry, "a list of KEY=VALUE strings"));
        } else if (key == "install_packages") {
            config.install_packages = scalar<bool>(label, key, value, "true or false");
        } else if (key == "reboot") {
            config.reboot = scalar<bool>(label, key, value, "true or false");
        } else if (key == "selftest_s") {
            config.selftest_s = seconds(label, key, value);
        } else if (key == "pi_probe_s") {
            config.pi_probe_s = seconds(label, key, value);
        } else {
            throw Error(where(label, item.first.Mark()) + ": unknown key '" + key +
                        "'; known: profile, set, install_packages, reboot, selftest_s, "
                        "pi_probe_s");
        }
    }
    return config;
}

} // namespace rtprov::profile
