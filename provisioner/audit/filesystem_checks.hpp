// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/audit/check.hpp"
#include "provisioner/audit/system_view.hpp"

#include <optional>
#include <string>
#include <vector>

// The file systems the music is read from (audio-filesystems). Pure functions of the
// gathered view; read_system_view() records which of the folders exist.
namespace rtprov::audit {

// A top-level setting of MPD's config ('music_directory', 'user'; mpd.conf(5): 'name
// "value"' lines, '#' comments, blocks in braces skipped), its quotes and backslash
// escapes undone; nullopt when it is not set.
std::optional<std::string> mpd_setting(const std::string& conf, const std::string& name);

// A folder music is read from, and why it is looked at.
struct MusicFolder {
    std::string path;   // '/var/lib/mpd/music', or MPD's storage URI ('nfs://nas/music')
    std::string source; // "MPD's music_directory in /etc/mpd.conf", "~/Music of 'alice'"
};

// MPD's music_directory when /etc/mpd.conf names one ('~' is the home of MPD's 'user');
// else the common places: ~/Music (xdg-user-dirs' default) of every regular user and
// member of group audio, /srv (data a service serves, FHS), /media (removable media) and
// /mnt (mounted by hand).
std::vector<MusicFolder> music_folders(const SystemView& view);

// 'audio-filesystems': the mounts that hold the music folders and those mounted below
// them. Warns for a FUSE file system (fuseblk: ntfs-3g and exfat-fuse; fuse.*: sshfs and
// the like), whose every read passes through a user-space daemon, and for a network file
// system (NFS, SMB/CIFS, 9p, Ceph, ...) or MPD storage URI, whose reads wait on the
// network; for MPD's music_directory that does not exist. A 'sync' mount is not flagged:
// it makes writes synchronous, and a player only reads.
Check check_audio_filesystems(const SystemView& view);

} // namespace rtprov::audit
