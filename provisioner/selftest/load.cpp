// SPDX-License-Identifier: Apache-2.0
#include "provisioner/selftest/load.hpp"

#include "provisioner/core/error.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <new>
#include <system_error>
#include <thread>

namespace rtprov::selftest {

namespace {

constexpr std::size_t k_cache_line_words = 64 / sizeof(std::uint64_t);

} // namespace

LoadGenerator::LoadGenerator(const core::CpuList& cpus, std::size_t buffer_bytes)
    : m_ready(static_cast<std::ptrdiff_t>(cpus.size())) {
    try {
        for (unsigned cpu : cpus.cpus()) {
            ThreadSpec spec{"rtprov-load" + std::to_string(cpu), core::SchedPolicy::other, 0, cpu};
            m_threads.push_back(
                std::make_unique<PinnedThread>(spec, [this, buffer_bytes] { run(buffer_bytes); }));
        }
    } catch (...) {
        stop();
        throw;
    }
    m_ready.wait();
    if (m_out_of_memory.load()) {
        stop();
        throw Error("cannot allocate " + std::to_string(buffer_bytes) +
                    " bytes of load buffer per CPU for " + quoted(cpus.to_string()) +
                    "; free memory or measure without load");
    }
}

LoadGenerator::~LoadGenerator() {
    stop();
}

void LoadGenerator::stop() {
    m_stop.store(true, std::memory_order_relaxed);
    for (auto& thread : m_threads)
        thread->join();
}

void LoadGenerator::run(std::size_t buffer_bytes) {
    // Allocated by the thread itself, so that its pages are local to the CPU that uses them.
    std::vector<std::uint64_t> buffer;
    try {
        buffer.resize(std::max(buffer_bytes / sizeof(std::uint64_t), k_cache_line_words));
    } catch (const std::bad_alloc&) {
        m_out_of_memory.store(true);
    }
    m_ready.count_down();
    if (buffer.empty())
        return;
    // volatile: the stores are the point of the load and must not be optimised away.
    volatile std::uint64_t* words = buffer.data();
    std::uint64_t value = 0;
    while (!m_stop.load(std::memory_order_relaxed)) {
        // One read-modify-write per cache line: every line is fetched and written back.
        for (std::size_t i = 0; i < buffer.size(); i += k_cache_line_words)
            words[i] = words[i] + ++value;
        m_passes.fetch_add(1, std::memory_order_relaxed);
    }
}

FileReadLoad::FileReadLoad(const std::vector<ThreadSpec>& threads,
                           std::vector<std::filesystem::path> folders)
    : m_folders(std::move(folders)) {
    for (const std::filesystem::path& folder : m_folders) {
        std::error_code error;
        if (!std::filesystem::is_directory(folder, error))
            throw Error("cannot read files under " + quoted(folder.string()) + " for the load: " +
                        (error ? errno_text(error.value()) : std::string("not a folder")) +
                        "; name a folder of files to read");
    }
    try {
        for (const ThreadSpec& spec : threads)
            m_threads.push_back(std::make_unique<PinnedThread>(spec, [this] { run(); }));
    } catch (...) {
        stop();
        throw;
    }
}

FileReadLoad::~FileReadLoad() {
    stop();
}

void FileReadLoad::stop() {
    m_stop.store(true, std::memory_order_relaxed);
    for (auto& thread : m_threads)
        thread->join();
}

void FileReadLoad::run() {
    std::vector<std::byte> buffer;
    try {
        buffer.resize(k_buffer_bytes);
        while (!m_stop.load(std::memory_order_relaxed)) {
            std::uint64_t read = 0;
            for (const std::filesystem::path& folder : m_folders) {
                std::error_code error;
                // Not following links: a link to '/' or to a folder above would never end.
                std::filesystem::recursive_directory_iterator walk(
                    folder, std::filesystem::directory_options::skip_permission_denied, error);
                for (const std::filesystem::recursive_directory_iterator end;
                     !error && walk != end && !m_stop.load(std::memory_order_relaxed);
                     walk.increment(error)) {
                    if (walk->is_regular_file(error) && !walk->is_symlink(error))
                        read += read_file(walk->path(), buffer);
                }
            }
            // Nothing to read (empty folders, or every file refused): not a busy loop.
            if (read == 0 && !m_stop.load(std::memory_order_relaxed))
                std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
    } catch (const std::exception&) {
        // Out of memory for a path or the buffer: this thread's load ends, the run goes on.
    }
}

std::uint64_t FileReadLoad::read_file(const std::filesystem::path& path,
                                      std::vector<std::byte>& buffer) {
    // O_NONBLOCK: a FIFO or device that became one since the walk saw it does not block
    // the open; fstat then passes it over.
    const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return 0;
    std::uint64_t read = 0;
    struct stat st {};
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
        bool whole = true;
        for (;;) {
            if (m_stop.load(std::memory_order_relaxed)) {
                whole = false;
                break;
            }
            const ssize_t n = ::read(fd, buffer.data(), buffer.size());
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0) {
                whole = n == 0;
                break;
            }
            read += static_cast<std::uint64_t>(n);
            m_bytes.fetch_add(static_cast<std::uint64_t>(n), std::memory_order_relaxed);
        }
        // The pages read are dropped from the page cache (they are clean), so the next pass
        // reads the disk again, as a scan of a library larger than the cache does.
        posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
        if (whole)
            m_files.fetch_add(1, std::memory_order_relaxed);
    }
    ::close(fd);
    return read;
}

} // namespace rtprov::selftest
