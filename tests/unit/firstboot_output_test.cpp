// SPDX-License-Identifier: Apache-2.0
#include "provisioner/cli/firstboot_output.hpp"

#include "tests/unit/catch.hpp"

using namespace rtprov::cli;

TEST_CASE("JOURNAL_STREAM names the journal only when device and inode both match") {
    CHECK(is_journal_stream("8:306630", 8, 306630));
    CHECK_FALSE(is_journal_stream("8:306630", 8, 306631));
    CHECK_FALSE(is_journal_stream("8:306630", 9, 306630));
    CHECK(is_journal_stream("18446744073709551615:1", 18446744073709551615u, 1));
    for (const char* bad : {"", ":", "8", "8:", ":306630", "8:306630x", "x8:306630", "8:-1",
                            "8:306630:1", " 8:306630"})
        CHECK_FALSE(is_journal_stream(bad, 8, 306630));
}

TEST_CASE("a first-boot message reaches the journal once, and a terminal sees it too") {
    for (bool stdout_is_journal : {true, false}) {
        Delivery d = deliver(stdout_is_journal);
        // Printed text lands in the journal when stdout is the journal stream.
        int in_journal = int(d.send) + int(d.print && stdout_is_journal);
        CHECK(in_journal == 1);
        CHECK(d.send); // 'journalctl MESSAGE_ID=...' finds every one
        CHECK(d.print == !stdout_is_journal);
    }
}
