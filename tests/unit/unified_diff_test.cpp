// SPDX-License-Identifier: Apache-2.0
#include "provisioner/core/unified_diff.hpp"

#include "tests/unit/catch.hpp"

using rtprov::core::unified_diff;

TEST_CASE("equal texts give no diff") {
    CHECK(unified_diff(std::string("a\n"), std::string("a\n"), "a/x", "b/x").empty());
}

TEST_CASE("a new file diffs against /dev/null") {
    CHECK(unified_diff(std::nullopt, std::string("one\ntwo\n"), "a/x", "b/x") ==
          "--- /dev/null\n+++ b/x\n@@ -0,0 +1,2 @@\n+one\n+two\n");
}

TEST_CASE("a changed line shows three lines of context like diff -u") {
    std::string old_text = "1\n2\n3\n4\n5\n6\n7\n8\n9\n";
    std::string new_text = "1\n2\n3\n4\nfive\n6\n7\n8\n9\n";
    CHECK(unified_diff(old_text, new_text, "a/f", "b/f") ==
          "--- a/f\n+++ b/f\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n");
}

TEST_CASE("distant changes make separate hunks") {
    std::string old_text, new_text;
    for (int i = 1; i <= 20; ++i) {
        old_text += std::to_string(i) + "\n";
        new_text += (i == 2 || i == 18 ? "x" : std::to_string(i)) + "\n";
    }
    CHECK(unified_diff(old_text, new_text, "a/f", "b/f") ==
          "--- a/f\n+++ b/f\n"
          "@@ -1,5 +1,5 @@\n 1\n-2\n+x\n 3\n 4\n 5\n"
          "@@ -15,6 +15,6 @@\n 15\n 16\n 17\n-18\n+x\n 19\n 20\n");
}

TEST_CASE("a missing final newline is marked") {
    CHECK(unified_diff(std::string("a"), std::string("a\n"), "a/f", "b/f") ==
          "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+a\n");
}
