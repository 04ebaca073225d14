#include "provisioner/core/shared_library.hpp"

#include "provisioner/core/error.hpp"

#include <dlfcn.h>

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
    if (!address)
        throw Error(m_soname + " has no function " + quoted(name) +
                    " (an older version of the library than rtprov was built for); " +
                    install_hint(m_package) + " of the version rtprov was built against");
    return address;
}

} // namespace rtprov::core
