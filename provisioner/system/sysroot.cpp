// SPDX-License-Identifier: Apache-2.0
#include "provisioner/system/sysroot.hpp"

#include "provisioner/core/error.hpp"
#include "provisioner/fs/kernel_file.hpp"
#include "provisioner/fs/root.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>

namespace rtprov::system {

namespace stdfs = std::filesystem;

namespace {

std::optional<int> number_name(const stdfs::path& path) {
    const std::string name = path.filename().string();
    int value = 0;
    auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), value);
    if (name.empty() || ec != std::errc() || end != name.data() + name.size())
        return std::nullopt;
    return value;
}

} // namespace

SysRoot::SysRoot(const std::string& root) : m_root(root.empty() ? "/" : root) {
    // A tree names its files as the running system it was copied from does (the display
    // name ""): '/proc/cmdline', not the tree's host path. Not a folder: no tree, and
    // every read says why.
    std::error_code ec;
    if (m_root != "/" && stdfs::is_directory(m_root, ec))
        m_tree = std::make_shared<const fs::Root>(m_root.string(), "");
}

Fact<stdfs::path> SysRoot::host(const std::string& path) const {
    const std::string absolute = path.starts_with('/') ? path : "/" + path;
    if (m_root == "/")
        return {stdfs::path(absolute), {}, false};
    if (!m_tree)
        return Fact<stdfs::path>::failed("cannot read '" + absolute +
                                         "': " + quoted(m_root.string()) + " is not a folder");
    Fact<std::string> resolved = m_tree->try_resolve(absolute);
    if (!resolved)
        return Fact<stdfs::path>::failed(resolved.problem);
    return {stdfs::path(m_tree->host_path(*resolved)), {}, false};
}

// The one reader: the running system's files through fs::try_read_host_file (what
// fs::read_kernel_file is, with a cap of its own), a tree's through fs::Root::try_read; both read
// as fs::read_capped does (type checked before opening, size capped at 'cap').
Fact<std::string> SysRoot::text(const std::string& path, const fs::SizeCap& cap) const {
    const std::string absolute = path.starts_with('/') ? path : "/" + path;
    if (m_root == "/")
        return fs::try_read_host_file(absolute, cap, absolute);
    if (!m_tree)
        return Fact<std::string>::failed(host(absolute).problem); // not a folder
    // resolved inside the tree and opened beneath it (openat2), as Root reads
    core::Result<core::FileState> file = m_tree->try_read(absolute, cap);
    if (!file)
        return Fact<std::string>::failed(std::move(file.problem), file.absent);
    return {std::move(file.value->content), {}, false};
}

Fact<std::string> SysRoot::value(const std::string& path) const {
    Fact<std::string> fact = text(path);
    if (fact)
        fact.value = fs::value_of(std::move(*fact.value));
    return fact;
}

Fact<long long> SysRoot::integer(const std::string& path) const {
    Fact<long long> fact;
    Fact<std::string> content = value(path);
    if (!content) {
        fact.problem = content.problem;
        fact.absent = content.absent;
        return fact;
    }
    const std::string& v = *content;
    long long parsed = 0;
    auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), parsed);
    if (v.empty() || ec != std::errc() || end != v.data() + v.size())
        fact.problem = "'" + path + "' holds '" + v + "', not a number";
    else
        fact.value = parsed;
    return fact;
}

Fact<core::CpuList> SysRoot::cpu_list(const std::string& path) const {
    Fact<core::CpuList> fact;
    Fact<std::string> content = value(path);
    if (!content) {
        fact.problem = content.problem;
        fact.absent = content.absent;
        return fact;
    }
    std::string v = *content;
    if (v == "(null)") // nohz_full when the kernel has no nohz_full CPUs
        v.clear();
    fact = core::parse_cpu_list(v);
    if (!fact)
        fact.problem = "'" + path + "' holds '" + v + "': " + fact.problem;
    return fact;
}

Fact<std::vector<int>> SysRoot::numbered(const std::string& path) const {
    Fact<stdfs::path> folder = host(path);
    if (!folder)
        return Fact<std::vector<int>>::failed(folder.problem);
    std::error_code ec;
    std::vector<int> out;
    stdfs::directory_iterator it(*folder, ec);
    if (ec)
        return Fact<std::vector<int>>::failed("cannot list '" + path + "': " + ec.message(),
                                              ec == std::errc::no_such_file_or_directory);
    for (const auto& entry : it)
        if (auto n = number_name(entry.path()))
            out.push_back(*n);
    std::sort(out.begin(), out.end());
    return {std::move(out), {}, false};
}

Fact<std::vector<std::string>> SysRoot::names(const std::string& path) const {
    Fact<stdfs::path> folder = host(path);
    if (!folder)
        return Fact<std::vector<std::string>>::failed(folder.problem);
    std::error_code ec;
    std::vector<std::string> out;
    stdfs::directory_iterator it(*folder, ec);
    if (ec)
        return Fact<std::vector<std::string>>::failed("cannot list '" + path + "': " + ec.message(),
                                                      ec == std::errc::no_such_file_or_directory);
    for (const auto& entry : it)
        out.push_back(entry.path().filename().string());
    std::sort(out.begin(), out.end());
    return {std::move(out), {}, false};
}

Fact<std::string> SysRoot::resolve(const std::string& path) const {
    const std::string absolute = path.starts_with('/') ? path : "/" + path;
    if (m_root == "/") {
        std::error_code ec;
        stdfs::path canonical = stdfs::canonical(absolute, ec);
        if (ec)
            return Fact<std::string>::failed("cannot resolve '" + absolute + "': " + ec.message(),
                                             ec == std::errc::no_such_file_or_directory);
        return {canonical.string(), {}, false};
    }
    if (!m_tree)
        return Fact<std::string>::failed(host(absolute).problem);
    Fact<std::string> resolved = m_tree->try_resolve(absolute);
    if (resolved && !exists(*resolved))
        return Fact<std::string>::failed(
            "cannot resolve '" + absolute + "': " + std::strerror(ENOENT), true);
    return resolved;
}

Fact<std::string> SysRoot::link(const std::string& path) const {
    const std::string absolute = path.starts_with('/') ? path : "/" + path;
    const stdfs::path shown(absolute);
    Fact<stdfs::path> folder = host(shown.parent_path().string());
    if (!folder)
        return Fact<std::string>::failed(folder.problem, folder.absent);
    std::error_code ec;
    stdfs::path target = stdfs::read_symlink(*folder / shown.filename(), ec);
    if (ec)
        return Fact<std::string>::failed("cannot read the link '" + absolute + "': " + ec.message(),
                                         ec == std::errc::no_such_file_or_directory);
    return {target.string(), {}, false};
}

bool SysRoot::exists(const std::string& path) const {
    Fact<stdfs::path> file = host(path);
    std::error_code ec;
    return file && stdfs::exists(*file, ec);
}

bool SysRoot::has_write_bit(const std::string& path) const {
    Fact<stdfs::path> file = host(path);
    struct stat st {};
    return file && ::stat(file->c_str(), &st) == 0 && (st.st_mode & 0222) != 0;
}

} // namespace rtprov::system
