#include "provisioner/profile/app_loader.hpp"

#include "provisioner/core/error.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>

namespace rtprov::profile {

namespace fs = std::filesystem;

namespace {

std::string where(const std::string& file, const YAML::Node& node) {
    const YAML::Mark mark = node.Mark();
    if (mark.line < 0)
        return file;
    return file + ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
}

// The optional 'rt_threads:' list of thread-name globs; each must be a non-empty string.
std::vector<std::string> rt_threads(const std::string& file, const std::string& key,
                                    const YAML::Node& node) {
    std::vector<std::string> globs;
    if (!node)
        return globs;
    const std::string problem = ": app '" + key +
                                "': 'rt_threads' must be a list of thread-name "
                                "globs such as [rtio, \"output:*\"]";
    if (!node.IsSequence())
        throw Error(where(file, node) + problem);
    for (const auto& item : node) {
        if (!item.IsScalar() || item.Scalar().empty())
            throw Error(where(file, item) + problem);
        globs.push_back(item.Scalar());
    }
    return globs;
}

} // namespace

std::vector<core::AppKnowledge> load_apps(const std::string& dir) {
    std::vector<core::AppKnowledge> apps;
    std::error_code ec;
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(dir, ec))
        if (entry.path().extension() == ".yaml")
            files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    for (const fs::path& path : files) {
        const std::string file = path.string();
        YAML::Node root;
        try {
            root = YAML::LoadFile(file);
        } catch (const YAML::Exception& e) {
            throw Error(file + ":" + std::to_string(e.mark.line + 1) + ":" +
                        std::to_string(e.mark.column + 1) + ": " + e.msg);
        }
        const YAML::Node list = root["apps"];
        if (!list.IsMap())
            throw Error(where(file, root) + ": expected 'apps:' mapping app keys to their facts");
        for (const auto& kv : list) {
            core::AppKnowledge app;
            app.key = kv.first.as<std::string>();
            const YAML::Node& facts = kv.second;
            try {
                app.name = facts["name"].as<std::string>(app.key);
                for (const auto& unit : facts["units"])
                    app.units.push_back(unit.as<std::string>());
                app.threads = facts["threads"].as<std::string>("");
                app.policy = facts["policy"].as<std::string>("fifo");
                app.priority = facts["priority"].as<int>();
            } catch (const YAML::Exception& e) {
                throw Error(where(file, facts) + ": app '" + app.key +
                            "' needs name, units, threads, policy and a numeric priority (" +
                            e.msg + ")");
            }
            if (app.priority < 1 || app.priority > 99)
                throw Error(where(file, facts["priority"]) + ": priority " +
                            std::to_string(app.priority) + " is outside 1-99");
            app.rt_threads = rt_threads(file, app.key, facts["rt_threads"]);
            apps.push_back(std::move(app));
        }
    }
    return apps;
}

} // namespace rtprov::profile
