// SPDX-License-Identifier: Apache-2.0
#include "provisioner/target/backup_archive.hpp"

#include "provisioner/core/error.hpp"
#include "provisioner/core/shared_library.hpp"

#include <archive.h>
#include <archive_entry.h>

#include <cstdint>
#include <memory>
#include <string_view>

namespace rtprov::target {

namespace {

// The libarchive functions the backup uses, loaded at the first backup read or written
// (core::SharedLibrary says why it is not linked).
#define RTPROV_LIBARCHIVE_FUNCTIONS(X)                                                             \
    X(archive_entry_filetype)                                                                      \
    X(archive_entry_free)                                                                          \
    X(archive_entry_gid)                                                                           \
    X(archive_entry_mtime)                                                                         \
    X(archive_entry_new)                                                                           \
    X(archive_entry_pathname)                                                                      \
    X(archive_entry_perm)                                                                          \
    X(archive_entry_set_filetype)                                                                  \
    X(archive_entry_set_gid)                                                                       \
    X(archive_entry_set_mtime)                                                                     \
    X(archive_entry_set_pathname)                                                                  \
    X(archive_entry_set_perm)                                                                      \
    X(archive_entry_set_size)                                                                      \
    X(archive_entry_set_symlink)                                                                   \
    X(archive_entry_set_uid)                                                                       \
    X(archive_entry_size)                                                                          \
    X(archive_entry_symlink)                                                                       \
    X(archive_entry_uid)                                                                           \
    X(archive_entry_xattr_add_entry)                                                               \
    X(archive_entry_xattr_next)                                                                    \
    X(archive_entry_xattr_reset)                                                                   \
    X(archive_error_string)                                                                        \
    X(archive_read_data)                                                                           \
    X(archive_read_free)                                                                           \
    X(archive_read_new)                                                                            \
    X(archive_read_next_header)                                                                    \
    X(archive_read_open_memory)                                                                    \
    X(archive_read_support_format_tar)                                                             \
    X(archive_write_close)                                                                         \
    X(archive_write_data)                                                                          \
    X(archive_write_free)                                                                          \
    X(archive_write_header)                                                                        \
    X(archive_write_new)                                                                           \
    X(archive_write_open)                                                                          \
    X(archive_write_set_bytes_per_block)                                                           \
    X(archive_write_set_format_pax_restricted)

RTPROV_DL_STRUCT(LibArchive, RTPROV_LIBARCHIVE_FUNCTIONS)
RTPROV_DL_LOADER(LibArchive, libarchive, "libarchive.so.13", RTPROV_PACKAGE_LIBARCHIVE,
                 RTPROV_LIBARCHIVE_FUNCTIONS)

using ArchivePtr = std::unique_ptr<archive, int (*)(archive*)>;
using EntryPtr = std::unique_ptr<archive_entry, void (*)(archive_entry*)>;

// A symlink's own time of 0 is written with this pax attribute (LIBARCHIVE.xattr.<name>)
// beside it: archives from before links kept their time hold 0 there for "no time", so a
// bare 0 reads as none and only a marked one as 1970. Other entries carry no attribute,
// and their bytes are as before.
constexpr const char* k_link_time_zero = "rtprov.link-mtime-zero";

bool marked_link_time_zero(const LibArchive& la, archive_entry* entry) {
    const char* name = nullptr;
    const void* value = nullptr;
    size_t size = 0;
    la.archive_entry_xattr_reset(entry);
    while (la.archive_entry_xattr_next(entry, &name, &value, &size) == ARCHIVE_OK)
        if (name && std::string_view(name) == k_link_time_zero)
            return true;
    return false;
}

la_ssize_t append(archive*, void* client, const void* buffer, size_t length) {
    static_cast<std::string*>(client)->append(static_cast<const char*>(buffer), length);
    return la_ssize_t(length);
}

} // namespace

void require_backup_library() {
    libarchive();
}

std::string write_backup_archive(const Backups& backups) {
    const LibArchive& la = libarchive();
    std::string bytes;
    ArchivePtr writer(la.archive_write_new(), la.archive_write_free);
    la.archive_write_set_format_pax_restricted(writer.get());
    la.archive_write_set_bytes_per_block(writer.get(), 0); // no padding to 10 KiB blocks
    if (la.archive_write_open(writer.get(), &bytes, nullptr, append, nullptr) != ARCHIVE_OK)
        throw Error(std::string("cannot write backup archive: ") +
                    la.archive_error_string(writer.get()));
    for (const auto& [path, state] : backups) {
        EntryPtr entry(la.archive_entry_new(), la.archive_entry_free);
        la.archive_entry_set_pathname(entry.get(), path.substr(1).c_str()); // relative in tar
        if (state.symlink) {
            la.archive_entry_set_filetype(entry.get(), AE_IFLNK);
            la.archive_entry_set_symlink(entry.get(), state.content.c_str());
            la.archive_entry_set_perm(entry.get(), 0777);
            la.archive_entry_set_uid(entry.get(), state.uid);
            la.archive_entry_set_gid(entry.get(), state.gid);
            la.archive_entry_set_mtime(entry.get(), state.mtime.value_or(0), 0);
            if (state.mtime == 0)
                la.archive_entry_xattr_add_entry(entry.get(), k_link_time_zero, "1", 1);
            la.archive_entry_set_size(entry.get(), 0);
            if (la.archive_write_header(writer.get(), entry.get()) != ARCHIVE_OK)
                throw Error(std::string("cannot write backup archive: ") +
                            la.archive_error_string(writer.get()));
            continue;
        }
        la.archive_entry_set_filetype(entry.get(), AE_IFREG);
        la.archive_entry_set_perm(entry.get(), state.mode);
        la.archive_entry_set_uid(entry.get(), state.uid);
        la.archive_entry_set_gid(entry.get(), state.gid);
        la.archive_entry_set_mtime(entry.get(), state.mtime.value_or(0), 0);
        la.archive_entry_set_size(entry.get(), la_int64_t(state.content.size()));
        if (la.archive_write_header(writer.get(), entry.get()) != ARCHIVE_OK ||
            la.archive_write_data(writer.get(), state.content.data(), state.content.size()) !=
                la_ssize_t(state.content.size()))
            throw Error(std::string("cannot write backup archive: ") +
                        la.archive_error_string(writer.get()));
    }
    if (la.archive_write_close(writer.get()) != ARCHIVE_OK)
        throw Error(std::string("cannot write backup archive: ") +
                    la.archive_error_string(writer.get()));
    return bytes;
}

Backups read_backup_archive(const std::string& bytes, const std::string& label) {
    const LibArchive& la = libarchive();
    Backups backups;
    ArchivePtr reader(la.archive_read_new(), la.archive_read_free);
    la.archive_read_support_format_tar(reader.get());
    auto damaged = [&](const std::string& why) {
        return Error(label + ": backup archive is damaged (" + why +
                     "); rollback cannot restore originals from it");
    };
    if (la.archive_read_open_memory(reader.get(), bytes.data(), bytes.size()) != ARCHIVE_OK)
        throw damaged(la.archive_error_string(reader.get()));
    archive_entry* entry = nullptr;
    while (true) {
        int result = la.archive_read_next_header(reader.get(), &entry);
        if (result == ARCHIVE_EOF)
            break;
        if (result != ARCHIVE_OK)
            throw damaged(la.archive_error_string(reader.get()));
        // Entries are absolute in-root paths rtprov wrote: 'etc/x', never '', '..' or '//'.
        const char* name = la.archive_entry_pathname(entry);
        std::string path = "/" + std::string(name ? name : "");
        if (path == "/" || path.back() == '/' || path.find("//") != std::string::npos ||
            path.find("/../") != std::string::npos || path.ends_with("/..") ||
            path.find("/./") != std::string::npos || path.ends_with("/.") || backups.count(path))
            throw damaged("entry '" + path.substr(1) + "' is not a path rtprov backs up");
        if (la.archive_entry_filetype(entry) == AE_IFLNK) {
            const char* target = la.archive_entry_symlink(entry);
            if (!target || !*target)
                throw damaged("symlink entry '" + path.substr(1) + "' has no target");
            core::FileState link = core::symlink_to(target);
            link.uid = unsigned(la.archive_entry_uid(entry));
            link.gid = unsigned(la.archive_entry_gid(entry));
            // archives written before links kept their time hold 0 for it: such a link
            // is not given 1970 back, but the time it is written at (k_link_time_zero)
            if (const auto mtime = la.archive_entry_mtime(entry);
                mtime != 0 || marked_link_time_zero(la, entry))
                link.mtime = mtime;
            backups[path] = std::move(link);
            continue;
        }
        if (la.archive_entry_filetype(entry) != AE_IFREG)
            throw damaged("entry '" + path.substr(1) + "' is neither a regular file nor a symlink");
        core::FileState state;
        state.mode = la.archive_entry_perm(entry) & 07777; // permission bits, as written
        state.uid = unsigned(la.archive_entry_uid(entry));
        state.gid = unsigned(la.archive_entry_gid(entry));
        state.mtime = la.archive_entry_mtime(entry);
        // The header's size is the archive's word, not a fact: an entry cannot hold more
        // bytes than the whole archive (a forged header declaring 8 GB would otherwise
        // allocate them).
        la_int64_t size = la.archive_entry_size(entry);
        if (size < 0 || std::uint64_t(size) > bytes.size())
            throw damaged("entry '" + path.substr(1) + "' declares " + std::to_string(size) +
                          " bytes in an archive of " + std::to_string(bytes.size()));
        state.content.resize(std::size_t(size));
        if (la.archive_read_data(reader.get(), state.content.data(), state.content.size()) != size)
            throw damaged("short entry '" + path.substr(1) + "'");
        backups[path] = std::move(state);
    }
    return backups;
}

} // namespace rtprov::target
