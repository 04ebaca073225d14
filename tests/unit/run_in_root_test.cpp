// SPDX-License-Identifier: Apache-2.0
#include "provisioner/target/run_in_root.hpp"

#include "provisioner/fs/root.hpp"
#include "tests/unit/catch.hpp"
#include "tests/unit/temp_dir.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

using namespace rtprov;

namespace {

// run_in_root's exit code and what its child wrote to stderr.
std::pair<int, std::string>
run_capturing(const fs::Root& root, const std::vector<std::string>& argv, const std::string& log) {
    int saved = ::dup(STDERR_FILENO);
    int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    ::dup2(fd, STDERR_FILENO);
    ::close(fd);
    int rc = target::run_in_root(root, argv, target::RunMode::chroot);
    ::dup2(saved, STDERR_FILENO);
    ::close(saved);
    std::ostringstream text;
    text << std::ifstream(log).rdbuf();
    return {rc, text.str()};
}

// True when this process's '/' is a mount point (/proc/self/mountinfo, proc(5)).
bool root_is_a_mount() {
    std::ifstream in("/proc/self/mountinfo");
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream fields(line);
        std::string id, parent, device, root, mount_point;
        if (fields >> id >> parent >> device >> root >> mount_point && mount_point == "/")
            return true;
    }
    return false;
}

} // namespace

TEST_CASE("a root whose path is swapped to another tree after it was opened is not entered") {
    if (geteuid() != 0 || !root_is_a_mount()) {
        // run_in_root makes the mounts below '/' private, which needs '/' to be a mount
        // point: not so inside a plain chroot (the Debian 13 build of the test suite).
        WARN("needs root and '/' a mount point (a mount namespace and chroot): not run");
        return;
    }
    TempDir dir;
    namespace stdfs = std::filesystem;
    for (const char* tree : {"a", "b"})
        for (const char* sub : {"dev", "sys", "proc"})
            stdfs::create_directories(dir.path() + "/" + tree + "/" + sub);
    const std::string link = dir.path() + "/image";
    stdfs::create_directory_symlink(dir.path() + "/a", link);
    fs::Root root(link); // opened while it names a
    const std::string log = dir.path() + "/stderr";

    // As it was opened: entered, and only the command is missing there.
    auto [rc, err] = run_capturing(root, {"no-such-command"}, log);
    CHECK(rc == 127);
    CHECK(err.find("cannot run no-such-command") != std::string::npos);

    stdfs::remove(link);
    stdfs::create_directory_symlink(dir.path() + "/b", link); // now it names b
    std::tie(rc, err) = run_capturing(root, {"no-such-command"}, log);
    CHECK(rc == 127);
    CHECK(err.find("the target root changed under rtprov") != std::string::npos);
    CHECK(err.find("cannot run") == std::string::npos);
}
