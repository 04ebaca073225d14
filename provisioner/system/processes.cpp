// SPDX-License-Identifier: Apache-2.0
#include "provisioner/system/processes.hpp"

#include "provisioner/core/text.hpp"
#include "provisioner/fs/root_lock.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <cstdio>
#include <limits>
#include <map>
#include <sstream>

namespace rtprov::system {

namespace {

std::string proc(int pid, const std::string& name) {
    return "/proc/" + std::to_string(pid) + "/" + name;
}

// The pids in /proc, ascending, but 'self'.
std::vector<int> other_pids(const SysRoot& sys, int self) {
    std::vector<int> pids = sys.numbered("/proc").value.value_or(std::vector<int>{});
    pids.erase(std::remove(pids.begin(), pids.end(), self), pids.end());
    return pids;
}

// Whether /proc/PID/fdinfo/FD says the descriptor is open for writing (its octal 'flags:').
bool open_for_writing(const SysRoot& sys, int pid, const std::string& fd) {
    std::istringstream info(sys.text(proc(pid, "fdinfo/" + fd)).value.value_or(""));
    std::string key;
    unsigned long flags = 0;
    while (info >> key && key != "flags:")
        info.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
    return (info >> std::oct >> flags) && (flags & O_ACCMODE) != O_RDONLY;
}

} // namespace

std::optional<FileId> file_id(const SysRoot& sys, const std::string& path) {
    const Fact<std::filesystem::path> host = sys.host(path);
    struct stat st {};
    if (!host || ::stat(host->c_str(), &st) != 0)
        return std::nullopt;
    return FileId{st.st_dev, st.st_ino};
}

std::string process_name(const SysRoot& sys, int pid) {
    // all of it: a name holds no NUL, but may hold a newline
    std::string name = sys.text(proc(pid, "comm")).value.value_or("");
    if (name.find('\0') != std::string::npos)
        name.resize(name.find('\0'));
    if (!name.empty() && name.back() == '\n')
        name.pop_back(); // the kernel's
    return (name.empty() ? "process" : core::one_line(name)) + " (" + std::to_string(pid) + ")";
}

std::vector<std::string> processes_with_open(const SysRoot& sys, const FileId& file, bool writers,
                                             int self) {
    std::vector<std::string> found;
    for (int pid : other_pids(sys, self)) {
        for (const std::string& fd :
             sys.names(proc(pid, "fd")).value.value_or(std::vector<std::string>{})) {
            if (file_id(sys, proc(pid, "fd/" + fd)) != file)
                continue;
            if (writers && !open_for_writing(sys, pid, fd))
                continue;
            found.push_back(process_name(sys, pid));
            break;
        }
    }
    return found;
}

std::vector<std::string> lock_holders(const SysRoot& sys, const FileId& file, int self) {
    std::vector<std::string> found;
    for (const fs::LockEntry& lock : fs::lock_entries(sys.text("/proc/locks").value.value_or(""))) {
        if (lock.dev_major != ::major(file.device) || lock.dev_minor != ::minor(file.device) ||
            lock.inode != file.inode)
            continue;
        if (lock.kind == "FLOCK" && lock.pid == self)
            continue;
        // an OFD lock has no pid (-1): the processes that have the file open
        const std::vector<std::string> who =
            lock.pid == -1 ? processes_with_open(sys, file, false, self)
                           : std::vector<std::string>{process_name(sys, int(lock.pid))};
        for (const std::string& name : who)
            if (std::find(found.begin(), found.end(), name) == found.end())
                found.push_back(name);
        if (found.empty())
            found.push_back("a process (" + lock.kind + ")");
    }
    return found;
}

std::vector<std::string> processes_mounting(const SysRoot& sys, const std::vector<dev_t>& devices,
                                            int self) {
    std::vector<std::string> found;
    std::map<std::pair<dev_t, ino_t>, bool> holds; // per mount namespace
    auto namespace_holds = [&](int pid, const FileId& ns) {
        const auto key = std::make_pair(ns.device, ns.inode);
        if (auto it = holds.find(key); it != holds.end())
            return it->second;
        bool yes = false;
        // "36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw" (proc(5))
        std::istringstream mountinfo(sys.text(proc(pid, "mountinfo")).value.value_or(""));
        std::string id, parent, numbers, rest;
        while (!yes && mountinfo >> id >> parent >> numbers && std::getline(mountinfo, rest)) {
            unsigned major = 0, minor = 0;
            if (std::sscanf(numbers.c_str(), "%u:%u", &major, &minor) == 2)
                for (dev_t device : devices)
                    yes = yes || (::major(device) == major && ::minor(device) == minor);
        }
        return holds[key] = yes;
    };
    for (int pid : other_pids(sys, self))
        if (const auto ns = file_id(sys, proc(pid, "ns/mnt")); ns && namespace_holds(pid, *ns))
            found.push_back(process_name(sys, pid));
    return found;
}

std::vector<int> descendants(const SysRoot& sys, int self) {
    std::map<int, int> parent_of;
    for (int pid : sys.numbered("/proc").value.value_or(std::vector<int>{})) {
        const std::string stat = sys.text(proc(pid, "stat")).value.value_or("");
        // "pid (comm) state ppid ...": the name may hold anything, ')' included
        const std::size_t close = stat.rfind(')');
        char state = 0;
        int ppid = 0;
        if (close == std::string::npos ||
            std::sscanf(stat.c_str() + close + 1, " %c %d", &state, &ppid) != 2 || state == 'Z')
            continue;
        parent_of[pid] = ppid;
    }
    std::vector<int> found;
    for (const auto& [pid, parent] : parent_of) {
        int up = parent;
        for (int depth = 0; depth < 4096 && up > 1 && up != self; ++depth) {
            auto it = parent_of.find(up);
            up = it == parent_of.end() ? 0 : it->second;
        }
        if (up == self)
            found.push_back(pid);
    }
    return found;
}

bool kernel_mounts(const SysRoot& sys, const std::string& fstype) {
    // "nodev\tsysfs", "\text4": the type after the last tab
    std::istringstream in(sys.text("/proc/filesystems").value.value_or(""));
    std::string line;
    while (std::getline(in, line)) {
        const std::size_t tab = line.rfind('\t');
        if (core::trim(tab == std::string::npos ? line : line.substr(tab + 1)) == fstype)
            return true;
    }
    return false;
}

} // namespace rtprov::system
