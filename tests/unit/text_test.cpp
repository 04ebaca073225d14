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
