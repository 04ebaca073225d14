// SPDX-License-Identifier: Apache-2.0
#include "provisioner/pipeline/profile_search.hpp"

#include "tests/unit/catch.hpp"
#include "tests/unit/temp_dir.hpp"

#include <filesystem>
#include <fstream>

using namespace rtprov;

TEST_CASE("profiles are looked up in --profile-dir, then the target, then the built-in ones") {
    TempDir image;
    std::filesystem::create_directories(image.path() + "/etc/rtprov/profiles");
    std::ofstream(image.path() + "/etc/rtprov/profiles/studio.yaml") << "name: studio\n";
    fs::Root root(image.path());
    profile::SearchPath path = pipeline::profile_search_path({"/opt/a", "/opt/b"}, &root, "/share");
    REQUIRE(path.size() == 4);
    CHECK(path[0].label == "--profile-dir /opt/a");
    CHECK(path[1].label == "--profile-dir /opt/b");
    CHECK(path[2].label == "target /etc/rtprov/profiles");
    CHECK(path[3].label == "built-in");
    CHECK(path[3].path == "/share");
    // The target's files are read through its root: shown with the image's path.
    CHECK(path[2].files->display("/etc/rtprov/profiles/studio.yaml") ==
          image.path() + "/etc/rtprov/profiles/studio.yaml");
    CHECK(*path[2].files->read("/etc/rtprov/profiles/studio.yaml") == "name: studio\n");
}

TEST_CASE("a target without /etc/rtprov/profiles, or no target, adds no folder") {
    TempDir image;
    fs::Root root(image.path());
    CHECK(pipeline::profile_search_path({}, &root, "/share").size() == 1);
    CHECK(pipeline::profile_search_path({}, nullptr, "/share").size() == 1);
}
