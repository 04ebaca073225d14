// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/core/file_state.hpp"

#include <map>
#include <string>

namespace rtprov::target {

// The original files rtprov replaced, keyed by their in-root path: bytes, mode, owner
// and mtime (a symlink's own time too), stored as a POSIX tar archive (libarchive) in
// <root>/var/lib/rtprov/.
using Backups = std::map<std::string, core::FileState>;

// The archive's bytes for 'backups'. Deterministic: the same input gives the same bytes.
std::string write_backup_archive(const Backups& backups);

// Reads an archive made by write_backup_archive(). A symlink's time of 0 reads as none
// (archives from before links kept their time hold 0) unless the entry carries the mark
// write_backup_archive() gives a link whose own time really is 0. 'label' names it in errors.
// Throws rtprov::Error when it is damaged or holds anything but regular files and symlinks.
Backups read_backup_archive(const std::string& bytes, const std::string& label);

// Loads libarchive now (it is loaded at first use, core::SharedLibrary), so that apply
// and rollback, which may need it after their first change, stop before it when the
// library is missing. Throws rtprov::Error saying what to install.
void require_backup_library();

} // namespace rtprov::target
