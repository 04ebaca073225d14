// SPDX-License-Identifier: Apache-2.0
#include "provisioner/target/state_file.hpp"

#include "provisioner/core/error.hpp"
#include "provisioner/core/sha256.hpp"
#include "tests/unit/catch.hpp"

#include <sstream>

using namespace rtprov::target;
using rtprov::Error;

namespace {

State sample() {
    State s;
    s.status = ApplyStatus::applied;
    s.profile = "pi4";
    s.profile_sha256 = std::string(64, 'a');
    s.applied_at = "2026-11-29T12:00:00Z";
    s.state_dir_created = true;
    s.created_dirs = {"/etc/rtprov", "/etc/with space"};
    s.loader = "rpi-firmware";
    auto file = [](std::string path, bool created, std::string sha, std::string original,
                   std::string previous) {
        ManagedFile f;
        f.path = std::move(path);
        f.created = created;
        f.sha256 = std::move(sha);
        f.original_sha256 = std::move(original);
        f.previous_sha256 = std::move(previous);
        return f;
    };
    s.files = {file("/etc/rtprov/profile.yaml", true, std::string(64, 'b'), "", ""),
               file("/boot/firmware/cmdline.txt", false, std::string(64, 'c'), std::string(64, 'd'),
                    std::string(64, '1')),
               file("/etc/x", true, std::string(64, 'c'), "", std::string(64, '2')),
               file("/etc/with space/100%", true, std::string(64, 'e'), "", "")};
    s.files[1].cmdline = rtprov::core::CmdlineEdit{
        true, {"isolcpus", "irqaffinity"}, {"isolcpus=managed_irq,domain,3", "irqaffinity=0-2"}};
    return s;
}

std::string error_of(const std::string& text) {
    try {
        parse_state(text, "state");
    } catch (const Error& e) {
        return e.what();
    }
    return "no error";
}

const std::string k_fix = "; if the target was never provisioned by rtprov, move the file away; "
                          "otherwise restore it from a copy of the image";

} // namespace

TEST_CASE("the state file round-trips, odd paths included") {
    State s = sample();
    CHECK(parse_state(serialize_state(s), "state") == s);
}

TEST_CASE("a managed file is ours with what rtprov wrote, kept or is about to replace") {
    ManagedFile changed;
    changed.path = "/f";
    changed.sha256 = "new";
    changed.original_sha256 = "orig";
    changed.previous_sha256 = "prev";
    CHECK(changed.is_ours(std::string("new")));
    CHECK(changed.is_ours(std::string("orig")));
    CHECK(changed.is_ours(std::string("prev")));
    CHECK_FALSE(changed.is_ours(std::string("hand")));
    CHECK_FALSE(changed.is_ours(std::nullopt));
    ManagedFile created;
    created.path = "/g";
    created.created = true;
    created.sha256 = "new";
    CHECK(created.is_ours(std::nullopt));
    CHECK_FALSE(created.is_ours(std::string("")));
    CHECK_FALSE(created.is_ours(std::string("hand")));
}

TEST_CASE("a foreign file is recognised as foreign") {
    CHECK(error_of("hello world\n") ==
          "state: not an rtprov state file (no 'format rtprov-state 1' line)" + k_fix);
    CHECK(error_of("") ==
          "state: not an rtprov state file (no 'format rtprov-state 1' line)" + k_fix);
}

TEST_CASE("a state file from a newer rtprov says so") {
    CHECK(error_of("format rtprov-state 2\n") ==
          "state:1: state file has 'format rtprov-state 2', written by a newer rtprov; use "
          "that version to roll back or update rtprov");
}

TEST_CASE("a damaged or hand-edited state file is refused, never trusted") {
    std::string text = serialize_state(sample());
    std::string edited = text;
    edited.replace(edited.find("profile pi4"), 11, "profile pi5");
    CHECK(error_of(edited) == "state:16: checksum does not match the contents: the state file "
                              "was damaged or edited by hand" +
                                  k_fix);
    std::string truncated = text.substr(0, text.size() / 2);
    CHECK_THROWS_AS(parse_state(truncated, "state"), Error);
    std::string no_checksum = text.substr(0, text.find("checksum"));
    CHECK(error_of(no_checksum) ==
          "state: state file has no checksum line; it is truncated or damaged" + k_fix);
}

TEST_CASE("every truncation of a state file is an error") {
    std::string text = serialize_state(sample());
    for (std::size_t n = 0; n < text.size(); ++n)
        CHECK_THROWS_AS(parse_state(text.substr(0, n), "state"), Error);
}

TEST_CASE("a state without its profile checksum or time is refused, as it would not round-trip") {
    // The file as a hand would write it: no profile-sha256 line, a checksum that matches.
    std::string body;
    std::istringstream in(serialize_state(sample()));
    for (std::string line; std::getline(in, line);)
        if (line.rfind("profile-sha256 ", 0) != 0 && line.rfind("checksum ", 0) != 0 &&
            line.rfind("#", 0) != 0)
            body += line + "\n";
    std::string text = body + "checksum " + rtprov::core::sha256_hex(body) + "\n";
    CHECK(error_of(text) == "state: state file lacks its status, state-dir, profile, "
                            "profile-sha256 or applied-at line" +
                                k_fix);
}

TEST_CASE("a forged state's profile name or time that apply never records is refused") {
    // a state with a matching checksum, as anyone can write one, with one line replaced
    auto forged = [](const std::string& key, const std::string& value) {
        std::string body;
        std::istringstream in(serialize_state(sample()));
        for (std::string line; std::getline(in, line);)
            if (line.rfind("checksum ", 0) != 0 && line.rfind("#", 0) != 0)
                body += (line.rfind(key + " ", 0) == 0 ? key + " " + value : line) + "\n";
        return body + "checksum " + rtprov::core::sha256_hex(body) + "\n";
    };
    CHECK(error_of(forged("profile", "pi4")) == "no error");
    CHECK(error_of(forged("profile", "x86-debian13%0Aall%20files%20as%20written"))
              .find("a profile name that is not one (a profile name holds only letters") !=
          std::string::npos);
    CHECK(error_of(forged("profile", "x%22y%5Cz")).find("a profile name that is not one") !=
          std::string::npos);
    CHECK(error_of(forged("applied-at", "2026-11-29T12:00:00Z")) == "no error");
    CHECK(error_of(forged("applied-at", "12026-11-29T12:00:00Z")) == "no error");
    for (const char* bad :
         {"2026\"},{\"x\":1", "2026-11-29T12:00:00", "26-11-29T12:00:00Z", "2026-1a-29T12:00:00Z"})
        CHECK(error_of(forged("applied-at", bad)).find("a time that is not YYYY-MM-DDTHH:MM:SSZ") !=
              std::string::npos);
}

TEST_CASE("a forged state's path or boot loader that apply never records is refused") {
    // 'status', 'plan' and 'apply' print the paths: one with a line break would forge lines
    auto forged = [](const std::string& key, const std::string& value) {
        std::string body;
        bool done = false;
        std::istringstream in(serialize_state(sample()));
        for (std::string line; std::getline(in, line);) {
            if (line.rfind("checksum ", 0) == 0 || line.rfind("#", 0) == 0)
                continue;
            const bool replace = !done && line.rfind(key + " ", 0) == 0;
            done = done || replace;
            body += (replace ? key + " " + value : line) + "\n";
        }
        return body + "checksum " + rtprov::core::sha256_hex(body) + "\n";
    };
    const std::string sha = " created " + std::string(64, 'b');
    CHECK(error_of(forged("file", "/etc/rtprov/profile.yaml" + sha)) == "no error");
    CHECK(error_of(forged("file", "/etc/Ger%C3%A4t" + sha)) == "no error");
    for (const char* path : {"/etc/x%0Aresult:%20passed", "/etc/x%1B[2J", "/etc/x%0D", "/etc/%FF",
                             "/etc/x%C2%9B", "/etc/x%7F"}) {
        INFO(path);
        CHECK(error_of(forged("file", path + sha)).find("bad file path") != std::string::npos);
        CHECK(error_of(forged("dir", path)).find("bad folder path") != std::string::npos);
    }
    for (const char* loader : {"grub", "rpi-firmware", "systemd-boot", "raspi-firmware"})
        CHECK(error_of(forged("loader", loader)) == "no error");
    for (const char* loader : {"grub%0Aresult:%20passed", "lilo", "Grub"}) {
        INFO(loader);
        CHECK(error_of(forged("loader", loader)).find("a boot loader rtprov does not write for") !=
              std::string::npos);
    }
}
