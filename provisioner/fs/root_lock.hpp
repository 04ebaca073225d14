// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/fs/root.hpp"

#include <optional>
#include <string>
#include <vector>

namespace rtprov::fs {

// The one writer of a root. apply, rollback and first boot hold it for their whole run,
// from before they read the state until after they wrote it last, so two runs never
// interleave (an apply racing a rollback lost the original cmdline.txt; two applies
// removed each other's temporary files).
//
// It is flock(2) on a file named after the root folder's device and inode in
// /run/rtprov/ (a folder only root may enter): nothing is written into the target;
// another spelling, symlink or bind mount of the same root is the same inode and so the
// same lock; no unprivileged user can take it (anyone may flock a folder they can read,
// '/' included); and the kernel drops it when the holder ends, however it ends (a
// SIGKILL leaves no stale lock behind). Where /run/rtprov cannot be made (a bare chroot
// without /run), the root folder itself is locked.
//
// The holder removes its lock file as it lets go, so /run/rtprov holds a file only
// while a run holds it (one per root ever used piled up there): it unlinks the path
// while it still holds the lock, and every taker checks, once the lock is its own, that
// the path still names the file it locked (else the file was removed by its holder, no
// one's lock any more, and it opens the new one). Lock files a killed run left are
// removed by the next taker the same way: their lock taken first.
class RootLock {
  public:
    static constexpr const char* k_lock_dir = "/run/rtprov";

    // Takes the lock at once, or throws rtprov::Error saying who holds it: "another
    // rtprov (pid 123) is working on '/mnt/img'; wait for it to finish, then run this
    // again". 'inherited_fd' is a descriptor of the same root folder passed by a parent
    // rtprov that holds the lock for it (first boot runs 'rtprov apply' as a child); it
    // is used only when it is that folder, and is never unlocked by this object.
    explicit RootLock(const Root& root, std::optional<int> inherited_fd = std::nullopt,
                      const std::string& lock_dir = k_lock_dir);
    RootLock(const RootLock&) = delete;
    RootLock& operator=(const RootLock&) = delete;
    // Lets go, having removed the lock file (only in the process that took it).
    ~RootLock();

    // The locked descriptor, for handing to a child rtprov.
    int fd() const { return m_own ? m_own.get() : m_inherited; }

  private:
    // Our own descriptor, the last of its open file: the lock goes with it. Empty when
    // the parent's lock is used.
    core::Fd m_own;
    int m_inherited = -1;
    std::string m_path; // the lock file m_own is, removed on letting go; "" for the folder
    pid_t m_pid = 0;    // the process that took it
};

// One line of /proc/locks (proc(5); fs/locks.c, lock_get_status):
// "1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF", a blocked waiter "1: -> FLOCK ...".
struct LockEntry {
    std::string kind;    // "FLOCK", "POSIX", "OFDLCK", "LEASE"...
    bool waiter = false; // "->": waits for the lock, does not hold it
    long pid = 0;        // -1 for an OFD lock, which belongs to an open file, not a process
    unsigned long long dev_major = 0, dev_minor = 0, inode = 0; // the locked file
};
// The entries of /proc/locks text 'locks'; lines that do not read as one are left out.
// Pure.
std::vector<LockEntry> lock_entries(const std::string& locks);

// The pid and command name of the process holding the flock of the file with device
// 'dev' and inode 'ino', from /proc/locks text 'locks' and a reader of /proc/PID/comm.
// Pure apart from 'comm_of'; nullopt when 'locks' does not list it.
struct LockHolder {
    int pid = 0;
    std::string comm; // "" when unknown
};
std::optional<LockHolder> lock_holder(const std::string& locks, unsigned long long dev_major,
                                      unsigned long long dev_minor, unsigned long long ino);

} // namespace rtprov::fs
