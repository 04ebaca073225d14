#include "provisioner/target/mounts.hpp"

#include <libmount/libmount.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <memory>

namespace rtprov::target {

namespace {

using Table = std::unique_ptr<libmnt_table, void (*)(libmnt_table*)>;

Table load(const char* path) {
    return Table(mnt_new_table_from_file(path), mnt_unref_table);
}

} // namespace

std::optional<std::string> fstab_source(const std::string& fstab, const std::string& mount_point) {
    if (fstab.empty())
        return std::nullopt;
    Table table(mnt_new_table(), mnt_unref_table);
    std::unique_ptr<FILE, int (*)(FILE*)> stream(
        fmemopen(const_cast<char*>(fstab.data()), fstab.size(), "r"), std::fclose);
    if (!table || !stream || mnt_table_parse_stream(table.get(), stream.get(), "fstab") != 0)
        return std::nullopt;
    libmnt_fs* fs = mnt_table_find_target(table.get(), mount_point.c_str(), MNT_ITER_BACKWARD);
    if (!fs || !mnt_fs_get_source(fs))
        return std::nullopt;
    return std::string(mnt_fs_get_source(fs));
}

bool is_mount_point(const std::string& host_path) {
    char resolved[PATH_MAX];
    if (!realpath(host_path.c_str(), resolved))
        return false;
    Table table = load("/proc/self/mountinfo");
    return table && mnt_table_find_target(table.get(), resolved, MNT_ITER_BACKWARD) != nullptr;
}

} // namespace rtprov::target
