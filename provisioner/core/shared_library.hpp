// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>

namespace rtprov::core {

// A shared library loaded when a command first needs it, instead of by the dynamic
// linker at every start. libarchive (the backup; it brings libxml2 and ICU), libmount
// (mount tables) and libsystemd (D-Bus, the journal; it brings libgcrypt) together made
// 19 of the 26 libraries every run mapped, and cost 'rtprov --version' about 5 ms and
// 3 MB of resident memory; a self-test, which locks its memory, touches none of them.
// dlopen(3) with RTLD_NOW | RTLD_LOCAL; never closed (the process ends first).
class SharedLibrary {
  public:
    // Throws rtprov::Error naming the library, the Debian package that has it (empty:
    // not known at build time) and dlerror(3)'s reason.
    SharedLibrary(std::string soname, std::string package);

    // The address of the function 'name' as a pointer of type F (the C declaration's
    // own type, decltype(&::name)); throws rtprov::Error when the library lacks it.
    template <class F> F function(const char* name) const {
        static_assert(sizeof(F) == sizeof(void*));
        F f = nullptr;
        const void* address = symbol(name);
        __builtin_memcpy(&f, &address, sizeof f); // object to function pointer, as POSIX allows
        return f;
    }

  private:
    const void* symbol(const char* name) const;

    void* m_handle = nullptr;
    std::string m_soname;
    std::string m_package;
};

} // namespace rtprov::core

// A library's functions as a struct, each member named and typed as the C function it
// holds (LIST is an X-macro: X(name) per function), and the function that loads the
// library at its first call and returns them; an error there is thrown again at the
// next call.
#define RTPROV_DL_MEMBER(name) decltype(&::name) name = nullptr;
#define RTPROV_DL_LOAD(name) loaded.name = library.function<decltype(&::name)>(#name);
#define RTPROV_DL_STRUCT(Name, LIST)                                                               \
    struct Name {                                                                                  \
        LIST(RTPROV_DL_MEMBER)                                                                     \
    };
#define RTPROV_DL_LOADER(Name, accessor, soname, package, LIST)                                    \
    const Name& accessor() {                                                                       \
        static const Name lib = [] {                                                               \
            const ::rtprov::core::SharedLibrary library(soname, package);                          \
            Name loaded;                                                                           \
            LIST(RTPROV_DL_LOAD)                                                                   \
            return loaded;                                                                         \
        }();                                                                                       \
        return lib;                                                                                \
    }
