#include "provisioner/profile/app_loader.hpp"

#include "provisioner/core/error.hpp"

#include "tests/unit/catch.hpp"
#include "tests/unit/temp_dir.hpp"

using namespace rtprov;

namespace {

std::string load_error(const TempDir& dir) {
    try {
        profile::load_apps(dir.path());
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}

const std::string k_head = "apps:\n"
                           "  mpd:\n"
                           "    name: MPD\n"
                           "    units: [mpd.service]\n"
                           "    priority: 40\n";

} // namespace

TEST_CASE("the shipped app knowledge names MPD's real-time threads") {
    auto apps = profile::load_apps(std::string(RTPROV_SOURCE_DIR) + "/board-profiles/apps");
    const core::AppKnowledge* mpd = core::find_app(apps, "mpd", "");
    REQUIRE(mpd);
    CHECK(mpd->rt_threads == std::vector<std::string>{"rtio", "output:*"});
    const core::AppKnowledge* pipewire = core::find_app(apps, "pipewire", "");
    REQUIRE(pipewire);
    CHECK(pipewire->rt_threads.empty());
}

TEST_CASE("rt_threads is optional") {
    TempDir dir;
    dir.write("apps.yaml", k_head);
    auto apps = profile::load_apps(dir.path());
    REQUIRE(apps.size() == 1);
    CHECK(apps[0].rt_threads.empty());
}

TEST_CASE("rt_threads must be a list of non-empty names") {
    TempDir dir;
    const std::string file = dir.write("apps.yaml", k_head + "    rt_threads: rtio\n");
    const std::string problem = ": app 'mpd': 'rt_threads' must be a list of thread-name globs "
                                "such as [rtio, \"output:*\"]";
    CHECK(load_error(dir) == file + ":6:17" + problem);

    dir.write("apps.yaml", k_head + "    rt_threads: [rtio, \"\"]\n");
    CHECK(load_error(dir) == file + ":6:24" + problem);

    dir.write("apps.yaml", k_head + "    rt_threads: [rtio, [a]]\n");
    CHECK(load_error(dir) == file + ":6:24" + problem);
}
