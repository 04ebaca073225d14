// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/system/sysroot.hpp"

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

// The running system's processes as /proc shows them (proc(5)), read through a SysRoot:
// who has a file open, holds a lock on it or has a file system mounted, and whose parent
// is whose. target::ImageSession asks them what keeps a disk image in use; tests give them
// a fixture tree. Each takes 'self', the pid left out (the asking process).
namespace rtprov::system {

// A file as the kernel knows it: its device and inode.
struct FileId {
    dev_t device = 0;
    ino_t inode = 0;
    friend bool operator==(const FileId&, const FileId&) = default;
};

// The file 'path' of the system leads to (stat(2): links followed, in a tree inside it;
// a process's /proc/PID/fd/N on the running system is the file it has open); nullopt
// when there is none.
std::optional<FileId> file_id(const SysRoot& sys, const std::string& path);

// "qemu-system-x86 (1234)": the process's name as it gave it (/proc/PID/comm, on one
// line: core::one_line), or "process (1234)" when it cannot be read.
std::string process_name(const SysRoot& sys, int pid);

// The processes other than 'self' that have 'file' open, by process_name; with 'writers'
// only those that have it open for writing (the flags in /proc/PID/fdinfo/FD).
std::vector<std::string> processes_with_open(const SysRoot& sys, const FileId& file, bool writers,
                                             int self);

// The processes other than 'self' that hold a lock on 'file', or wait for one
// (/proc/locks, fs::lock_entries): a virtual machine running from a disk image (qemu
// takes OFD locks on its disk), another tool.
// 'self's own flock is not counted; an OFD lock, which names no process, by the processes
// that have the file open; one /proc/locks names no one for as "a process (OFDLCK)".
std::vector<std::string> lock_holders(const SysRoot& sys, const FileId& file, int self);

// The processes other than 'self' whose mount namespace has a file system of one of
// 'devices' mounted (/proc/PID/mountinfo, one look per namespace: /proc/PID/ns/mnt).
std::vector<std::string> processes_mounting(const SysRoot& sys, const std::vector<dev_t>& devices,
                                            int self);

// The living descendants of 'self' (its children, theirs, and the orphans it adopted as
// their subreaper), from each process's parent in /proc/PID/stat; zombies left out.
std::vector<int> descendants(const SysRoot& sys, int self);

// Whether the running kernel can mount file system type 'fstype' (/proc/filesystems).
bool kernel_mounts(const SysRoot& sys, const std::string& fstype);

} // namespace rtprov::system
