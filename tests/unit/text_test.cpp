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

TEST_CASE("one_line leaves printable UTF-8 as it is") {
    for (const char* name :
         {"mpd", "output:alsa", "irq/130-snd_hda_intel:card0", "a\\x0ab",
          "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x8e\xb5 \xc2\xa0", "'quoted'", ""}) {
        INFO(name);
        CHECK(one_line(name) == name);
    }
}

TEST_CASE("one_line writes control characters and bytes that are not UTF-8 as \\xNN") {
    CHECK(one_line("\nresult: passed") == "\\x0aresult: passed");
    CHECK(one_line("a\tb\rc\x1b[2J\x7f") == "a\\x09b\\x0dc\\x1b[2J\\x7f");
    CHECK(one_line(std::string("a\0b", 3)) == "a\\x00b");
    // C1 controls in UTF-8 (U+009B is a CSI to some terminals); U+00A0 is not one
    CHECK(one_line("\xc2\x9b"
                   "2J\xc2\x85\xc2\xa0") == "\\xc2\\x9b2J\\xc2\\x85\xc2\xa0");
    // a lone or overlong lead, a stray continuation byte, a truncated sequence at the end
    CHECK(one_line("\xc0\x8a-\x80-\xe2\x82") == "\\xc0\\x8a-\\x80-\\xe2\\x82");
    // a sequence cut short is escaped, the character after it kept
    CHECK(one_line("\xe2\x82"
                   "a") == "\\xe2\\x82a");
    // applied twice, it changes nothing more
    const std::string once = one_line("x\ny\x1b\xff");
    CHECK(one_line(once) == once);
}

TEST_CASE("a quoted value is shown on one line, in quoted() and quoted_list() alike") {
    CHECK(rtprov::quoted("\nresult: passed") == "'\\x0aresult: passed'");
    CHECK(quoted_list({"a\nb", "c"}) == "'a\\x0ab', 'c'");
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
