// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>

// A temporary folder for one test, removed afterwards unless RTPROV_KEEP_TESTDIR is set.
class TempDir {
  public:
    TempDir() {
        std::string pattern =
            (std::filesystem::temp_directory_path() / "rtprov-test-XXXXXX").string();
        if (!mkdtemp(pattern.data()))
            throw std::runtime_error("mkdtemp failed");
        m_path = pattern;
    }
    ~TempDir() {
        if (std::getenv("RTPROV_KEEP_TESTDIR"))
            std::cerr << "kept test folder " << m_path << "\n";
        else
            std::filesystem::remove_all(m_path);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;

    const std::string& path() const { return m_path; }

    // Writes 'content' to 'relative' (parents created), returns the host path.
    std::string write(const std::string& relative, const std::string& content) const {
        std::filesystem::path p = std::filesystem::path(m_path) / relative;
        std::filesystem::create_directories(p.parent_path());
        std::ofstream(p, std::ios::binary) << content;
        return p.string();
    }

    std::string read(const std::string& relative) const {
        return read_host_file((std::filesystem::path(m_path) / relative).string());
    }

    // The bytes of a host file ("" when missing). fread, not istreambuf_iterator:
    // GCC 12 at -O2 warns about the latter with -Wnull-dereference (a false positive).
    static std::string read_host_file(const std::string& path) {
        std::string out;
        if (FILE* f = std::fopen(path.c_str(), "rb")) {
            char buffer[4096];
            std::size_t n;
            while ((n = std::fread(buffer, 1, sizeof buffer, f)) > 0)
                out.append(buffer, n);
            std::fclose(f);
        }
        return out;
    }

    bool exists(const std::string& relative) const {
        return std::filesystem::exists(
            std::filesystem::symlink_status(std::filesystem::path(m_path) / relative));
    }

  private:
    std::string m_path;
};
