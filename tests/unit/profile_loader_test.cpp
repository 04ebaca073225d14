// SPDX-License-Identifier: Apache-2.0
#include "provisioner/profile/profile_loader.hpp"

#include "provisioner/core/error.hpp"
#include "tests/unit/catch.hpp"
#include "tests/unit/temp_dir.hpp"

#include <algorithm>
#include <iterator>

using namespace rtprov;
using profile::load_profile;
using profile::Override;
using profile::SearchPath;

namespace {

const std::string k_builtin = std::string(RTPROV_SOURCE_DIR) + "/board-profiles";

// The error text load_profile() throws for 'yaml' saved as t.yaml in 'dir'.
std::string error_for(const TempDir& dir, const std::string& yaml,
                      const std::vector<Override>& overrides = {}) {
    std::string file = dir.write("t.yaml", yaml);
    try {
        load_profile(file, {{dir.path(), "test"}}, overrides);
    } catch (const Error& e) {
        std::string message = e.what();
        // Make paths stable: the temp dir differs per run.
        for (std::size_t at; (at = message.find(dir.path() + "/")) != std::string::npos;)
            message.erase(at, dir.path().size() + 1);
        return message;
    }
    FAIL("no error for:\n" << yaml);
    return "";
}

} // namespace

TEST_CASE("the built-in profiles load and validate") {
    SearchPath path{{k_builtin, "built-in"}};
    core::Profile pi4 = load_profile("pi4", path);
    CHECK(pi4.name == "pi4");
    CHECK(pi4.board.cpus == 4u);
    CHECK(pi4.board.boot.loader == core::BootLoader::rpi_firmware);
    CHECK(pi4.tuning.cores.reserved == core::CpuList({3}));
    CHECK(pi4.tuning.cores.housekeeping == core::CpuList({0, 1, 2}));
    CHECK(pi4.tuning.kernel.nohz_full == core::KernelFeature::automatic);
    CHECK(pi4.board.kernel.rt_packages == std::vector<std::string>{"linux-image-rpi-v8-rt"});

    core::Profile x86 = load_profile("x86-debian13", path);
    CHECK_FALSE(x86.board.cpus);
    CHECK_FALSE(x86.tuning.cores.reserved);
    CHECK(x86.board.boot.loader == core::BootLoader::grub);
    REQUIRE(x86.tuning.services.size() == 1);
    CHECK(x86.tuning.services[0].unit == "mpd.service");
    CHECK_FALSE(x86.tuning.services[0].policy); // app
    auto cores = core::resolve_cores(x86, 4u);
    REQUIRE(cores);
    CHECK(cores->reserved.to_string() == "2-3");
}

TEST_CASE("an unknown key is refused with a did-you-mean") {
    TempDir dir;
    CHECK(error_for(dir, "tuning:\n  kernel:\n    isolcpu: [domain]\n") ==
          "t.yaml:3:5: unknown key 'isolcpu', did you mean 'isolcpus'?");
    CHECK(error_for(dir, "board:\n  frobnicate: 1\n") ==
          "t.yaml:2:3: unknown key 'frobnicate'; known keys: model, match, cpus, boot, kernel");
}

TEST_CASE("wrong types name the key and the expected type") {
    TempDir dir;
    CHECK(error_for(dir, "board:\n  cpus: four\n") ==
          "t.yaml:2:9: 'board.cpus' must be a whole number, not 'four'");
    CHECK(error_for(dir, "tuning:\n  rt_push_ipi_guard: yes please\n") ==
          "t.yaml:2:22: 'tuning.rt_push_ipi_guard' must be true or false, not 'yes please'");
    CHECK(error_for(dir, "tuning:\n  reserve_method: isolate\n") ==
          "t.yaml:2:19: 'tuning.reserve_method' must be one of 'isolcpus', 'cpuset', 'none', "
          "not 'isolate'");
    CHECK(error_for(dir, "board: [1, 2]\n") == "t.yaml:1:8: 'board' must be a map of keys");
}

TEST_CASE("malformed CPU lists point at the value") {
    TempDir dir;
    CHECK(error_for(dir, "tuning:\n  cores:\n    reserved: 3-1\n") ==
          "t.yaml:3:15: malformed CPU list in 'tuning.cores.reserved': range '3-1' runs "
          "backwards");
}

TEST_CASE("overlapping cores, a missing housekeeping core and the CPU count are refused") {
    TempDir dir;
    CHECK(error_for(dir, "board:\n  cpus: 4\ntuning:\n  cores:\n    housekeeping: 0-2\n"
                         "    reserved: 2-3\n") ==
          "t.yaml:6:15: reserved CPUs '2-3' overlap housekeeping CPUs '0-2' on CPU 2; a core is "
          "either housekeeping or reserved");
    CHECK(error_for(dir, "board:\n  cpus: 4\ntuning:\n  cores:\n    housekeeping: ''\n"
                         "    reserved: 0-3\n") ==
          "t.yaml:5:19: no housekeeping core: keep at least one core for the system, "
          "interrupts and kernel housekeeping");
    CHECK(error_for(dir, "board:\n  cpus: 4\ntuning:\n  cores:\n    reserved: 3-4\n") ==
          "t.yaml:5:15: CPU 4 is beyond the board's 4 CPUs (0-3)");
}

TEST_CASE("priorities outside 1-99 are refused") {
    TempDir dir;
    CHECK(error_for(dir, "tuning:\n  services:\n    jackd:\n      policy: fifo\n"
                         "      priority: 100\n") ==
          "t.yaml:5:17: priority 100 is outside 1-99 (the range of SCHED_FIFO and SCHED_RR)");
}

TEST_CASE("every problem is reported, not just the first") {
    TempDir dir;
    CHECK(error_for(dir, "board:\n  cpus: x\n  modle: y\n") ==
          "t.yaml:3:3: unknown key 'modle', did you mean 'model'?\n"
          "t.yaml:2:9: 'board.cpus' must be a whole number, not 'x'");
}

TEST_CASE("YAML syntax errors and duplicate keys carry file, line and column") {
    TempDir dir;
    CHECK(error_for(dir, "board:\n  cpus: [1, 2\n") ==
          "t.yaml:3:1: end of sequence flow not found");
    CHECK(error_for(dir, "board:\n  cpus: 4\n  cpus: 2\n") ==
          "t.yaml:3:3: key 'cpus' appears twice");
}

TEST_CASE("extends merges the base first and the child's keys win") {
    TempDir dir;
    dir.write("base.yaml", "description: base\nboard:\n  cpus: 4\n  model: Base\n"
                           "tuning:\n  cores:\n    reserved: 3\n  services:\n    mpd: {}\n");
    dir.write("child.yaml", "extends: base\nboard:\n  model: Child\ntuning:\n  cores:\n"
                            "    reserved: 2-3\n  services:\n    mpd: ~\n    jackd: {}\n");
    core::Profile p = load_profile("child", {{dir.path(), "test"}});
    CHECK(p.name == "child");
    CHECK(p.description == "base");
    CHECK(p.board.model == "Child");
    CHECK(p.board.cpus == 4u);
    CHECK(p.tuning.cores.reserved == core::CpuList({2, 3}));
    REQUIRE(p.tuning.services.size() == 1);
    CHECK(p.tuning.services[0].name == "jackd");
    CHECK(p.sources.size() == 2);
    CHECK(p.sources[0].ends_with("base.yaml"));
}

TEST_CASE("a user profile can extend the built-in profile of the same name") {
    TempDir dir;
    dir.write("pi4.yaml", "extends: pi4\ndescription: my pi\n");
    core::Profile p = load_profile("pi4", {{dir.path(), "user"}, {k_builtin, "built-in"}});
    CHECK(p.description == "my pi");
    CHECK(p.board.cpus == 4u);
    CHECK(p.tuning.cores.reserved == core::CpuList({3}));
}

TEST_CASE("an extends loop is an error, not a hang") {
    TempDir dir;
    dir.write("a.yaml", "extends: b\n");
    dir.write("b.yaml", "extends: a\n");
    CHECK_THROWS_AS(load_profile("a", {{dir.path(), "test"}}), Error);
}

TEST_CASE("--set overrides single keys and its errors name the option") {
    TempDir dir;
    dir.write("t.yaml", "board:\n  cpus: 4\n");
    core::Profile p = load_profile("t", {{dir.path(), "test"}},
                                   {{"tuning.cores.reserved=2-3"},
                                    {"tuning.services.mpd.limit_rtprio=50"},
                                    {"board.model=X"}});
    CHECK(p.tuning.cores.reserved == core::CpuList({2, 3}));
    REQUIRE(p.tuning.services.size() == 1);
    CHECK(p.tuning.services[0].limit_rtprio == 50);
    CHECK(p.board.model == "X");

    CHECK(error_for(dir, "board:\n  cpus: 4\n", {{"tuning.cores.reserved=2-x"}}) ==
          "--set 'tuning.cores.reserved=2-x': malformed CPU list in 'tuning.cores.reserved': "
          "'x' is not a CPU number");
    CHECK(error_for(dir, "{}\n", {{"tuning.kernel.isolcpu=[domain]"}}) ==
          "--set 'tuning.kernel.isolcpu=[domain]': unknown key 'isolcpu', did you mean "
          "'isolcpus'?");
    CHECK(error_for(dir, "{}\n", {{"no-equals-sign"}}) ==
          "--set 'no-equals-sign': expected KEY=VALUE, e.g. 'tuning.cores.reserved=2-3'");
}

TEST_CASE("an unknown profile name says where it looked") {
    TempDir dir;
    try {
        load_profile("nope", {{dir.path(), "test"}});
        FAIL("no error");
    } catch (const Error& e) {
        CHECK(std::string(e.what()) ==
              "no profile 'nope' in '" + dir.path() + "'; 'rtprov profiles' lists the known ones");
    }
}

TEST_CASE("to_yaml round-trips every built-in profile") {
    SearchPath path{{k_builtin, "built-in"}};
    for (const char* name : {"pi4", "x86-debian13"}) {
        core::Profile p = load_profile(name, path);
        std::string yaml = profile::to_yaml(p);
        core::Profile again = profile::parse_profile(yaml, "profile.yaml");
        CHECK(profile::to_yaml(again) == yaml);
        CHECK(again.tuning.cores == p.tuning.cores);
    }
}

TEST_CASE("list_profiles marks a profile hidden by an earlier folder") {
    TempDir dir;
    dir.write("pi4.yaml", "description: mine\n");
    auto entries = profile::list_profiles({{dir.path(), "user"}, {k_builtin, "built-in"}});
    REQUIRE(entries.size() >= 3);
    auto first = std::find_if(entries.begin(), entries.end(),
                              [](const profile::ProfileEntry& e) { return e.name == "pi4"; });
    REQUIRE(std::distance(first, entries.end()) >= 2);
    CHECK(first->label == "user");
    CHECK_FALSE(first->hidden);
    CHECK(first[1].name == "pi4");
    CHECK(first[1].hidden);
}

TEST_CASE("anchors and aliases are refused before they can grow") {
    TempDir dir;
    const std::string why = "anchors and aliases ('&name', '*name') are not used in rtprov's "
                            "YAML; write the value out, or share it with 'extends:'";
    CHECK(error_for(dir, "tuning: &t {x: *t}\n") == "t.yaml:1:9: " + why);
    CHECK(error_for(dir, "tuning: {}\nboard: *t\n") == "t.yaml:2:8: " + why);
    CHECK(error_for(dir, "tuning: [a, *t]\n") == "t.yaml:1:13: " + why);
    CHECK(error_for(dir, "{}\n", {{"tuning=[&a [*a,*a]]"}}) ==
          "--set 'tuning=[&a [*a,*a]]': value is not valid YAML: " + why);
}

TEST_CASE("input on which yaml-cpp's LoadAll loops forever is refused") {
    // jbeder/yaml-cpp#1040: a lone ',' made a "document" at the same place for ever.
    TempDir dir;
    CHECK(error_for(dir, ",") ==
          "t.yaml:1:1: unexpected ',': this is not YAML that rtprov can read");
    CHECK(error_for(dir, "{}\n", {{"tuning.kernel.extra=,"}}) ==
          "--set 'tuning.kernel.extra=,': value is not valid YAML: unexpected ',': this is not "
          "YAML that rtprov can read");
    CHECK(error_for(dir, "[:") == "t.yaml:1:2: unknown token");
}

TEST_CASE(
    "tags, deep nesting, NUL bytes, bytes that are not UTF-8 and oversized text are refused") {
    TempDir dir;
    CHECK(error_for(dir, "description: !!str x\n") ==
          "t.yaml:1:14: tags ('tag:yaml.org,2002:str') are not used in rtprov's YAML; remove it");
    CHECK(error_for(dir, std::string(40, '[') + std::string(40, ']')) ==
          "t.yaml:1:33: nesting deeper than 32 levels");
    CHECK(error_for(dir, std::string("description: a\0b\n", 17)) ==
          "t.yaml:1:15: a NUL byte; YAML is text");
    // Latin-1 'é', a lone continuation byte and a surrogate half: the first bad byte counts
    CHECK(error_for(dir, "description: caf\xe9\n") ==
          "t.yaml:1:17: a byte that is not UTF-8 (0xE9); YAML is UTF-8 text: write it as "
          "UTF-8");
    CHECK(error_for(dir, "# \xc3\xa9t\xc3\xa9\nboard:\n  model: \"\xc3\xa9\x80\"\n") ==
          "t.yaml:3:12: a byte that is not UTF-8 (0x80); YAML is UTF-8 text: write it as "
          "UTF-8");
    CHECK(error_for(dir, "description: \xed\xa0\x80\n") ==
          "t.yaml:1:14: a byte that is not UTF-8 (0xED); YAML is UTF-8 text: write it as "
          "UTF-8");
    // UTF-8 passes: the error is the unknown key's
    CHECK(error_for(dir, "description: \xc3\xa9t\xc3\xa9 \xf0\x9f\x8e\xb5\nbogus: 1\n")
              .find("not UTF-8") == std::string::npos);
    std::string many = "description: x\nboard:\n  match:\n    os_id: [";
    for (int i = 0; i < 70000; ++i)
        many += "a,";
    many += "a]\n";
    CHECK(error_for(dir, many) == "t.yaml:4:131084: more than 65536 values: rtprov's YAML is a "
                                  "short file");
    std::string huge = "description: \"" + std::string((1u << 20) + 1, 'x') + "\"\n";
    CHECK(error_for(dir, huge) == "'t.yaml' is 1048593 bytes, more than the 1048576 bytes "
                                  "rtprov reads of a configuration file; is it the right "
                                  "file? Nothing was changed");
}

TEST_CASE("a second YAML document is refused, not ignored") {
    TempDir dir;
    CHECK(error_for(dir, "description: one\n---\ntuning: {bogus: 1}\n") ==
          "t.yaml:3:1: a profile is one YAML document; remove the '---' and what follows, or "
          "put it in its own file");
}

TEST_CASE("--set KEY=~ removes the key") {
    TempDir dir;
    dir.write("t.yaml", "board:\n  cpus: 4\ntuning:\n  cores:\n    reserved: 3\n  services:\n"
                        "    mpd: {}\n");
    core::Profile p = load_profile("t", {{dir.path(), "test"}},
                                   {{"tuning.services.mpd=~"}, {"tuning.cores.reserved=~"}});
    CHECK(p.tuning.services.empty());
    CHECK_FALSE(p.tuning.cores.reserved);
}

TEST_CASE("--set cannot change extends or name") {
    TempDir dir;
    CHECK(error_for(dir, "{}\n", {{"extends=pi4"}}) ==
          "--set 'extends=pi4': 'extends' cannot be set with --set; write a profile file with "
          "'extends:' and pass it to --profile");
    // A key below extends was once set after the chain was merged, and ignored.
    CHECK(error_for(dir, "{}\n", {{"extends.name=pi4"}}) ==
          "--set 'extends.name=pi4': 'extends' cannot be set with --set; write a profile file "
          "with 'extends:' and pass it to --profile");
    CHECK(error_for(dir, "{}\n", {{"name.x=1"}}).find("'name' cannot be set with --set") !=
          std::string::npos);
}

TEST_CASE("a profile outside the search path can extend the built-in one of its name") {
    TempDir dir;
    std::string file = dir.write("pi4.yaml", "extends: pi4\ndescription: outside\n");
    core::Profile p = load_profile(file, {{k_builtin, "built-in"}});
    CHECK(p.description == "outside");
    CHECK(p.board.cpus == 4u);
}

TEST_CASE("tuning.selftest.max_missed_per_mille is read, range-checked and written back") {
    TempDir dir;
    dir.write("t.yaml", "tuning:\n  selftest:\n    max_missed_per_mille: 25\n");
    core::Profile p = load_profile("t", {{dir.path(), "test"}});
    CHECK(p.tuning.selftest.max_missed_per_mille == 25u);
    CHECK(profile::parse_profile(profile::to_yaml(p), "profile.yaml")
              .tuning.selftest.max_missed_per_mille == 25u);
    CHECK(load_profile("t", {{dir.path(), "test"}}, {{"tuning.selftest.max_missed_per_mille=0"}})
              .tuning.selftest.max_missed_per_mille == 0u);
    CHECK(error_for(dir, "tuning:\n  selftest:\n    max_missed_per_mille: 1001\n") ==
          "t.yaml:3:27: 'tuning.selftest.max_missed_per_mille' is 1001, outside 0-1000");
}

TEST_CASE("tuning.health_gate is off by default, read, refused when not a bool, written back") {
    TempDir dir;
    dir.write("t.yaml", "tuning:\n  health_gate: true\n");
    CHECK_FALSE(load_profile("pi4", {{k_builtin, "built-in"}}).tuning.health_gate);
    core::Profile p = load_profile("t", {{dir.path(), "test"}});
    CHECK(p.tuning.health_gate);
    CHECK(profile::to_yaml(p).find("  health_gate: true\n") != std::string::npos);
    CHECK(profile::parse_profile(profile::to_yaml(p), "profile.yaml").tuning.health_gate);
    CHECK_FALSE(load_profile("t", {{dir.path(), "test"}}, {{"tuning.health_gate=false"}})
                    .tuning.health_gate);
    CHECK(error_for(dir, "tuning:\n  health_gate: sometimes\n") ==
          "t.yaml:2:16: 'tuning.health_gate' must be true or false, not 'sometimes'");
    CHECK(error_for(dir, "tuning:\n  health_gates: true\n") ==
          "t.yaml:2:3: unknown key 'health_gates', did you mean 'health_gate'?");
}

TEST_CASE("a problem that spans keys points at the value to change, from a file or --set") {
    TempDir dir;
    CHECK(error_for(dir, "board:\n  cpus: 4\ntuning:\n  reserve_method: isolcpus\n"
                         "  cpuset_partition: true\n") ==
          "t.yaml:5:21: cpuset_partition makes rtprov.slice an isolated partition, which needs "
          "reserve_method: cpuset (it is 'isolcpus')");
    const std::string mpd = "board:\n  cpus: 4\ntuning:\n  services:\n    mpd:\n      nice: 5\n";
    CHECK(error_for(dir, mpd, {{"tuning.services.mpd.nice=40"}}) ==
          "--set 'tuning.services.mpd.nice=40': service 'mpd': nice 40 is outside -20..19");
    CHECK(error_for(dir, mpd + "      limit_rtprio: 100\n      cpus: 7\n") ==
          "t.yaml:7:21: service 'mpd': limit_rtprio 100 is outside 0-99\n"
          "t.yaml:8:13: service 'mpd': CPU 7 is beyond the board's 4 CPUs");
    CHECK(error_for(dir, mpd + "      policy: fifo\n") ==
          "t.yaml:7:15: service 'mpd': policy 'fifo' needs a priority (1-99)");
}

TEST_CASE("every key read is recorded with its origin") {
    TempDir dir;
    std::string file = dir.write("t.yaml", "board:\n  cpus: 4\ntuning:\n  services:\n    mpd:\n"
                                           "      priority: 40\n      policy: fifo\n");
    core::Profile p =
        load_profile(file, {{dir.path(), "test"}}, {{"tuning.selftest.duration_s=3"}});
    CHECK(p.origin_of("board.cpus", {}).to_string() == file + ":2:9");
    CHECK(p.origin_of("tuning.services.mpd.priority", {}).to_string() == file + ":6:17");
    CHECK(p.origin_of("tuning.selftest.duration_s", {}).to_string() ==
          "--set 'tuning.selftest.duration_s=3'");
    CHECK(p.origin_of("tuning.kernel.extra", {"none"}).to_string() == "none");
}

TEST_CASE("a conflict made by a --set points at the --set") {
    TempDir dir;
    const std::string four = "board:\n  cpus: 4\ntuning:\n  cores:\n    reserved: 3\n    "
                             "housekeeping: 0-2\n";
    CHECK(error_for(dir, four, {{"tuning.cores.housekeeping=0-1"}}) ==
          "--set 'tuning.cores.housekeeping=0-1': CPU 2 is neither housekeeping nor reserved; "
          "add it to one of the two lists");
    CHECK(error_for(dir, four, {{"board.cpus=3"}}) ==
          "--set 'board.cpus=3': CPU 3 is beyond the board's 3 CPUs (0-2)");
    CHECK(error_for(dir, four, {{"tuning.cores.housekeeping=0-3"}}) ==
          "--set 'tuning.cores.housekeeping=0-3': reserved CPUs '3' overlap housekeeping CPUs "
          "'0-3' on CPU 3; a core is either housekeeping or reserved");
    // Both from the file: the reserved list, as before.
    CHECK(error_for(dir, "board:\n  cpus: 4\ntuning:\n  cores:\n    reserved: 3\n    "
                         "housekeeping: 0-1\n") ==
          "t.yaml:5:15: CPU 2 is neither housekeeping nor reserved; add it to one of the two "
          "lists");
}

TEST_CASE("every bad item of a list is reported, and values are shown escaped") {
    TempDir dir;
    CHECK(error_for(dir, "tuning:\n  kernel:\n    isolcpus: [nohz, bogus, bad2]\n") ==
          "t.yaml:3:22: 'tuning.kernel.isolcpus' holds 'bogus': unknown isolcpus flag; the "
          "kernel knows 'nohz', 'domain', 'managed_irq'\n"
          "t.yaml:3:29: 'tuning.kernel.isolcpus' holds 'bad2': unknown isolcpus flag; the kernel "
          "knows 'nohz', 'domain', 'managed_irq'");
    const std::string error = error_for(dir, "{}\n", {{"tuning.kernel.nohz_full=\"o\\nn\""}});
    CHECK(error.find('\n') == std::string::npos);
    CHECK(error.ends_with("not 'o\\nn'"));
    CHECK(error_for(dir, "tuning:\n  \"ke\\ny\": 1\n")
              .starts_with("t.yaml:2:3: unknown key 'ke\\ny'"));
}

TEST_CASE("removing a key that is not there with --set changes nothing") {
    SearchPath path{{k_builtin, "built-in"}};
    const std::string plain = profile::to_yaml(load_profile("pi4", path));
    CHECK(profile::to_yaml(load_profile("pi4", path, {{"tuning.services.jack.policy="}})) == plain);
    CHECK(profile::to_yaml(load_profile("pi4", path, {{"tuning.nothing.here="}})) == plain);
}
