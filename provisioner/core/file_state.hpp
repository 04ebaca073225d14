#pragma once

#include <cstdint>
#include <string>

namespace rtprov::core {

// A regular file as rtprov sees it: bytes, permission bits and owner.
struct FileState {
    std::string content;
    unsigned mode = 0644; // permission bits (07777)
    unsigned uid = 0;
    unsigned gid = 0;
    std::int64_t mtime = 0; // seconds; restored on rollback, not compared

    // Same bytes, mode and owner.
    bool same_as(const FileState& other) const {
        return content == other.content && mode == other.mode && uid == other.uid &&
               gid == other.gid;
    }
};

} // namespace rtprov::core
