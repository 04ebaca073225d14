// SPDX-License-Identifier: Apache-2.0
#include "provisioner/cli/printable_buf.hpp"

#include "tests/unit/catch.hpp"

#include <ostream>
#include <sstream>
#include <string>

using rtprov::cli::PrintableBuf;

namespace {

// What reaches the terminal when 'parts' are printed one after the other.
std::string printed(std::initializer_list<std::string> parts) {
    std::stringbuf terminal;
    {
        PrintableBuf filter(&terminal);
        std::ostream out(&filter);
        for (const std::string& part : parts)
            out << part;
        out.flush();
    }
    return terminal.str();
}

} // namespace

TEST_CASE("the output filter writes control characters as \\xNN and lets text through") {
    CHECK(printed({"plain text, tabs\tand newlines\n"}) == "plain text, tabs\tand newlines\n");
    CHECK(printed({"a \033]0;title\007 b"}) == "a \\x1b]0;title\\x07 b");
    CHECK(printed({std::string("nul \0 del \x7f cr \r", 16)}) == "nul \\x00 del \\x7f cr \\x0d");
    CHECK(printed({"caf\xc3\xa9 \xc2\xb5s"}) == "caf\xc3\xa9 \xc2\xb5s"); // é, µ pass
}

TEST_CASE("the output filter escapes a C1 control in UTF-8, also split between two writes") {
    CHECK(printed({"x\xc2\x9b"
                   "31m"}) == "x\\xc2\\x9b31m");
    CHECK(printed({"x\xc2", "\x9b"
                            "31m"}) == "x\\xc2\\x9b31m");
    CHECK(printed({"x\xc2", "\xb5"}) == "x\xc2\xb5");
    // a lone 0xC2 at the very end is not valid UTF-8 and is not written
    CHECK(printed({"end\xc2"}) == "end");
}

TEST_CASE("the output filter passes single characters through overflow alike") {
    std::stringbuf terminal;
    PrintableBuf filter(&terminal);
    std::ostream out(&filter);
    out.put('a').put('\x1b').put('\n');
    CHECK(terminal.str() == "a\\x1b\n");
}
