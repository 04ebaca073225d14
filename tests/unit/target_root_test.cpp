// SPDX-License-Identifier: Apache-2.0
#include "provisioner/pipeline/target_root.hpp"

#include "provisioner/core/error.hpp"
#include "tests/unit/catch.hpp"
#include "tests/unit/temp_dir.hpp"

#include <filesystem>

using namespace rtprov;
using pipeline::open_target;

namespace {

// What open_target throws, as "usage: ..." or "error: ...".
std::string refusal(const std::string& root, bool live, bool required = true) {
    try {
        open_target(root, live, required);
    } catch (const UsageError& e) {
        return std::string("usage: ") + e.what();
    } catch (const Error& e) {
        return std::string("error: ") + e.what();
    }
    return "opened";
}

} // namespace

TEST_CASE("the running system is a target only with --live, however it is spelled") {
    TempDir dir;
    std::filesystem::create_directory_symlink("/", dir.path() + "/slash");
    for (const std::string& root :
         std::vector<std::string>{"/", "/.", "//", "/proc/self/root", dir.path() + "/slash"})
        CHECK(refusal(root, false) == "error: refusing --root '" + root +
                                          "': that is the running system; pass --live to change "
                                          "it");
    CHECK(open_target("", true, true)->path() == "/");
    CHECK(open_target("/.", true, true)->path() == "/");
    CHECK(refusal(dir.path(), true) == "usage: --live: --live works on this machine's '/'; drop "
                                       "--root '" +
                                           dir.path() + "' or --live");
    CHECK(open_target(dir.path(), false, true)->path() == dir.path());
}

TEST_CASE("a command that needs a target says how to name one") {
    CHECK(refusal("", false) ==
          "usage: --root: give --root DIR for an image root, or --live for this machine");
    CHECK(open_target("", false, false) == nullptr);
}

TEST_CASE("--regenerate-boot defaults to first boot offline and now live") {
    using core::Regenerate;
    CHECK(pipeline::regenerate_mode("", false) == Regenerate::first_boot);
    CHECK(pipeline::regenerate_mode("", true) == Regenerate::now);
    CHECK(pipeline::regenerate_mode("never", true) == Regenerate::never);
    CHECK(pipeline::regenerate_mode("now", false) == Regenerate::now);
    CHECK(pipeline::regenerate_mode("first-boot", true) == Regenerate::first_boot);
}

TEST_CASE("the command runner says what it runs and how long it took") {
    fs::Root root("/");
    std::vector<std::string> said;
    auto run =
        pipeline::command_runner(root, true, [&](const std::string& s) { said.push_back(s); });
    CHECK(run({"sh", "-c", "exit 3"}) == 3);
    REQUIRE(said.size() == 2);
    CHECK(said[0] == "running 'sh -c 'exit 3'' in the target");
    CHECK(said[1].starts_with("'sh -c 'exit 3'' took "));
    CHECK(said[1].ends_with(" ms"));
}
