// SPDX-License-Identifier: Apache-2.0
#include "provisioner/core/shared_library.hpp"

#include "provisioner/core/error.hpp"

#include <dlfcn.h>
#include <link.h>

namespace rtprov::core {

namespace {

std::string install_hint(const std::string& package) {
    return package.empty() ? "install the package that has it"
                           : "install it: apt-get install " + package;
}

} // namespace

SharedLibrary::SharedLibrary(std::string soname, std::string package)
    : m_soname(std::move(soname)), m_package(std::move(package)) {
    m_handle = dlopen(m_soname.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!m_handle) {
        const char* reason = dlerror();
        throw Error("cannot load " + m_soname + ", which this command needs: " +
                    (reason ? std::string(reason) : std::string("unknown reason")) + "; " +
                    install_hint(m_package));
    }
}

const void* SharedLibrary::symbol(const char* name) const {
    dlerror();
    const void* address = dlsym(m_handle, name);
    if (address)
        return address;
    // Copied at once: the next dl* call (dlinfo below) frees dlerror's string.
    const char* error = dlerror();
    const std::string reason = error ? error : "not found";
    std::string file = m_soname;
    if (link_map* map = nullptr; dlinfo(m_handle, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name)
        file = map->l_name;
    throw Error("'" + file + "' has no function " + quoted(name) + " (" + reason +
                "): it is older than the library rtprov was built against" +
                (m_package.empty() ? std::string("; install a newer one")
                                   : "; upgrade it: apt-get install " + m_package));
}

} // namespace rtprov::core
