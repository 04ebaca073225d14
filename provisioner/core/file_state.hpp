// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace rtprov::core {

// A regular file as rtprov sees it: bytes, permission bits and owner; or a symbolic
// link (as 'systemctl enable' makes them), whose 'content' is the link's target.
struct FileState {
    std::string content;
    unsigned mode = 0644; // permission bits (07777); not used for links
    unsigned uid = 0;
    unsigned gid = 0;
    // seconds since 1970 (0 is a time too); restored on rollback, not compared. None: a
    // file written gets SOURCE_DATE_EPOCH's time or the clock's.
    std::optional<std::int64_t> mtime = std::nullopt;
    bool symlink = false;

    // Same bytes, mode and owner; for links, the same target.
    bool same_as(const FileState& other) const {
        if (symlink || other.symlink)
            return symlink == other.symlink && content == other.content;
        return content == other.content && mode == other.mode && uid == other.uid &&
               gid == other.gid;
    }
};

// A link to 'target'.
inline FileState symlink_to(std::string target) {
    FileState state;
    state.content = std::move(target);
    state.symlink = true;
    return state;
}

} // namespace rtprov::core
