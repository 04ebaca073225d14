// SPDX-License-Identifier: Apache-2.0
#include "provisioner/core/error.hpp"
#include "provisioner/core/text.hpp"

#include "tests/unit/catch.hpp"

using namespace rtprov::core;

TEST_CASE("words split at any whitespace, has_word matches whole words only") {
    CHECK(words("  a\tb\n\vc  ") == std::vector<std::string>{"a", "b", "c"});
    CHECK(words("").empty());
    CHECK(has_word("GENTLE_FAIR_SLEEPERS NO_RT_PUSH_IPI", "NO_RT_PUSH_IPI"));
    CHECK_FALSE(has_word("GENTLE_FAIR_SLEEPERS NO_RT_PUSH_IPI", "RT_PUSH_IPI"));
}

TEST_CASE("join puts the separator between items only") {
    CHECK(join({}, ", ").empty());
    CHECK(join({"a"}, ", ") == "a");
    CHECK(join({"a", "b", "c"}, ", ") == "a, b, c");
}

TEST_CASE("quoted_list quotes each item") {
    CHECK(quoted_list({}).empty());
    CHECK(quoted_list({"debian"}) == "'debian'");
    CHECK(quoted_list({"debian", "raspbian"}) == "'debian', 'raspbian'");
}

TEST_CASE("shell_command quotes only the words a shell would split or expand") {
    CHECK(shell_command({"update-grub"}) == "update-grub");
    CHECK(shell_command({"apt-get", "install", "-y", "linux-image-rt-amd64"}) ==
          "apt-get install -y linux-image-rt-amd64");
    CHECK(shell_command({"sh", "-c", "exit 3"}) == "sh -c 'exit 3'");
    CHECK(shell_command({"echo", "it's", ""}) == "echo 'it'\\''s' ''");
    CHECK(shell_command({"a$(id)", "x;y", "*"}) == "'a$(id)' 'x;y' '*'");
    CHECK(shell_command({"A=b", "x", "A=b"}) == "'A=b' x A=b");
    CHECK(shell_command({"if", "then"}) == "'if' then");
}

TEST_CASE("an error keeps what follows a NUL byte of a quoted value") {
    rtprov::Error e("found " + rtprov::quoted(std::string("a\0b", 3)) + "; fix it");
    CHECK(std::string(e.what()) == "found 'a\\x00b'; fix it");
}

TEST_CASE("utf8_length takes well-formed UTF-8 only") {
    CHECK(utf8_length("\xc2\xb5", 0) == 2);         // U+00B5
    CHECK(utf8_length("\xe2\x82\xac", 0) == 3);     // U+20AC
    CHECK(utf8_length("\xf0\x9f\x8e\xb5", 0) == 4); // U+1F3B5
    for (const char* bad : {"\xc0\x80", "\xe0\x80\x80", "\xed\xa0\x80", "\xf4\x90\x80\x80",
                            "\xf5\x80\x80\x80", "\xc2", "a"}) {
        INFO(bad);
        CHECK(utf8_length(bad, 0) == 0);
    }
}

TEST_CASE("printable_name keeps a name on one printable line and tells names apart") {
    CHECK(printable_name("irq/122-PCIe PME") == "irq/122-PCIe PME");
    CHECK(printable_name("Gerät µ €") == "Gerät µ €");
    CHECK(printable_name("irq/9-a\nb\tc\rd") == "irq/9-a\\x0ab\\x09c\\x0dd");
    CHECK(printable_name(std::string("a\0b\x7f", 4)) == "a\\x00b\\x7f");
    // C1 controls (U+009B is a CSI to some terminals), and bytes that are not UTF-8
    CHECK(printable_name("a\xc2\x9b"
                         "b\xc2\x85") == "a\\xc2\\x9bb\\xc2\\x85");
    CHECK(printable_name("\xff\xfe"
                         "a\xc3") == "\\xff\\xfea\\xc3");
    CHECK(printable_name("\xe2\x82"
                         "x") == "\\xe2\\x82x");
    // the backslash too: a name that holds the text "\x0a" shows apart from a line break
    CHECK(printable_name("a\\x0a") == "a\\x5cx0a");
    CHECK(printable_name("").empty());
}
