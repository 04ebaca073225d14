#include "provisioner/live/board_facts.hpp"

#include "provisioner/core/cpu_list.hpp"
#include "provisioner/core/os_release.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

namespace rtprov::live {

namespace {

std::optional<std::string> read_text(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return std::nullopt;
    std::ostringstream out;
    out << in.rdbuf();
    std::string text = out.str();
    // device-tree strings end in NUL, sysfs values in a newline
    while (!text.empty() && (text.back() == '\0' || text.back() == '\n'))
        text.pop_back();
    return text;
}

} // namespace

core::BoardFacts read_board_facts(const std::string& sysroot) {
    std::filesystem::path root(sysroot);
    core::BoardFacts facts;
    facts.device_tree_model = read_text(root / "proc/device-tree/model");
    facts.dmi_product_name = read_text(root / "sys/class/dmi/id/product_name");
    auto os = read_text(root / "etc/os-release");
    if (!os)
        os = read_text(root / "usr/lib/os-release");
    if (os) {
        core::OsRelease release = core::parse_os_release(*os);
        if (!release.id.empty())
            facts.os_ids.push_back(release.id);
        facts.os_ids.insert(facts.os_ids.end(), release.id_like.begin(), release.id_like.end());
    }
    // The CPUs present, as 'apply --live' counts them (target::probe), so that first boot
    // resolves the same core layout apply wrote.
    if (auto online = read_text(root / "sys/devices/system/cpu/present")) {
        std::string error;
        if (auto cpus = core::parse_cpu_list(*online, error))
            facts.cpu_count = unsigned(cpus->size());
    }
    return facts;
}

} // namespace rtprov::live
