// SPDX-License-Identifier: Apache-2.0
#include "provisioner/target/probe.hpp"

#include "provisioner/core/error.hpp"

#include "provisioner/boot/kernel_config.hpp"
#include "provisioner/boot/loader.hpp"
#include "provisioner/core/os_release.hpp"
#include "provisioner/player/player_plan.hpp"
#include "provisioner/systemd/systemd_plan.hpp"
#include "provisioner/systemd/units.hpp"
#include "provisioner/target/backup_archive.hpp"
#include "provisioner/target/journal.hpp"
#include "provisioner/target/mounts.hpp"

#include <algorithm>
#include <sstream>

namespace rtprov::target {

namespace {

void read_into(const fs::Root& root, core::TargetFacts& facts, const std::string& path,
               const fs::SizeCap& cap = fs::caps::k_config) {
    facts.record(path, root.read(path, cap));
}

// /boot/vmlinuz-<v>, /boot/config-<v>, /boot/initrd.img-<v>
std::vector<core::InstalledKernel> probe_kernels(const fs::Root& root) {
    std::map<std::string, core::InstalledKernel> kernels;
    for (const std::string& name : root.list("/boot")) {
        for (const char* prefix : {"vmlinuz-", "config-", "initrd.img-"}) {
            std::string p = prefix;
            if (name.rfind(p, 0) != 0 || name.size() == p.size())
                continue;
            core::InstalledKernel& k = kernels[name.substr(p.size())];
            k.version = name.substr(p.size());
            if (p == "vmlinuz-")
                k.has_image = true;
            else if (p == "initrd.img-")
                k.has_initrd = true;
            else if (auto file = root.read("/boot/" + name, fs::caps::k_kernel_config))
                k.config = boot::parse_kernel_config(file->content);
        }
    }
    std::vector<core::InstalledKernel> out;
    for (auto& [version, kernel] : kernels)
        out.push_back(std::move(kernel));
    return out;
}

// Which of 'wanted' dpkg's status file says are installed: "Package: x" followed by
// "Status: install ok installed". Walked once without copying lines; only the wanted
// names are kept.
std::set<std::string> installed_packages(const fs::Root& root,
                                         const std::vector<std::string>& wanted) {
    std::set<std::string> packages;
    auto status = root.read("/var/lib/dpkg/status", fs::caps::k_package_status);
    if (!status)
        return packages;
    std::string_view rest(status->content), package;
    while (!rest.empty()) {
        std::size_t end = rest.find('\n');
        std::string_view line = rest.substr(0, end);
        rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
        if (line.starts_with("Package: "))
            package = line.substr(9);
        else if (line.starts_with("Status: ") && line.ends_with(" installed") &&
                 line.find("not-installed") == std::string_view::npos &&
                 std::find(wanted.begin(), wanted.end(), package) != wanted.end())
            packages.insert(std::string(package));
    }
    return packages;
}

fs::SizeCap cap_of(boot::ReadCap cap) {
    switch (cap) {
    case boot::ReadCap::config:
        return fs::caps::k_config;
    case boot::ReadCap::cmdline:
        return fs::caps::k_cmdline;
    case boot::ReadCap::grub_defaults:
        return fs::caps::k_grub_defaults;
    }
    return fs::caps::k_config;
}

// What a boot loader's probe reads of the target (boot/loader.hpp), through the root.
class RootReader final : public boot::TargetReader {
  public:
    explicit RootReader(const fs::Root& root) : m_root(root) {}
    std::optional<core::FileState> read(const std::string& path, boot::ReadCap cap) const override {
        return m_root.read(path, cap_of(cap));
    }
    std::optional<core::FileState> read_entry(const std::string& path,
                                              boot::ReadCap cap) const override {
        return m_root.read_entry(path, cap_of(cap));
    }
    bool exists(const std::string& path) const override { return m_root.exists(path); }
    bool is_directory(const std::string& path) const override { return m_root.is_directory(path); }
    std::vector<std::string> list(const std::string& dir) const override {
        return m_root.list(dir);
    }
    std::string shown(const std::string& path) const override { return m_root.shown(path); }
    std::optional<std::string> fstab_source(const std::string& dir) const override {
        auto fstab = m_root.read("/etc/fstab", fs::caps::k_config);
        return target::fstab_source(fstab ? fstab->content : "", dir);
    }
    bool is_mount_point(const std::string& dir) const override {
        return target::is_mount_point(m_root.host_path(m_root.resolve(dir)));
    }
    std::optional<core::MountFact> mount_of(const std::string& dir) const override {
        return mount_containing(m_root.host_path(m_root.resolve(dir)));
    }

  private:
    const fs::Root& m_root;
};

// Units the profile names, and the files the systemd part of plan() may write.
void probe_systemd(const fs::Root& root, const core::Profile& profile, core::TargetFacts& facts) {
    std::vector<std::string> units = {"init.scope",
                                      "system.slice",
                                      "user.slice",
                                      systemd::k_audio_slice,
                                      systemd::k_sched_features_unit,
                                      systemd::k_irqbalance_unit};
    for (const core::ServiceTuning& service : profile.tuning.services)
        units.push_back(service.unit);
    for (const std::string& unit : units) {
        for (const char* dir :
             {"/etc/systemd/system/", "/usr/lib/systemd/system/", "/lib/systemd/system/"})
            if (root.exists(dir + unit))
                facts.units.insert(unit);
        read_into(root, facts, systemd::dropin_path(unit));
    }
    read_into(root, facts, std::string(systemd::k_unit_dir) + "/" + systemd::k_audio_slice);
    const std::pair<const char*, const char*> owned[] = {
        {systemd::k_sched_features_unit, "sysinit.target"},
        {systemd::k_dma_latency_unit, "multi-user.target"},
        {systemd::k_governor_unit, "multi-user.target"},
        {systemd::k_partition_unit, "multi-user.target"},
        {core::k_trial_unit, "multi-user.target"}};
    read_into(root, facts, std::string(systemd::k_unit_dir) + "/" + systemd::k_irq_tune_unit);
    {
        const std::string link = std::string(systemd::k_unit_dir) + "/multi-user.target.wants/" +
                                 systemd::k_irq_tune_boot;
        facts.record(link, root.read_entry(link, fs::caps::k_config));
    }
    read_into(root, facts, systemd::k_sound_udev_rule);
    for (const auto& [unit, wanted_by] : owned) {
        read_into(root, facts, std::string(systemd::k_unit_dir) + "/" + unit);
        const std::string link =
            std::string(systemd::k_unit_dir) + "/" + wanted_by + ".wants/" + unit;
        facts.record(link, root.read_entry(link, fs::caps::k_config));
    }
    read_into(root, facts, std::string(systemd::k_unit_dir) + "/" + core::k_health_unit);
    for (const char* link_dir : systemd::k_health_link_dirs) {
        const std::string link =
            std::string(systemd::k_unit_dir) + "/" + link_dir + "/" + core::k_health_unit;
        facts.record(link, root.read_entry(link, fs::caps::k_config));
    }
    read_into(root, facts, std::string(systemd::k_unit_dir) + "/" + core::k_trial_deadline_target);
    read_into(root, facts, systemd::k_trial_watchdog_dropin);
    // First boot (systemd::plan_firstboot): its configuration, its enable link, and the
    // unit where systemctl would find it, each entry as it is (a mask is a link).
    read_into(root, facts, core::k_firstboot_config_path);
    facts.record(systemd::firstboot_link(),
                 root.read_entry(systemd::firstboot_link(), fs::caps::k_config));
    for (const char* dir : systemd::k_unit_search_dirs) {
        const std::string unit = std::string(dir) + "/" + core::k_firstboot_unit;
        facts.record(unit, root.read_entry(unit, fs::caps::k_config));
    }
    for (const char* exe : {"/usr/bin/rtprov", "/usr/local/bin/rtprov"})
        if (root.exists(exe))
            facts.executables.push_back(exe);
}

// The originals of the files rtprov changed, from its state and backup.
void probe_originals(const fs::Root& root, core::TargetFacts& facts) {
    auto state = read_state(root);
    if (!state)
        return;
    std::optional<Backups> backups;
    for (const ManagedFile& file : state->files) {
        if (file.created)
            continue;
        if (!backups) {
            auto archive = root.read(k_backup_file, fs::caps::k_backup);
            backups = archive ? read_backup_archive(archive->content, root.shown(k_backup_file))
                              : Backups{};
        }
        auto it = backups->find(file.path);
        if (it == backups->end())
            continue;
        // State paths are resolved; plan() uses the paths as written.
        for (const auto& [path, state_of_path] : facts.files)
            if (root.resolve(path) == file.path)
                facts.originals[path] = it->second.content;
    }
    facts.pending_commands = state->pending;
}

} // namespace

void probe_players(const fs::Root& root, const std::vector<std::string>& units,
                   core::TargetFacts& facts) {
    if (!facts.probed)
        facts.probed.emplace();
    for (core::BufferStack stack : {core::BufferStack::mpd, core::BufferStack::squeezelite,
                                    core::BufferStack::jack, core::BufferStack::pipewire})
        if (const std::string exe = player::player_program(stack);
            root.exists(exe) && !facts.has_executable(exe))
            facts.executables.push_back(exe);
    const player::ReadFile read = [&](const std::string& path) -> core::Result<std::string> {
        std::optional<core::FileState> file;
        try {
            file = root.read(path, fs::caps::k_config);
        } catch (const Error& e) {
            // Not the whole plan's end: the player's reader names the file (and the include
            // that led there), and the other players are still read.
            facts.record(path, std::nullopt);
            facts.unreadable[path] = e.what();
            return core::Result<std::string>::failed(e.what());
        }
        facts.record(path, file);
        if (!file)
            return core::Result<std::string>::failed("'" + path + "' is not there", true);
        return {file->content, "", false};
    };
    const player::ListDir list = [&](const std::string& dir) {
        std::vector<std::string> names =
            root.is_directory(dir) ? root.list(dir) : std::vector<std::string>{};
        std::sort(names.begin(), names.end());
        facts.listings[dir] = names;
        facts.probed->insert(dir);
        return names;
    };
    player::visit_player_files(read, list, units);
}

core::TargetFacts probe(const fs::Root& root, const core::Profile& profile, core::TargetMode mode,
                        bool trial) {
    core::TargetFacts facts;
    facts.probed.emplace(); // from here on, planners may read only what this function read
    facts.mode = mode;
    // os-release(5): /etc/os-release, falling back to /usr/lib/os-release.
    for (const char* path : {"/etc/os-release", "/usr/lib/os-release"})
        if (auto file = root.read(path, fs::caps::k_config)) {
            facts.os = core::parse_os_release(file->content);
            break;
        }
    facts.kernels = probe_kernels(root);
    // dpkg's status file is large (400 KB on a plain Debian 13 root) and only the RT kernel
    // check needs it.
    if (profile.tuning.kernel.realtime)
        facts.installed_packages = installed_packages(root, profile.board.kernel.rt_packages);
    if (root.exists("/usr/bin/apt-get"))
        facts.executables.push_back("/usr/bin/apt-get");

    read_into(root, facts, core::k_applied_profile_path);
    read_into(root, facts, core::k_pending_regeneration_path);
    const RootReader reader(root);
    const boot::Loader& loader = boot::loader_for(profile, reader);
    facts.boot_loader = loader.id;
    loader.probe(reader, profile, facts, trial);
    probe_systemd(root, profile, facts);
    if (profile.tuning.audio_buffers == core::BufferMode::write) {
        std::vector<std::string> units;
        for (const core::ServiceTuning& service : profile.tuning.services)
            units.push_back(service.unit);
        probe_players(root, units, facts);
    }
    probe_originals(root, facts);
    return facts;
}

} // namespace rtprov::target
