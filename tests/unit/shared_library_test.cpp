// SPDX-License-Identifier: Apache-2.0
#include "provisioner/core/shared_library.hpp"

#include "provisioner/core/error.hpp"

#include "tests/unit/catch.hpp"

#include <cstring>

using rtprov::Error;
using rtprov::core::SharedLibrary;

TEST_CASE("a library that is not there is an error naming it and the package to install") {
    try {
        SharedLibrary("libnot-a-library-rtprov.so.7", "rtprov-test-package");
        FAIL("no error");
    } catch (const Error& e) {
        const std::string message = e.what();
        CHECK(message.find("cannot load libnot-a-library-rtprov.so.7") != std::string::npos);
        CHECK(message.find("apt-get install rtprov-test-package") != std::string::npos);
    }
    try {
        SharedLibrary("libnot-a-library-rtprov.so.7", "");
        FAIL("no error");
    } catch (const Error& e) {
        CHECK(std::string(e.what()).find("install the package that has it") != std::string::npos);
    }
}

TEST_CASE("a function is found by its name and called with its C type") {
    const SharedLibrary libc("libc.so.6", "libc6");
    auto length = libc.function<decltype(&::strlen)>("strlen");
    REQUIRE(length != nullptr);
    CHECK(length("four") == 4);
}

TEST_CASE("a function the library lacks is an error naming it") {
    const SharedLibrary libc("libc.so.6", "libc6");
    try {
        libc.function<decltype(&::strlen)>("rtprov_no_such_function");
        FAIL("no error");
    } catch (const Error& e) {
        const std::string message = e.what();
        CHECK(message.find("libc.so.6' has no function 'rtprov_no_such_function' (") !=
              std::string::npos);
        CHECK(message.find("upgrade it: apt-get install libc6") != std::string::npos);
    }
}
