#include "provisioner/target/probe.hpp"

#include "provisioner/core/os_release.hpp"

namespace rtprov::target {

core::TargetFacts probe(const Root& root, const core::Profile& profile, core::TargetMode mode) {
    core::TargetFacts facts;
    facts.mode = mode;
    // os-release(5): /etc/os-release, falling back to /usr/lib/os-release.
    for (const char* path : {"/etc/os-release", "/usr/lib/os-release"})
        if (auto file = root.read(path)) {
            facts.os = core::parse_os_release(file->content);
            break;
        }
    if (mode == core::TargetMode::live)
        if (auto present = root.read("/sys/devices/system/cpu/present")) {
            std::string error;
            std::string text = present->content;
            while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
                text.pop_back();
            if (auto cpus = core::parse_cpu_list(text, error); cpus && !cpus->empty())
                facts.cpu_count = unsigned(cpus->size());
        }
    for (const std::string& path : core::managed_paths(profile))
        if (auto file = root.read(path))
            facts.files[path] = *file;
    return facts;
}

} // namespace rtprov::target
