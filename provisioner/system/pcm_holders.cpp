// SPDX-License-Identifier: Apache-2.0
#include "provisioner/system/pcm_holders.hpp"

#include "provisioner/core/text.hpp"
#include "provisioner/system/proc_stat.hpp"

#include <algorithm>

namespace rtprov::system {

namespace {

std::string proc(int pid, const std::string& name) {
    return "/proc/" + std::to_string(pid) + "/" + name;
}

// Whether a descriptor's link names 'node': '/dev/snd/pcmC0D0p', the same below another
// root ('/srv/chroot/dev/snd/pcmC0D0p'), ' (deleted)' after it once the node is gone
// (d_path(), fs/d_path.c).
bool names_node(std::string target, const std::string& node) {
    if (target.ends_with(" (deleted)"))
        target.resize(target.size() - 10);
    return target.ends_with(node);
}

std::string holder_text(const PcmHolder& h) {
    std::string text = h.comm + " (" + std::to_string(h.pid) + ")";
    if (h.unit.empty())
        return text + ", in no service";
    if (h.user)
        return text + " of user " + std::to_string(*h.user) + "'s '" + h.unit + "'";
    return text + " of '" + h.unit + "'";
}

bool in_service(const PcmHolder& h) {
    return h.unit.ends_with(".service") && !(h.unit.starts_with("user@") && !h.user);
}

} // namespace

Fact<PcmHolders> read_pcm_holders(const SysRoot& root, unsigned card, unsigned device) {
    PcmHolders out;
    out.node = "/dev/snd/pcmC" + std::to_string(card) + "D" + std::to_string(device) + "p";
    Fact<std::vector<int>> pids = root.numbered("/proc");
    if (!pids)
        return Fact<PcmHolders>::failed(pids.problem);
    for (int pid : *pids) {
        Fact<std::vector<std::string>> fds = root.names(proc(pid, "fd"));
        if (!fds) {
            if (fds.absent)
                continue; // it ended
            if (out.unseen++ == 0)
                out.unseen_problem = core::one_line(fds.problem);
            continue;
        }
        bool holds = false;
        for (const std::string& fd : *fds) {
            Fact<std::string> target = root.link(proc(pid, "fd/" + fd));
            if (target && names_node(*target, out.node)) {
                holds = true;
                break;
            }
        }
        if (!holds)
            continue;
        Fact<std::string> comm = root.text(proc(pid, "comm"));
        if (!comm && comm.absent)
            continue; // it ended while it was looked at
        PcmHolder h;
        h.pid = pid;
        std::string name = comm ? *comm : std::string();
        if (name.ends_with('\n'))
            name.pop_back(); // the kernel's
        h.comm = name.empty() ? "process" : core::one_line(name);
        if (Fact<std::string> cgroup = root.text(proc(pid, "cgroup"))) {
            CgroupUnit unit = unit_of_cgroup(systemd_cgroup(*cgroup));
            h.unit = core::one_line(unit.unit);
            h.user = unit.user;
        }
        out.holders.push_back(std::move(h));
    }
    return {std::move(out), {}, false};
}

std::vector<std::string> free_command(const PcmHolder& holder) {
    if (!in_service(holder))
        return {"kill", std::to_string(holder.pid)};
    if (holder.user)
        return {"systemctl", "--user", "--machine=" + std::to_string(*holder.user) + "@", "stop",
                holder.unit};
    return {"systemctl", "stop", holder.unit};
}

std::string holder_refusal(const PlaybackDevice& device, const PcmHolders& holders) {
    std::string text = "'" + device.alsa_name + "' (card " + std::to_string(device.card) + " '" +
                       device.card_id + "', '" + holders.node + "') is in use";
    const std::string unseen = std::to_string(holders.unseen) +
                               (holders.unseen == 1 ? " process" : " processes") +
                               " could not be looked at (" + holders.unseen_problem + ")";
    if (holders.holders.empty()) {
        if (holders.unseen > 0)
            return text + ", and by no process rtprov can see: " + unseen +
                   "; run rtprov as root to see who holds it";
        return text + ", but no process in /proc has it open (a process of another PID "
                      "namespace, such as a container's, may): stop what plays to it";
    }
    std::vector<std::string> who, commands, services;
    for (const PcmHolder& h : holders.holders) {
        who.push_back(holder_text(h));
        const std::string command = "'" + core::shell_command(free_command(h)) + "'";
        if (std::find(commands.begin(), commands.end(), command) == commands.end())
            commands.push_back(command);
        if (in_service(h) &&
            std::find(services.begin(), services.end(), "'" + h.unit + "'") == services.end())
            services.push_back("'" + h.unit + "'");
    }
    text += " by " + core::join(who, " and ") + ": run " + core::join(commands, " and ") +
            " to free it";
    if (!services.empty())
        text += ", or pass --stop-player to stop " + core::join(services, " and ") +
                " for the run and start " + (services.size() == 1 ? "it" : "them") +
                " again afterwards";
    if (holders.unseen > 0)
        text += "; " + unseen + ", and may hold it too";
    return text;
}

std::string to_string(SoundServer server) {
    switch (server) {
    case SoundServer::pipewire:
        return "PipeWire";
    case SoundServer::jack:
        return "JACK";
    case SoundServer::pulseaudio:
        return "PulseAudio";
    }
    return "?";
}

std::string server_pcm(SoundServer server) {
    switch (server) {
    case SoundServer::pipewire:
        return "pipewire";
    case SoundServer::jack:
        return "jack";
    case SoundServer::pulseaudio:
        return "pulse";
    }
    return "?";
}

std::optional<ServerHold> sound_server_of(const std::vector<PcmHolder>& holders) {
    for (const PcmHolder& h : holders) {
        if (h.comm == "pipewire" || h.comm == "pipewire-pulse" || h.comm == "wireplumber")
            return ServerHold{SoundServer::pipewire, h};
        if (h.comm == "jackd" || h.comm == "jackdbus")
            return ServerHold{SoundServer::jack, h};
        if (h.comm == "pulseaudio")
            return ServerHold{SoundServer::pulseaudio, h};
    }
    return std::nullopt;
}

std::vector<std::string> alsa_plugin_dirs() {
    // Debian's multiarch tuple of the architecture rtprov was built for (and so of the
    // alsa-lib it loads): https://wiki.debian.org/Multiarch/Tuples
#if defined(__x86_64__)
    const char* tuple = "x86_64-linux-gnu";
#elif defined(__aarch64__)
    const char* tuple = "aarch64-linux-gnu";
#elif defined(__arm__) && defined(__ARM_PCS_VFP)
    const char* tuple = "arm-linux-gnueabihf";
#elif defined(__arm__)
    const char* tuple = "arm-linux-gnueabi";
#elif defined(__i386__)
    const char* tuple = "i386-linux-gnu";
#elif defined(__riscv) && __riscv_xlen == 64
    const char* tuple = "riscv64-linux-gnu";
#elif defined(__powerpc64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    const char* tuple = "powerpc64le-linux-gnu";
#elif defined(__s390x__)
    const char* tuple = "s390x-linux-gnu";
#else
    const char* tuple = nullptr;
#endif
    std::vector<std::string> dirs;
    if (tuple)
        dirs.push_back("/usr/lib/" + std::string(tuple) + "/alsa-lib");
    dirs.push_back("/usr/lib/alsa-lib");
    dirs.push_back("/usr/lib64/alsa-lib");
    return dirs;
}

PluginCheck plugin_available(const SysRoot& root, const std::string& pcm) {
    PluginCheck out;
    const std::string file = "libasound_module_pcm_" + pcm + ".so";
    const std::vector<std::string> dirs = alsa_plugin_dirs();
    for (const std::string& dir : dirs)
        if (root.exists(dir + "/" + file)) {
            out.module = dir + "/" + file;
            break;
        }
    // the folders alsa.conf's @hooks load (alsa-lib's src/conf/alsa.conf)
    auto config_in = [&](const std::string& dir) -> std::string {
        for (const std::string& name : root.names(dir).value.value_or(std::vector<std::string>{}))
            if (name.ends_with(".conf") && name.find(pcm) != std::string::npos &&
                root.exists(dir + "/" + name))
                return dir + "/" + name;
        return "";
    };
    for (const char* dir : {"/etc/alsa/conf.d", "/usr/etc/alsa/conf.d", "/var/lib/alsa/conf.d"})
        if (out.config = config_in(dir); !out.config.empty())
            break;
    const std::string package = pcm == "pipewire" ? "pipewire-alsa" : "libasound2-plugins";
    if (out.module.empty()) {
        out.problem = "alsa-lib has no '" + pcm + "' plugin: '" + file + "' is in none of " +
                      core::quoted_list(dirs) + "; install " + package;
    } else if (out.config.empty()) {
        const std::string shipped = config_in("/usr/share/alsa/alsa.conf.d");
        out.problem =
            "alsa-lib has the '" + pcm + "' plugin ('" + out.module + "') but no PCM '" + pcm +
            "': " +
            (shipped.empty()
                 ? "no configuration in '/etc/alsa/conf.d' defines it; reinstall " + package
                 : "'" + shipped + "' defines it but is not linked into '/etc/alsa/conf.d', " +
                       "which alsa-lib reads; link it there");
    }
    out.available = out.problem.empty();
    return out;
}

} // namespace rtprov::system
