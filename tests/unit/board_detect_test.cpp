// SPDX-License-Identifier: Apache-2.0
// First boot's board detection with the built-in profiles, on sysroots shaped like each
// board's: /proc/device-tree/model (NUL-terminated, as the kernel gives it), os-release
// and the CPUs online.
#include "provisioner/core/board_match.hpp"
#include "provisioner/live/board_facts.hpp"
#include "provisioner/profile/profile_loader.hpp"

#include "tests/unit/catch.hpp"
#include "tests/unit/temp_dir.hpp"

#include <string>
#include <vector>

using namespace rtprov;

namespace {

// The built-in profiles' board.match, as first boot gathers them.
std::vector<core::BoardCandidate> builtin_candidates() {
    const profile::SearchPath path = {
        {std::string(RTPROV_SOURCE_DIR) + "/board-profiles", "built-in"}};
    std::vector<core::BoardCandidate> candidates;
    for (const profile::ProfileEntry& entry : profile::list_profiles(path))
        candidates.push_back({entry.name, profile::load_profile(entry.name, path).board.match});
    return candidates;
}

// The profile detection picks on a Raspberry Pi OS trixie sysroot of this model.
std::string detected_pi(const std::string& model) {
    TempDir sys;
    sys.write("proc/device-tree/model", model + std::string(1, '\0'));
    sys.write("usr/lib/os-release", "ID=debian\nVERSION_CODENAME=trixie\n");
    sys.write("sys/devices/system/cpu/present", "0-3\n");
    sys.write("sys/devices/system/cpu/online", "0-3\n");
    return core::choose_board(builtin_candidates(), live::read_board_facts(sys.path()));
}

} // namespace

TEST_CASE("first boot tells the Raspberry Pi boards apart by their device-tree model") {
    CHECK(detected_pi("Raspberry Pi 5 Model B Rev 1.0") == "pi5");
    CHECK(detected_pi("Raspberry Pi 500 Rev 1.0") == "pi5");
    CHECK(detected_pi("Raspberry Pi Compute Module 5 Rev 1.0") == "pi5");
    CHECK(detected_pi("Raspberry Pi 4 Model B Rev 1.5") == "pi4");
    CHECK(detected_pi("Raspberry Pi 400 Rev 1.0") == "pi4");
    CHECK(detected_pi("Raspberry Pi Compute Module 4 Rev 1.1") == "pi4");
    CHECK(detected_pi("Raspberry Pi 3 Model B Plus Rev 1.3") == "pi3");
    CHECK(detected_pi("Raspberry Pi 3 Model A Plus Rev 1.1") == "pi3");
    CHECK(detected_pi("Raspberry Pi Zero 2 W Rev 1.0") == "pi02");
}

TEST_CASE("a board no built-in profile names is refused, not guessed") {
    // a Pi 1 on Debian: not the x86 profile, which wants a PC's DMI product name
    CHECK_THROWS_WITH(detected_pi("Raspberry Pi Model B Rev 2"),
                      Catch::Matchers::StartsWith("no profile's board.match fits this machine"));
    TempDir pc;
    pc.write("sys/class/dmi/id/product_name", "Standard PC (Q35 + ICH9, 2009)\n");
    pc.write("usr/lib/os-release", "ID=debian\n");
    pc.write("sys/devices/system/cpu/present", "0-3\n");
    pc.write("sys/devices/system/cpu/online", "0-3\n");
    CHECK(core::choose_board(builtin_candidates(), live::read_board_facts(pc.path())) ==
          "x86-debian13");
}

TEST_CASE("each Pi profile writes its RT kernel under its own config.txt filter") {
    const profile::SearchPath path = {
        {std::string(RTPROV_SOURCE_DIR) + "/board-profiles", "built-in"}};
    CHECK(profile::load_profile("pi4", path).board.boot.config_filter == "pi4");
    CHECK(profile::load_profile("pi5", path).board.boot.config_filter == "pi5");
    CHECK(profile::load_profile("pi3", path).board.boot.config_filter == "pi3");
    CHECK(profile::load_profile("pi02", path).board.boot.config_filter == "pi02");
    const core::Profile pi5 = profile::load_profile("pi5", path);
    CHECK(pi5.board.kernel.packages == std::vector<std::string>{"linux-image-rpi-2712"});
    CHECK(pi5.board.kernel.rt_image == "kernel8_rt.img");
    CHECK(pi5.tuning == profile::load_profile("pi4", path).tuning); // all of it the Pi 4's
}
