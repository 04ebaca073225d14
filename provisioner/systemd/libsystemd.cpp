#include "provisioner/systemd/libsystemd.hpp"

#include <sys/uio.h>

#include <cstdlib>

namespace rtprov::systemd {

RTPROV_DL_LOADER(LibSystemd, libsystemd, "libsystemd.so.0", RTPROV_PACKAGE_LIBSYSTEMD,
                 RTPROV_LIBSYSTEMD_FUNCTIONS)

bool journal_send(const std::vector<std::string>& fields) {
    std::vector<iovec> entry;
    entry.reserve(fields.size());
    for (const std::string& field : fields)
        entry.push_back({const_cast<char*>(field.data()), field.size()});
    return libsystemd().sd_journal_sendv(entry.data(), int(entry.size())) >= 0;
}

void notify(const std::string& state) {
    if (!std::getenv("NOTIFY_SOCKET")) // what sd_notify(3) itself looks at; nothing to load
        return;
    libsystemd().sd_notify(0, state.c_str());
}

} // namespace rtprov::systemd
