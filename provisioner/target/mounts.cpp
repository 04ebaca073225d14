// SPDX-License-Identifier: Apache-2.0
#include "provisioner/target/mounts.hpp"

#include "provisioner/core/shared_library.hpp"

#include <libmount/libmount.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <memory>

namespace rtprov::target {

namespace {

// The libmount functions used here, loaded at the first mount table read
// (core::SharedLibrary says why it is not linked).
#define RTPROV_LIBMOUNT_FUNCTIONS(X)                                                               \
    X(mnt_free_iter)                                                                               \
    X(mnt_fs_get_fstype)                                                                           \
    X(mnt_fs_get_source)                                                                           \
    X(mnt_fs_get_target)                                                                           \
    X(mnt_new_iter)                                                                                \
    X(mnt_new_table)                                                                               \
    X(mnt_new_table_from_file)                                                                     \
    X(mnt_table_find_mountpoint)                                                                   \
    X(mnt_table_find_target)                                                                       \
    X(mnt_table_next_fs)                                                                           \
    X(mnt_table_parse_stream)                                                                      \
    X(mnt_unref_table)

RTPROV_DL_STRUCT(LibMount, RTPROV_LIBMOUNT_FUNCTIONS)
RTPROV_DL_LOADER(LibMount, libmount, "libmount.so.1", RTPROV_PACKAGE_LIBMOUNT,
                 RTPROV_LIBMOUNT_FUNCTIONS)

using Table = std::unique_ptr<libmnt_table, void (*)(libmnt_table*)>;

Table load(const char* path) {
    const LibMount& lm = libmount();
    return Table(lm.mnt_new_table_from_file(path), lm.mnt_unref_table);
}

// fstab text as a table; null when empty or it does not parse.
Table parse_fstab(const std::string& fstab) {
    const LibMount& lm = libmount();
    if (fstab.empty())
        return Table(nullptr, lm.mnt_unref_table);
    Table table(lm.mnt_new_table(), lm.mnt_unref_table);
    std::unique_ptr<FILE, int (*)(FILE*)> stream(
        fmemopen(const_cast<char*>(fstab.data()), fstab.size(), "r"), std::fclose);
    if (!table || !stream || lm.mnt_table_parse_stream(table.get(), stream.get(), "fstab") != 0)
        return Table(nullptr, lm.mnt_unref_table);
    return table;
}

} // namespace

std::optional<std::string> fstab_source(const std::string& fstab, const std::string& mount_point) {
    const LibMount& lm = libmount();
    Table table = parse_fstab(fstab);
    if (!table)
        return std::nullopt;
    libmnt_fs* fs = lm.mnt_table_find_target(table.get(), mount_point.c_str(), MNT_ITER_BACKWARD);
    if (!fs || !lm.mnt_fs_get_source(fs))
        return std::nullopt;
    return std::string(lm.mnt_fs_get_source(fs));
}

std::vector<FstabEntry> fstab_entries(const std::string& fstab) {
    const LibMount& lm = libmount();
    std::vector<FstabEntry> entries;
    Table table = parse_fstab(fstab);
    if (!table)
        return entries;
    std::unique_ptr<libmnt_iter, void (*)(libmnt_iter*)> it(lm.mnt_new_iter(MNT_ITER_FORWARD),
                                                            lm.mnt_free_iter);
    libmnt_fs* fs = nullptr;
    auto text = [](const char* s) { return std::string(s ? s : ""); };
    while (it && lm.mnt_table_next_fs(table.get(), it.get(), &fs) == 0)
        entries.push_back({text(lm.mnt_fs_get_source(fs)), text(lm.mnt_fs_get_target(fs)),
                           text(lm.mnt_fs_get_fstype(fs))});
    return entries;
}

bool is_mount_point(const std::string& host_path) {
    char resolved[PATH_MAX];
    if (!realpath(host_path.c_str(), resolved))
        return false;
    const LibMount& lm = libmount();
    Table table = load("/proc/self/mountinfo");
    return table && lm.mnt_table_find_target(table.get(), resolved, MNT_ITER_BACKWARD) != nullptr;
}

std::optional<core::MountFact> mount_containing(const std::string& host_path) {
    char resolved[PATH_MAX];
    if (!realpath(host_path.c_str(), resolved))
        return std::nullopt;
    const LibMount& lm = libmount();
    Table table = load("/proc/self/mountinfo");
    libmnt_fs* fs =
        table ? lm.mnt_table_find_mountpoint(table.get(), resolved, MNT_ITER_BACKWARD) : nullptr;
    if (!fs)
        return std::nullopt;
    const char* source = lm.mnt_fs_get_source(fs);
    const char* fstype = lm.mnt_fs_get_fstype(fs);
    return core::MountFact{source ? source : "", fstype ? fstype : ""};
}

} // namespace rtprov::target
