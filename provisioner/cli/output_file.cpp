// SPDX-License-Identifier: Apache-2.0
// The files commands are told to read from (--sysroot) and to write (--json, --prometheus,
// --html): checked before the work that would end in them, written atomically.
#include "provisioner/cli/commands.hpp"
#include "provisioner/core/error.hpp"
#include "provisioner/fs/root.hpp"
#include "provisioner/system/sysroot.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

namespace stdfs = std::filesystem;

namespace rtprov::cli {

void check_sysroot(const std::string& sysroot, const std::vector<std::string>& needed,
                   const std::string& without) {
    std::error_code ec;
    const std::string instead = "pass --sysroot a folder that holds a running system's proc/ "
                                "and sys/ (a copied tree), or leave --sysroot out to " +
                                without;
    if (!stdfs::is_directory(sysroot, ec))
        throw Error("--sysroot " + quoted(sysroot) + " is not a folder" +
                    (stdfs::exists(sysroot, ec) ? "" : " (it does not exist)") + "; " + instead);
    std::vector<std::string> missing;
    const system::SysRoot root(sysroot); // as every reader of the system reads it
    for (const std::string& path : needed)
        if (system::Fact<std::string> file = root.text("/" + path); !file)
            missing.push_back(quoted(path) + (file.absent ? "" : " (" + file.problem + ")"));
    if (missing.empty())
        return;
    std::string names;
    for (std::size_t i = 0; i < missing.size(); ++i)
        names += (i == 0 ? "" : i + 1 == missing.size() ? " and " : ", ") + missing[i];
    throw Error("--sysroot " + quoted(sysroot) +
                " is not the root of a running system: it has no readable " + names + "; " +
                instead);
}

void check_output_file(const std::string& path) {
    stdfs::path p = stdfs::absolute(path);
    if (!stdfs::is_directory(p.parent_path()))
        throw Error("cannot write " + quoted(path) + ": folder " +
                    quoted(p.parent_path().string()) + " does not exist; create it first");
    std::error_code ec;
    const stdfs::file_status entry = stdfs::symlink_status(p, ec);
    if (ec || entry.type() == stdfs::file_type::not_found ||
        entry.type() == stdfs::file_type::regular)
        return;
    throw Error("cannot write " + quoted(path) + ": it is " +
                (entry.type() == stdfs::file_type::symlink     ? "a symbolic link"
                 : entry.type() == stdfs::file_type::directory ? "a folder"
                                                               : "not a regular file") +
                ", which rtprov does not replace; name a new file or the file itself");
}

std::string output_file_name_problem(const std::string& value) {
    if (value.empty())
        return "needs the name of the file to write";
    if (value == "-")
        return "writes a file; '-' (standard output) is only for --json";
    // CLI11 takes the next word as the value even when it is an option ('--prometheus
    // --json' would write a file named '--json')
    if (value.starts_with('-'))
        return "needs the name of the file to write, not an option (" + value +
               "); a file whose name starts with '-' is given as ./" + value;
    return "";
}

void write_file(const std::string& path, const std::string& content) {
    check_output_file(path);
    stdfs::path p = stdfs::absolute(path);
    fs::Root dir(p.parent_path().string());
    core::FileState state;
    state.content = content;
    // a new file is the user's who runs rtprov; a file that is there keeps mode and owner
    state.uid = ::geteuid();
    state.gid = ::getegid();
    if (struct stat st{}; ::lstat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
        state.mode = st.st_mode & 07777;
        state.uid = st.st_uid;
        state.gid = st.st_gid;
    }
    dir.write("/" + p.filename().string(), state);
}

} // namespace rtprov::cli
