#pragma once

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
        std::ifstream in(std::filesystem::path(m_path) / relative, std::ios::binary);
        return std::string(std::istreambuf_iterator<char>(in), {});
    }

    bool exists(const std::string& relative) const {
        return std::filesystem::exists(std::filesystem::symlink_status(std::filesystem::path(m_path) / relative));
    }

private:
    std::string m_path;
};
