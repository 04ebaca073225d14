// SPDX-License-Identifier: Apache-2.0
#include "provisioner/systemd/libsystemd.hpp"

#include "provisioner/core/error.hpp"

#include <sys/uio.h>

#include <algorithm>
#include <cctype>

namespace rtprov::systemd {

RTPROV_DL_LOADER(LibSystemd, libsystemd, "libsystemd.so.0", RTPROV_PACKAGE_LIBSYSTEMD,
                 RTPROV_LIBSYSTEMD_FUNCTIONS)

bool journal_send(const std::vector<std::string>& fields, const char* file, int line,
                  const char* function) {
    const LibSystemd* lib = nullptr;
    try {
        lib = &libsystemd();
    } catch (const Error&) {
        return false;
    }
    // As sd_journal_send(3) gives them: the caller's place, and each field without the
    // whitespace it ends in.
    std::vector<std::string> entry = {std::string("CODE_FILE=") + file,
                                      "CODE_LINE=" + std::to_string(line),
                                      std::string("CODE_FUNC=") + function};
    for (const std::string& field : fields) {
        std::string trimmed = field;
        while (!trimmed.empty() && std::isspace(static_cast<unsigned char>(trimmed.back())))
            trimmed.pop_back();
        entry.push_back(std::move(trimmed));
    }
    std::vector<iovec> vectors;
    vectors.reserve(entry.size());
    for (const std::string& field : entry)
        vectors.push_back({const_cast<char*>(field.data()), field.size()});
    return lib->sd_journal_sendv(vectors.data(), int(vectors.size())) >= 0;
}

void notify(const std::string& status) {
    const LibSystemd* lib = nullptr;
    try {
        lib = &libsystemd();
    } catch (const Error&) {
        return; // progress for 'systemctl status' only
    }
    // One assignment: a newline in the text (a path from an image) would start another.
    std::string line = "STATUS=" + status;
    std::replace(line.begin(), line.end(), '\n', ' ');
    lib->sd_notify(0, line.c_str());
}

} // namespace rtprov::systemd
