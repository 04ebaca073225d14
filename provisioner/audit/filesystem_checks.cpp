// SPDX-License-Identifier: Apache-2.0
#include "provisioner/audit/filesystem_checks.hpp"

#include "provisioner/audit/accounts.hpp"
#include "provisioner/core/error.hpp"
#include "provisioner/core/text.hpp"

#include <algorithm>
#include <set>

namespace rtprov::audit {

namespace {

constexpr const char* k_mpd_conf = "/etc/mpd.conf";

// 'path' is 'point' or below it.
bool under(const std::string& path, const std::string& point) {
    return point == "/" || path == point || path.starts_with(point + "/");
}

// What about a file system slows a player's reads; "" when nothing does.
std::string slow_reads(const std::string& type) {
    if (type == "fuse" || type == "fuseblk" || type.starts_with("fuse."))
        return "FUSE: every read passes through a user-space daemon" +
               std::string(type == "fuseblk" ? " (ntfs-3g or exfat-fuse)" : "");
    // Network file systems: their reads wait on a server.
    static const std::set<std::string> k_network = {
        "nfs", "nfs4", "cifs", "smb3", "smbfs", "9p", "ceph", "glusterfs", "afs", "ncpfs", "davfs"};
    if (k_network.count(type))
        return "a network file system: every read waits on the server and the network";
    return "";
}

// MPD's storage plugins read a music_directory URI (MPD's user manual, "Storage
// plugins"): nfs://, smb:// and http(s):// (WebDAV) go over the network.
std::string slow_uri(const std::string& uri) {
    for (const char* scheme : {"nfs://", "smb://", "http://", "https://"})
        if (uri.starts_with(scheme))
            return "MPD reads it over the network (a storage plugin)";
    return "";
}

std::string mount_text(const Mount& m) {
    return core::one_line(m.type) + " from " + quoted(m.source) + " on " + quoted(m.point);
}

} // namespace

std::optional<std::string> mpd_setting(const std::string& conf, const std::string& name) {
    std::optional<std::string> found;
    int depth = 0;
    for (const std::string& raw : core::split(conf, '\n')) {
        std::string line(core::trim(raw));
        if (line.empty() || line.front() == '#')
            continue;
        if (line == "}") {
            depth = std::max(0, depth - 1);
            continue;
        }
        if (line.back() == '{') {
            ++depth;
            continue;
        }
        if (depth > 0 || !line.starts_with(name) || line.size() == name.size() ||
            (line[name.size()] != ' ' && line[name.size()] != '\t'))
            continue;
        std::string rest(core::trim(std::string_view(line).substr(name.size())));
        if (rest.starts_with('"')) {
            std::string value;
            bool closed = false;
            for (std::size_t i = 1; i < rest.size(); ++i) {
                if (rest[i] == '\\' && i + 1 < rest.size()) {
                    value += rest[++i];
                } else if (rest[i] == '"') {
                    closed = true;
                    break;
                } else {
                    value += rest[i];
                }
            }
            if (closed)
                found = value; // a later setting of a name MPD reads once replaces it
        } else if (!rest.empty()) {
            found = core::words(rest).front();
        }
    }
    return found;
}

MusicFolders music_folders(const SystemView& view) {
    const std::vector<PasswdEntry> users =
        view.passwd ? parse_passwd(*view.passwd) : std::vector<PasswdEntry>();
    auto home_of = [&](const std::string& name) -> std::optional<std::string> {
        for (const PasswdEntry& u : users)
            if (u.name == name)
                return u.home;
        return std::nullopt;
    };
    if (view.mpd_conf) {
        if (std::optional<std::string> dir = mpd_setting(*view.mpd_conf, "music_directory")) {
            std::string path = *dir;
            // MPD's path parsing (src/config/Path.cxx): '~' and '~/...' are the home of the
            // user MPD runs as (its 'user'), '~name/...' the home of 'name'
            if (path.starts_with('~')) {
                const std::size_t slash = path.find('/');
                const std::string name =
                    path.substr(1, slash == std::string::npos ? std::string::npos : slash - 1);
                std::optional<std::string> home;
                if (!name.empty())
                    home = home_of(name);
                else if (std::optional<std::string> user = mpd_setting(*view.mpd_conf, "user"))
                    home = home_of(*user);
                if (home && home->starts_with('/'))
                    path = *home + (slash == std::string::npos ? "" : path.substr(slash));
            }
            return {{{path, "MPD's music_directory in " + std::string(k_mpd_conf)}}, 0, {}};
        }
    }
    MusicFolders out;
    // MPD reads the files 'include' and 'include_optional' name (MPD 0.21 and later): one
    // may set the music_directory, and the audit reads /etc/mpd.conf only
    for (const char* include : {"include", "include_optional"})
        if (std::optional<std::string> file =
                view.mpd_conf ? mpd_setting(*view.mpd_conf, include) : std::nullopt;
            file && out.unread.empty())
            out.unread = "MPD's music_directory, which " + rtprov::quoted(*file) + " (" + include +
                         " in " + k_mpd_conf + ") may set: the audit reads " + k_mpd_conf + " only";
    const std::vector<std::string> audio = audio_group_logins(
        view.groups ? parse_group(*view.groups) : std::vector<GroupEntry>(), users);
    const std::set<std::string> in_audio(audio.begin(), audio.end());
    std::set<std::string> homes;
    for (const PasswdEntry& u : users)
        if ((is_regular_user(u) || in_audio.count(u.name)) && u.home.starts_with('/') &&
            u.home != "/" && homes.insert(u.home).second) {
            if (homes.size() > k_most_homes)
                ++out.homes_left_out;
            else
                out.folders.push_back({u.home + "/Music", "~/Music of " + quoted(u.name)});
        }
    out.folders.push_back({"/srv", "FHS: data this system serves"});
    out.folders.push_back({"/media", "FHS: removable media"});
    out.folders.push_back({"/mnt", "FHS: mounted by hand"});
    return out;
}

Check check_audio_filesystems(const SystemView& view) {
    Check c = make_check("audio-filesystems", "file systems the music is read from");
    if (!view.mpd_conf && !view.mpd_conf.absent)
        return cannot_read(c, view.mpd_conf.problem + ", so MPD's music_directory is not known");
    if (!view.mounts)
        return cannot_read(c, view.mounts.problem);
    const MusicFolders found = music_folders(view);
    std::vector<std::string> slow, seen, missing, unseen;
    bool mpd_missing = false, network = false, fuse = false;
    std::set<std::string> slow_points; // mount points already named as slow
    auto judge = [&](const Mount& m, const std::string& for_what) {
        const std::string why = slow_reads(m.type);
        if (why.empty()) {
            seen.push_back(for_what + " on " + mount_text(m));
            return;
        }
        if (!slow_points.insert(m.point).second)
            return;
        (why.starts_with("FUSE") ? fuse : network) = true;
        slow.push_back(for_what + " on " + mount_text(m) + ", " + why);
    };
    for (const MusicFolder& folder : found.folders) {
        const std::string label = quoted(folder.path) + " (" + folder.source + ")";
        if (folder.path.starts_with('~')) {
            unseen.push_back(label + ": whose home is not in /etc/passwd");
            continue;
        }
        if (!folder.path.starts_with('/')) {
            if (std::string why = slow_uri(folder.path); !why.empty()) {
                network = true;
                slow.push_back(label + ": " + why);
            } else {
                seen.push_back(label + ": a storage URI");
            }
            continue;
        }
        const auto present = view.present_folders.find(folder.path);
        if (present == view.present_folders.end()) {
            missing.push_back(quoted(folder.path));
            mpd_missing = mpd_missing || folder.source.starts_with("MPD");
            continue;
        }
        // Where its symlinks lead: the mounts hold that place, not the link.
        const std::string& real = present->second;
        const std::string where =
            real == folder.path ? label : label + ", which is " + quoted(real) + ",";
        // The mount that holds it: the longest mount point above it, the last of equals
        // (mounted over the others).
        const Mount* holder = nullptr;
        for (const Mount& m : *view.mounts)
            if (under(real, m.point) && (!holder || m.point.size() >= holder->point.size()))
                holder = &m;
        if (holder)
            judge(*holder, where);
        else
            unseen.push_back(where + ": no mount of /proc/mounts holds it");
        for (const Mount& m : *view.mounts)
            if (m.point != real && under(m.point, real))
                judge(m, quoted(m.point) + " below " + quoted(real));
    }
    if (!found.unread.empty())
        unseen.push_back(found.unread);
    if (found.homes_left_out > 0)
        unseen.push_back("the ~/Music of " + std::to_string(found.homes_left_out) +
                         " more users (the audit looks at " + std::to_string(k_most_homes) + ")");
    const std::string looked = missing.empty() ? "" : "; not there: " + listing(missing, 8);
    if (mpd_missing) {
        c.status = Status::warn;
        c.reason = "MPD's music_directory " + missing.front() + " (in " + k_mpd_conf +
                   ") does not exist, so MPD finds no music there";
        c.fix = "create it, or set music_directory in " + std::string(k_mpd_conf) +
                " to the folder the music is in, and restart MPD";
        return c;
    }
    const std::string cannot_tell = "cannot tell the file system of " + listing(unseen, 4);
    const std::string not_seen = unseen.empty() ? "" : "; " + cannot_tell;
    if (slow.empty() && !unseen.empty()) {
        // what could not be seen is not ok
        c.status = Status::warn;
        c.reason = (seen.empty() ? "" : "fine: " + listing(seen, 4) + "; ") + cannot_tell + looked;
        c.fix = "check that /etc/mpd.conf, /etc/passwd and /proc/mounts are this system's "
                "(with --sysroot: copied whole), and rerun 'rtprov audit'";
        return c;
    }
    if (slow.empty()) {
        c.reason = seen.empty() ? "no music folder was found" + looked
                                : "music is read through the kernel's own file systems: " +
                                      listing(seen, 8) + looked;
        return c;
    }
    c.status = Status::warn;
    c.reason = listing(slow, 6) +
               "; a read that stalls there leaves the player's buffer to "
               "cover it" +
               (seen.empty() ? "" : "; fine: " + listing(seen, 4)) + not_seen;
    std::vector<std::string> fixes;
    if (fuse)
        fixes.push_back("keep the music on a file system the kernel reads itself: copy it to "
                        "ext4, or mount NTFS with the kernel's ntfs3 driver (mount -t ntfs3) and "
                        "exFAT with its exfat driver (mount -t exfat) instead of FUSE");
    if (network)
        fixes.push_back("copy the music to a local disk; where it must stay on the network, "
                        "give the player a larger buffer (MPD: audio_buffer_size, input_cache in "
                        "mpd.conf)");
    c.fix = core::join(fixes, "; ");
    return c;
}

} // namespace rtprov::audit
