// SPDX-License-Identifier: Apache-2.0
#include "provisioner/pipeline/profile_search.hpp"

#include <memory>

namespace rtprov::pipeline {

namespace {

// A FileSource reading through a target root.
class RootFiles : public profile::FileSource {
  public:
    explicit RootFiles(const fs::Root& root) : m_root(root) {}
    std::optional<std::string> read(const std::string& path) const override {
        if (!m_root.exists(path) || m_root.is_directory(path))
            return std::nullopt;
        auto file = m_root.read(path, fs::caps::k_config);
        return file ? std::optional(file->content) : std::nullopt;
    }
    std::vector<std::string> list(const std::string& dir) const override {
        return m_root.list(dir);
    }
    std::string identity(const std::string& path) const override { return m_root.resolve(path); }
    std::string display(const std::string& path) const override { return m_root.shown(path); }

  private:
    const fs::Root& m_root;
};

} // namespace

profile::SearchPath profile_search_path(const std::vector<std::string>& profile_dirs,
                                        const fs::Root* root, const std::string& builtin_dir) {
    profile::SearchPath path;
    for (const std::string& dir : profile_dirs)
        path.push_back({dir, "--profile-dir " + dir, profile::host_files()});
    if (root && root->is_directory("/etc/rtprov/profiles"))
        path.push_back({"/etc/rtprov/profiles", "target /etc/rtprov/profiles",
                        std::make_shared<RootFiles>(*root)});
    path.push_back({builtin_dir, "built-in", profile::host_files()});
    return path;
}

} // namespace rtprov::pipeline
