// SPDX-License-Identifier: Apache-2.0
#include "provisioner/cli/environment.hpp"

#include "provisioner/core/source_date_epoch.hpp"

#include <csignal>
#include <cstdlib>
#include <filesystem>

namespace stdfs = std::filesystem;

namespace rtprov::cli {

std::optional<std::time_t> source_date_epoch() {
    // SOURCE_DATE_EPOCH makes image builds reproducible
    // (https://reproducible-builds.org/specs/source-date-epoch/)
    const char* epoch = std::getenv("SOURCE_DATE_EPOCH");
    if (!epoch)
        return std::nullopt;
    return std::time_t(core::parse_source_date_epoch(epoch));
}

std::time_t now_unix() {
    return std::time(nullptr);
}

std::string utc_text(std::time_t t, const char* format) {
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buffer[32];
    std::strftime(buffer, sizeof buffer, format, &tm);
    return buffer;
}

std::string utc_now() {
    return utc_text(now_unix());
}

// Built-in data sits in ../share/rtprov next to the binary, both where it is installed
// and in the build tree, which mirrors the install layout. Without /proc (a bare
// chroot into an image), the folder the package installs it to.
std::string data_dir(const char* sub) {
    std::error_code ec;
    stdfs::path exe = stdfs::read_symlink("/proc/self/exe", ec);
    if (ec)
        return (stdfs::path(RTPROV_INSTALL_DATADIR) / sub).string();
    return (exe.parent_path().parent_path() / "share/rtprov" / sub).string();
}

// Test hook (documented in docs/design/journal.md): RTPROV_TEST_KILL_AT_STEP=N makes
// rtprov SIGKILL itself before its Nth durable step, to prove that an interrupted run
// converges.
void set_test_kill_hook(fs::Root& root) {
    const char* at = std::getenv("RTPROV_TEST_KILL_AT_STEP");
    if (!at)
        return;
    long target_step = std::strtol(at, nullptr, 10);
    root.set_step_hook([target_step, count = 0L]() mutable {
        if (++count == target_step)
            std::raise(SIGKILL);
    });
}

std::optional<int> inherited_lock_fd() {
    const char* text = std::getenv(k_lock_fd_variable);
    if (!text || *text == '\0')
        return std::nullopt;
    char* end = nullptr;
    long fd = std::strtol(text, &end, 10);
    if (*end != '\0' || fd < 0 || fd > 65535)
        return std::nullopt;
    return int(fd);
}

} // namespace rtprov::cli
