#pragma once

#include <cstdint>
#include <string>

namespace rtprov::core {

// A regular file as rtprov sees it: bytes, permission bits and owner; or a symbolic
// link (as 'systemctl enable' makes them), whose 'content' is the link's target.
struct FileState {
    std::string content;
    unsigned mode = 0644; // permission bits (07777); not used for links
    unsigned uid = 0;
    unsigned gid = 0;
    std::int64_t mtime = 0; // seconds; restored on rollback, not compared
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
