// SPDX-License-Identifier: Apache-2.0
#include "provisioner/selftest/load.hpp"

#include "provisioner/core/error.hpp"

#include "tests/unit/catch.hpp"
#include "tests/unit/sanitizer.hpp"
#include "tests/unit/temp_dir.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <limits>
#include <thread>
#include <vector>

using rtprov::core::CpuList;
using rtprov::core::SchedPolicy;
using rtprov::selftest::FileReadLoad;
using rtprov::selftest::LoadGenerator;
using rtprov::selftest::ThreadSpec;

TEST_CASE("the load generator keeps its CPUs busy until stopped") {
    LoadGenerator load(CpuList({0}), 64 * 1024);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    load.stop();
    const std::uint64_t passes = load.passes();
    CHECK(passes > 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    CHECK(load.passes() == passes); // stopped means stopped
    load.stop();                    // and stopping again is harmless
}

TEST_CASE("no load generator starts when one of its CPUs cannot be used") {
    try {
        LoadGenerator load(CpuList({0, 4095}));
        FAIL("a load thread on CPU 4095 started");
    } catch (const rtprov::Error& e) {
        CHECK(std::string(e.what()) ==
              "cannot start thread 'rtprov-load4095' (SCHED_OTHER on CPU 4095): invalid "
              "argument");
    }
}

TEST_CASE("a load buffer that cannot be allocated stops the load and says so") {
    if (RTPROV_SANITIZED) {
        WARN("a sanitizer's operator new aborts instead of throwing; not checked");
        return;
    }
    try {
        LoadGenerator load(CpuList({0}), std::size_t{1} << 62);
        FAIL("a load buffer of 4 EiB was allocated");
    } catch (const rtprov::Error& e) {
        CHECK(std::string(e.what()) == "cannot allocate 4611686018427387904 bytes of load buffer "
                                       "per CPU for '0'; free memory or measure without load");
    }
}

namespace {

// Waits up to 10 s for 'done'.
template <class F> bool eventually(F done) {
    for (int i = 0; i < 1000 && !done(); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    return done();
}

// Pages of 'path' in the page cache (mincore(2) of a mapping of it).
std::size_t cached_pages(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    struct stat st {};
    fstat(fd, &st);
    void* map = mmap(nullptr, std::size_t(st.st_size), PROT_READ, MAP_SHARED, fd, 0);
    ::close(fd);
    const long page = sysconf(_SC_PAGESIZE);
    std::vector<unsigned char> resident((std::size_t(st.st_size) + std::size_t(page) - 1) /
                                        std::size_t(page));
    mincore(map, std::size_t(st.st_size), resident.data());
    munmap(map, std::size_t(st.st_size));
    return std::size_t(
        std::count_if(resident.begin(), resident.end(), [](unsigned char r) { return r & 1; }));
}

// Writes 'bytes' to 'path', on the disk (fsync: clean pages can be dropped), and reads it
// back, so that it is in the page cache.
void write_cached(const std::string& path, std::size_t bytes) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    const std::string block(bytes, 'x');
    CHECK(::write(fd, block.data(), block.size()) == ssize_t(bytes));
    fsync(fd);
    ::close(fd);
    std::ifstream(path, std::ios::binary).ignore(std::numeric_limits<std::streamsize>::max());
}

ThreadSpec reader(const std::string& name) {
    return {name, SchedPolicy::other, 0, std::nullopt};
}

} // namespace

TEST_CASE("the file load reads every regular file again and again until stopped") {
    TempDir dir;
    dir.write("covers/a/cover.jpg", std::string(100'000, 'a'));
    dir.write("covers/b/folder.jpg", std::string(30'000, 'b'));
    dir.write("music.flac", std::string(5'000, 'c'));
    std::filesystem::create_symlink("/usr", std::filesystem::path(dir.path()) / "usr");
    REQUIRE(mkfifo((dir.path() + "/fifo").c_str(), 0644) == 0); // never blocks the load

    FileReadLoad load({reader("rtprov-read-a"), reader("rtprov-read-b")}, {dir.path()});
    CHECK(eventually([&] { return load.files() >= 12; })); // two threads, two passes each
    const auto start = std::chrono::steady_clock::now();
    load.stop();
    // a bound against a stop that waits for the end of a pass, not a measure of speed:
    // a loaded machine may take longer than any tight bound
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
    const std::uint64_t files = load.files();
    // Whole files only, the link and the FIFO passed over: each a multiple of a pass.
    CHECK(load.bytes() >= files / 3 * 135'000);
    CHECK(load.bytes() < (files / 3 + 2 * 3) * 135'000);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    CHECK(load.files() == files); // stopped means stopped
    load.stop();
}

TEST_CASE("the file load drops what it read from the page cache") {
    TempDir dir;
    const std::string control = dir.path() + "/control";
    write_cached(control, 256 * 1024);
    if (cached_pages(control) == 0) {
        WARN("files here are not kept in the page cache; not checked");
        return;
    }
    const int fd = ::open(control.c_str(), O_RDONLY | O_CLOEXEC);
    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    ::close(fd);
    if (cached_pages(control) != 0) {
        WARN("this file system keeps pages after POSIX_FADV_DONTNEED (tmpfs); not checked");
        return;
    }
    std::filesystem::remove(control);

    const std::string cover = dir.path() + "/cover.jpg";
    write_cached(cover, 256 * 1024);
    REQUIRE(cached_pages(cover) > 0);
    FileReadLoad load({reader("rtprov-read")}, {dir.path()});
    CHECK(eventually([&] { return load.files() >= 1; }));
    load.stop();
    CHECK(cached_pages(cover) == 0);
}

TEST_CASE("a file load on a folder that is not one is refused and names it") {
    TempDir dir;
    const std::string file = dir.write("cover.jpg", "jpeg");
    const auto error = [](const std::string& folder) {
        try {
            FileReadLoad load({reader("rtprov-read")}, {folder});
        } catch (const rtprov::Error& e) {
            return std::string(e.what());
        }
        return std::string("the load started");
    };
    CHECK(error("/rtprov-no-such-folder") ==
          "cannot read files under '/rtprov-no-such-folder' for the load: no such file or "
          "directory; name a folder of files to read");
    CHECK(error(file) == "cannot read files under '" + file +
                             "' for the load: not a folder; name a folder of files to read");
}
