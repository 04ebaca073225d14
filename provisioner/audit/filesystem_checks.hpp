// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/audit/check.hpp"
#include "provisioner/audit/system_view.hpp"

#include <cstddef>
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

// How many users' ~/Music the audit looks at; the others are counted, and the check says
// it did not look at them.
inline constexpr std::size_t k_most_homes = 256;

// The folders music_folders() found, and how many users' ~/Music it left out.
struct MusicFolders {
    std::vector<MusicFolder> folders;
    std::size_t homes_left_out = 0;
    // What was not read: MPD's music_directory when /etc/mpd.conf names none but includes
    // another file, which may; "" otherwise.
    std::string unread;
};

// MPD's music_directory when /etc/mpd.conf names one ('~' or '~/...' is the home of MPD's
// 'user', '~name/...' the home of 'name', as MPD's own path parsing reads them; a '~'
// whose home is not known stays as it is); else the common places: ~/Music
// (xdg-user-dirs' default) of every regular user and member of group audio (at most
// k_most_homes of them), /srv (data a service serves, FHS), /media (removable media) and
// /mnt (mounted by hand).
MusicFolders music_folders(const SystemView& view);

// 'audio-filesystems': the mounts that hold the music folders and those mounted below
// them. Warns for a FUSE file system (fuseblk: ntfs-3g and exfat-fuse; fuse.*: sshfs and
// the like), whose every read passes through a user-space daemon, and for a network file
// system (NFS, SMB/CIFS, 9p, Ceph, ...) or MPD storage URI, whose reads wait on the
// network; for MPD's music_directory that does not exist. A folder is judged where its
// symlinks lead (read_system_view resolves it: a music_directory linked to a NAS mount is
// on the NAS). A folder whose file system cannot be told (a '~' with no known home, no
// mount of /proc/mounts above it, users left out) is a warning, never ok. A 'sync' mount
// is not flagged: it makes writes synchronous, and a player only reads.
Check check_audio_filesystems(const SystemView& view);

} // namespace rtprov::audit
