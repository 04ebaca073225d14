// SPDX-License-Identifier: Apache-2.0
// Fuzz target: the backup archive, backup.tar (target::read_backup_archive). A refusal
// (rtprov::Error) is fine; an archive that reads must come back from
// write_backup_archive() with the same files (bytes, mode, owner, mtime, links).
#include "provisioner/core/error.hpp"
#include "provisioner/target/backup_archive.hpp"

#include <cstddef>
#include <cstdint>
#include <string>

namespace {

bool same(const rtprov::target::Backups& a, const rtprov::target::Backups& b) {
    if (a.size() != b.size())
        return false;
    for (auto i = a.begin(), j = b.begin(); i != a.end(); ++i, ++j) {
        const rtprov::core::FileState& x = i->second;
        const rtprov::core::FileState& y = j->second;
        if (i->first != j->first || x.content != y.content || x.symlink != y.symlink ||
            x.uid != y.uid || x.gid != y.gid || x.mtime != y.mtime ||
            (!x.symlink && x.mode != y.mode))
            return false;
    }
    return true;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string bytes(reinterpret_cast<const char*>(data), size);
    rtprov::target::Backups backups;
    try {
        backups = rtprov::target::read_backup_archive(bytes, "backup.tar");
    } catch (const rtprov::Error&) {
        return 0;
    }
    std::string written;
    try {
        written = rtprov::target::write_backup_archive(backups);
    } catch (const rtprov::Error&) {
        return 0; // what a hostile archive holds need not be writable
    }
    try {
        if (!same(rtprov::target::read_backup_archive(written, "backup.tar"), backups))
            __builtin_trap();
    } catch (const rtprov::Error&) {
        __builtin_trap(); // write_backup_archive() made an archive it cannot read
    }
    return 0;
}
