// SPDX-License-Identifier: Apache-2.0
#include "provisioner/player/stack_conf.hpp"

#include "provisioner/player/spa_json.hpp"
#include "provisioner/player/unit_syntax.hpp"
#include "tests/unit/catch.hpp"
#include "tests/unit/temp_dir.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>

using namespace rtprov;
using namespace rtprov::player;

namespace {

// A target's files, for ReadFile and ListDir.
struct FakeFiles {
    std::map<std::string, std::string> files;

    ReadFile reader() const {
        return [this](const std::string& path) {
            const auto it = files.find(path);
            if (it == files.end())
                return core::Result<std::string>::failed(
                    "cannot read '" + path + "': No such file or directory", true);
            return core::Result<std::string>{it->second, "", false};
        };
    }
    ListDir lister() const {
        return [this](const std::string& dir) {
            std::vector<std::string> names;
            for (const auto& [path, content] : files)
                if (path.rfind(dir + "/", 0) == 0 &&
                    path.find('/', dir.size() + 1) == std::string::npos)
                    names.push_back(path.substr(dir.size() + 1));
            std::sort(names.begin(), names.end());
            return names;
        };
    }
};

// The lines of Debian's /etc/default/squeezelite that matter here, as both squeezelite
// 1.9.9 (Debian 12) and 2.0.0 (Debian 13) ship them.
const std::string k_debian_squeezelite = R"sh(# Defaults for squeezelite initscript
# sourced by /etc/init.d/squeezelite
# installed at /etc/default/squeezelite by the maintainer scripts

# The name for the squeezelite player:
SL_NAME="$(hostname -s)"

# ALSA output device:
#SL_SOUNDCARD="default:CARD=Set"

# Additional options to pass to squeezelite:
# Please do not include -z to make squeezelite daemonise itself.
#SB_EXTRA_ARGS=""
)sh";

const std::string k_path = "/etc/default/squeezelite";

std::string squeezelite_problem(const std::string& text) {
    const auto read = read_squeezelite_alsa(text, k_path);
    REQUIRE_FALSE(read);
    const auto set = set_squeezelite_alsa(text, k_path, 20, 4);
    REQUIRE_FALSE(set);
    CHECK(set.problem == read.problem);
    return read.problem;
}

std::string set_squeezelite(const std::string& text, unsigned buffer_ms, unsigned periods) {
    const auto set = set_squeezelite_alsa(text, k_path, buffer_ms, periods);
    INFO(set.problem);
    REQUIRE(set);
    return *set;
}

// What sh makes of SB_EXTRA_ARGS in 'text', as /etc/init.d/squeezelite sources it.
std::string sourced_options(const std::string& text) {
    TempDir dir;
    dir.write("default", text);
    const std::string run =
        ". " + dir.path() + "/default; printf '%s' \"$SB_EXTRA_ARGS\" > " + dir.path() + "/out";
    REQUIRE(std::system(("sh -c '" + run + "'").c_str()) == 0);
    return dir.read("out");
}

} // namespace

// ---- squeezelite

TEST_CASE("Debian's squeezelite defaults have no -a, and SB_EXTRA_ARGS is added after its "
          "commented-out line",
          "[stack-conf]") {
    const auto read = read_squeezelite_alsa(k_debian_squeezelite, k_path);
    REQUIRE(read);
    CHECK(read->variable == "SB_EXTRA_ARGS");
    CHECK(read->line == 0);
    CHECK_FALSE(read->value);

    CHECK(set_squeezelite(k_debian_squeezelite, 20, 4) ==
          k_debian_squeezelite + "SB_EXTRA_ARGS=\"-a 20:4\"\n");
    // In the middle of a file, the new line goes right after the commented-out one.
    const std::string middle = "#SB_EXTRA_ARGS=\"\"\nSL_NAME=box\n";
    CHECK(set_squeezelite(middle, 20, 4) ==
          "#SB_EXTRA_ARGS=\"\"\nSB_EXTRA_ARGS=\"-a 20:4\"\nSL_NAME=box\n");
    // Without one, at the end, after a newline the file lacked.
    CHECK(set_squeezelite("SL_NAME=box", 20, 4) == "SL_NAME=box\nSB_EXTRA_ARGS=\"-a 20:4\"\n");
    CHECK(set_squeezelite("", 20, 4) == "SB_EXTRA_ARGS=\"-a 20:4\"\n");
    // After a file that ends in a line continuation, an empty line first, or the new line
    // would join the last one (fuzz_stack_conf found 'Y=\' then a newline).
    const std::string continued = set_squeezelite("Y=\\\n", 20, 4);
    CHECK(continued == "Y=\\\n\nSB_EXTRA_ARGS=\"-a 20:4\"\n");
    CHECK(sourced_options(continued) == "-a 20:4");
    // A '#SB_EXTRA_ARGS=' line inside a quoted value is no comment: nothing goes after it.
    const std::string quoted = "SL_NAME=\"x\n#SB_EXTRA_ARGS=\"\"\n\"\n";
    CHECK(set_squeezelite(quoted, 20, 4) == quoted + "SB_EXTRA_ARGS=\"-a 20:4\"\n");
    CHECK(sourced_options(set_squeezelite(quoted, 20, 4)) == "-a 20:4");

    const std::string written = set_squeezelite(k_debian_squeezelite, 20, 4);
    CHECK(sourced_options(written) == "-a 20:4");
    const auto again = read_squeezelite_alsa(written, k_path);
    REQUIRE(again);
    CHECK(again->line == 14);
    CHECK(again->value == "20:4");
}

TEST_CASE("an -a already there has its buffer and periods replaced, every other byte kept",
          "[stack-conf]") {
    const std::string before = "SL_NAME=box  # the player\n"
                               "SB_EXTRA_ARGS=\"-o hw:CARD=DAC -a 40:4::1 -C 5\"   # tuned\n"
                               "SB_SERVER_IP=10.0.0.2\n";
    const auto read = read_squeezelite_alsa(before, k_path);
    REQUIRE(read);
    CHECK(read->line == 2);
    CHECK(read->value == "40:4::1");
    const std::string after = set_squeezelite(before, 20, 2);
    CHECK(after == "SL_NAME=box  # the player\n"
                   "SB_EXTRA_ARGS=\"-o hw:CARD=DAC -a 20:2::1 -C 5\"   # tuned\n"
                   "SB_SERVER_IP=10.0.0.2\n");
    CHECK(sourced_options(after) == "-o hw:CARD=DAC -a 20:2::1 -C 5");
    // Setting back what was there gives every byte back.
    CHECK(set_squeezelite(after, 40, 4) == before);

    CHECK(set_squeezelite("SB_EXTRA_ARGS='-a 40'\n", 20, 2) == "SB_EXTRA_ARGS='-a 20:2'\n");
    CHECK(set_squeezelite("SB_EXTRA_ARGS=\"-a :4:16\"\n", 20, 2) ==
          "SB_EXTRA_ARGS=\"-a 20:2:16\"\n");
    // squeezelite takes the last -a: that one is read and changed.
    const std::string twice = "SB_EXTRA_ARGS=\"-a 80:4 -a 40:4\"\n";
    CHECK(read_squeezelite_alsa(twice, k_path)->value == "40:4");
    CHECK(set_squeezelite(twice, 20, 2) == "SB_EXTRA_ARGS=\"-a 80:4 -a 20:2\"\n");
}

TEST_CASE("without -a, ' -a B:P' goes inside the value's closing quote", "[stack-conf]") {
    CHECK(set_squeezelite("SB_EXTRA_ARGS=\"-C 5\"\n", 20, 2) == "SB_EXTRA_ARGS=\"-C 5 -a 20:2\"\n");
    CHECK(set_squeezelite("SB_EXTRA_ARGS='-D'\n", 20, 2) == "SB_EXTRA_ARGS='-D -a 20:2'\n");
    CHECK(set_squeezelite("SB_EXTRA_ARGS=\"\"\n", 20, 2) == "SB_EXTRA_ARGS=\"-a 20:2\"\n");
    // An unquoted value gets a quoted tail, so that the blank stays in it.
    const std::string bare = set_squeezelite("SB_EXTRA_ARGS=-D\n", 20, 2);
    CHECK(bare == "SB_EXTRA_ARGS=-D\" -a 20:2\"\n");
    CHECK(sourced_options(bare) == "-D -a 20:2");
    CHECK(set_squeezelite("SB_EXTRA_ARGS=\n", 20, 2) == "SB_EXTRA_ARGS=\"-a 20:2\"\n");
    // A value over two lines, joined by the shell's line continuation inside quotes.
    const std::string continued = "SB_EXTRA_ARGS=\"-C 5 \\\n-D\"\n";
    CHECK(read_squeezelite_alsa(continued, k_path)->line == 1);
    CHECK(set_squeezelite(continued, 20, 2) == "SB_EXTRA_ARGS=\"-C 5 \\\n-D -a 20:2\"\n");
    CHECK(sourced_options(set_squeezelite(continued, 20, 2)) == "-C 5 -D -a 20:2");
}

TEST_CASE("squeezelite's own option loop decides what is -a", "[stack-conf]") {
    // '-a' as the value of -n is a name, not the option.
    const auto named = read_squeezelite_alsa("SB_EXTRA_ARGS=\"-n -a\"\n", k_path);
    REQUIRE(named);
    CHECK_FALSE(named->value);
    // -D takes the next word when it does not start with '-'.
    const auto dsd = read_squeezelite_alsa("SB_EXTRA_ARGS=\"-D 3:u32be -a 30:3\"\n", k_path);
    REQUIRE(dsd);
    CHECK(dsd->value == "30:3");
}

TEST_CASE("squeezelite defaults rtprov cannot read with certainty are refused with file:line",
          "[stack-conf]") {
    CHECK(squeezelite_problem("SB_EXTRA_ARGS=\"$(cat /etc/sl-opts)\"\n") ==
          "/etc/default/squeezelite:1: 'SB_EXTRA_ARGS' holds a command substitution ('$(...)' "
          "or backticks); rtprov cannot know what it gives: write the options out");
    CHECK(squeezelite_problem("\nSB_EXTRA_ARGS=`cat /etc/sl-opts`\n") ==
          "/etc/default/squeezelite:2: 'SB_EXTRA_ARGS' holds a command substitution ('$(...)' "
          "or backticks); rtprov cannot know what it gives: write the options out");
    CHECK(squeezelite_problem("BUF=40\nSB_EXTRA_ARGS=\"-a $BUF:4\"\n") ==
          "/etc/default/squeezelite:2: 'SB_EXTRA_ARGS' holds a variable ('$NAME'); rtprov cannot "
          "know its value: write the options out");
    CHECK(squeezelite_problem("SL_NAME=box\nSB_EXTRA_ARGS=\"-a 40:4\n") ==
          "/etc/default/squeezelite:2: a quote (\") that is never closed; close it");
    CHECK(squeezelite_problem("SB_EXTRA_ARGS=\"-a 40:4\"\n\nSB_EXTRA_ARGS=\"-C 5\"\n") ==
          "/etc/default/squeezelite:3: 'SB_EXTRA_ARGS' is assigned twice (also on line 1); "
          "rtprov cannot tell which one to change: keep one");
    CHECK(squeezelite_problem("SB_EXTRA_ARGS=\"-a 40:4\"\nexport SB_EXTRA_ARGS\n") ==
          "/etc/default/squeezelite:2: 'export' is not an assignment; rtprov reads only "
          "'NAME=value' lines and comments in this file and cannot be sure what this line does "
          "to 'SB_EXTRA_ARGS'");
    CHECK(squeezelite_problem("[ -r /etc/sl ] && SB_EXTRA_ARGS=-D\n") ==
          "/etc/default/squeezelite:1: '[' is not an assignment; rtprov reads only 'NAME=value' "
          "lines and comments in this file and cannot be sure what this line does to "
          "'SB_EXTRA_ARGS'");
    CHECK(squeezelite_problem("SL_NAME=box && SB_EXTRA_ARGS=-D\n") ==
          "/etc/default/squeezelite:1: '&' is shell syntax rtprov does not read in this file: it "
          "reads only 'NAME=value' lines and comments");
    CHECK(squeezelite_problem("SB_EXTRA_ARGS=\"-a40:4\"\n") ==
          "/etc/default/squeezelite:1: squeezelite does not know the option '-a40:4' in "
          "'SB_EXTRA_ARGS' and would not start ('Option error'): write '-a' and its value as "
          "two words, as '-a 40:4'");
    CHECK(squeezelite_problem("SB_EXTRA_ARGS=\"-C 5 -a\"\n") ==
          "/etc/default/squeezelite:1: '-a' in 'SB_EXTRA_ARGS' has no value; squeezelite would "
          "not start ('Option error'): give it one, as '-a 40:4'");
    CHECK(squeezelite_problem("SB_EXTRA_ARGS=\"-n 'my player'\"\n") ==
          "/etc/default/squeezelite:1: squeezelite would stop at 'player'' in 'SB_EXTRA_ARGS' "
          "(neither an option nor an option's value) and not start ('command line argument "
          "error'); correct it");
    CHECK(squeezelite_problem("SB_EXTRA_ARGS=\"-c flac,* -a 40:4\"\n") ==
          "/etc/default/squeezelite:1: 'SB_EXTRA_ARGS' holds '*', '?' or '[', which "
          "/etc/init.d/squeezelite expands as a file name pattern; write the options without "
          "them");
    CHECK(squeezelite_problem("SL_NAME=\"$(hostname -s\nSB_EXTRA_ARGS=-D\n") ==
          "/etc/default/squeezelite:1: a command substitution rtprov cannot be sure where it ends "
          "(it reads one on one line, without '#', 'case' or a backslash in it)");
    CHECK(squeezelite_problem(std::string("SL_NAME=box\n\0\n", 14)) ==
          "/etc/default/squeezelite:2: a NUL byte; this is not a shell file rtprov reads");
    CHECK(squeezelite_problem("SB_EXTRA_ARGS=-D\\") ==
          "/etc/default/squeezelite:1: a backslash at the end of the file");
}

TEST_CASE("an -a value written with quotes inside it is read but not edited", "[stack-conf]") {
    const std::string text = "SB_EXTRA_ARGS=\"-a \"4\"0:4\"\n";
    const auto read = read_squeezelite_alsa(text, k_path);
    REQUIRE(read);
    CHECK(read->value == "40:4");
    const auto set = set_squeezelite_alsa(text, k_path, 20, 2);
    REQUIRE_FALSE(set);
    CHECK(set.problem == "/etc/default/squeezelite:1: the -a value '40:4' is written with "
                         "quotes or backslashes inside it; rtprov edits it only as plain text: "
                         "write it plainly");
}

TEST_CASE("squeezelite values it would read as sizes are not written", "[stack-conf]") {
    const auto big = set_squeezelite_alsa(k_debian_squeezelite, k_path, 500, 4);
    REQUIRE_FALSE(big);
    CHECK(big.problem == "squeezelite's -a buffer must be 1 to 499 ms (500 and more are read as "
                         "a size), not 500");
    const auto many = set_squeezelite_alsa(k_debian_squeezelite, k_path, 40, 50);
    REQUIRE_FALSE(many);
    CHECK(many.problem == "squeezelite's -a period count must be 1 to 49 (50 and more are read "
                          "as a size), not 50");
    CHECK_FALSE(set_squeezelite_alsa(k_debian_squeezelite, k_path, 0, 4));
    CHECK_FALSE(set_squeezelite_alsa(k_debian_squeezelite, k_path, 40, 0));
    CHECK(set_squeezelite_alsa(k_debian_squeezelite, k_path, 499, 49));
}

// ---- PipeWire

namespace {

// The context.properties of Debian 12's /usr/share/pipewire/pipewire.conf (0.3.65).
const std::string k_pipewire_0365 = R"(# Daemon config file for PipeWire version "0.3.65" #
#
# Copy and edit this file in /etc/pipewire for system-wide changes

context.properties = {
    link.max-buffers                       = 16                       # version < 3 clients can't handle more
    #clock.power-of-two-quantum            = true

    core.daemon = true              # listening for socket connections
    core.name   = pipewire-0        # core name and socket name

    ## Properties for the DSP configuration.
    #default.clock.rate          = 48000
    #default.clock.allowed-rates = [ 48000 ]
    #default.clock.quantum       = 1024
    default.clock.min-quantum   = 16
    #default.clock.max-quantum   = 2048
    #
    # These overrides are only applied when running in a vm.
    vm.overrides = {
        default.clock.min-quantum = 1024
    }
}

context.spa-libs = {
    audio.convert.* = audioconvert/libspa-audioconvert
    api.alsa.*      = alsa/libspa-alsa
}

context.modules = [
    { name = libpipewire-module-rt
        args = {
            nice.level   = -11
            #rt.prio      = 88
        }
        flags = [ ifexists nofail ]
    }
    { name = libpipewire-module-x11-bell
        args = { }
        flags = [ ifexists nofail ]
        condition = [ { module.x11.bell = true } ]
    }
]
)";

// The context.properties and its rules of Debian 13's pipewire.conf (1.4.2).
const std::string k_pipewire_142 = R"(# Daemon config file for PipeWire version "1.4.2" #
#
context.properties = {
    core.daemon = true              # listening for socket connections
    core.name   = pipewire-0        # core name and socket name

    ## Properties for the DSP configuration.
    #default.clock.rate          = 48000
    #default.clock.quantum       = 1024
    #default.clock.min-quantum   = 32
    #default.clock.max-quantum   = 2048
    #default.clock.quantum-floor = 4
}

context.properties.rules = [
    {   matches = [ { cpu.vm.name = !null } ]
        actions = {
            update-props = {
                # These overrides are only applied when running in a vm.
                default.clock.min-quantum = 1024
	    }
        }
    }
]
)";

PipewireClock clock_of(const FakeFiles& fs, const std::vector<std::string>& files) {
    const auto clock = read_pipewire_clock(files, fs.reader());
    INFO(clock.problem);
    REQUIRE(clock);
    return *clock;
}

std::string clock_problem(const std::string& text) {
    FakeFiles fs;
    fs.files["/etc/pipewire/pipewire.conf.d/x.conf"] = text;
    const auto clock = read_pipewire_clock({"/etc/pipewire/pipewire.conf.d/x.conf"}, fs.reader());
    REQUIRE_FALSE(clock);
    return clock.problem;
}

} // namespace

TEST_CASE("PipeWire's drop-ins come in the order its version applies them", "[stack-conf]") {
    FakeFiles fs;
    fs.files["/usr/share/pipewire/pipewire.conf"] = k_pipewire_142;
    fs.files["/usr/share/pipewire/pipewire.conf.d/10-rates.conf"] = "";
    fs.files["/usr/share/pipewire/pipewire.conf.d/50-same.conf"] = "";
    fs.files["/usr/share/pipewire/pipewire.conf.d/README"] = "";
    fs.files["/etc/pipewire/pipewire.conf.d/50-same.conf"] = "";
    fs.files["/etc/pipewire/pipewire.conf.d/90-rtprov.conf"] = "";
    fs.files["/etc/pipewire/pipewire.conf.d/00-first.conf"] = "";
    // 1.4.2 (Debian 13): /usr/share first; a /usr/share file hides /etc's of its name.
    auto files = pipewire_conf_files(fs.reader(), fs.lister());
    REQUIRE(files);
    CHECK(*files == std::vector<std::string>{"/usr/share/pipewire/pipewire.conf",
                                             "/usr/share/pipewire/pipewire.conf.d/10-rates.conf",
                                             "/usr/share/pipewire/pipewire.conf.d/50-same.conf",
                                             "/etc/pipewire/pipewire.conf.d/00-first.conf",
                                             "/etc/pipewire/pipewire.conf.d/90-rtprov.conf"});
    // 0.3.65 (Debian 12): /etc first, /usr/share after it, an /etc file hiding its name.
    fs.files["/usr/share/pipewire/pipewire.conf"] = k_pipewire_0365;
    files = pipewire_conf_files(fs.reader(), fs.lister());
    REQUIRE(files);
    CHECK(*files == std::vector<std::string>{"/usr/share/pipewire/pipewire.conf",
                                             "/etc/pipewire/pipewire.conf.d/00-first.conf",
                                             "/etc/pipewire/pipewire.conf.d/50-same.conf",
                                             "/etc/pipewire/pipewire.conf.d/90-rtprov.conf",
                                             "/usr/share/pipewire/pipewire.conf.d/10-rates.conf"});
    // 1.5.81 and later: nothing hidden. And /etc's pipewire.conf is the main one.
    fs.files["/usr/share/pipewire/pipewire.conf"] =
        "# Daemon config file for PipeWire version \"1.6.0\" #\n";
    fs.files["/etc/pipewire/pipewire.conf"] = "";
    files = pipewire_conf_files(fs.reader(), fs.lister());
    REQUIRE(files);
    CHECK(*files == std::vector<std::string>{"/etc/pipewire/pipewire.conf",
                                             "/usr/share/pipewire/pipewire.conf.d/10-rates.conf",
                                             "/usr/share/pipewire/pipewire.conf.d/50-same.conf",
                                             "/etc/pipewire/pipewire.conf.d/00-first.conf",
                                             "/etc/pipewire/pipewire.conf.d/50-same.conf",
                                             "/etc/pipewire/pipewire.conf.d/90-rtprov.conf"});
}

TEST_CASE("without PipeWire, or without its version, there are no files", "[stack-conf]") {
    FakeFiles fs;
    auto files = pipewire_conf_files(fs.reader(), fs.lister());
    REQUIRE_FALSE(files);
    CHECK(files.absent);
    CHECK(files.problem == "PipeWire is not installed: neither '/etc/pipewire/pipewire.conf' nor "
                           "'/usr/share/pipewire/pipewire.conf' is there");
    fs.files["/usr/share/pipewire/pipewire.conf"] = "context.properties = { }\n";
    files = pipewire_conf_files(fs.reader(), fs.lister());
    REQUIRE_FALSE(files);
    CHECK_FALSE(files.absent);
    CHECK(files.problem ==
          "cannot tell PipeWire's version: neither '/usr/share/pipewire/pipewire.conf' nor "
          "'/usr/share/pipewire/pipewire.conf' begins with its 'PipeWire version \"X.Y.Z\"' "
          "line, and the order of its drop-ins depends on it");
}

TEST_CASE("PipeWire's quantum is read from context.properties, not from comments or nested "
          "objects",
          "[stack-conf]") {
    FakeFiles fs;
    fs.files["/usr/share/pipewire/pipewire.conf"] = k_pipewire_0365;
    PipewireClock clock = clock_of(fs, {"/usr/share/pipewire/pipewire.conf"});
    CHECK_FALSE(clock.quantum);      // '#default.clock.quantum = 1024' is a comment
    CHECK(clock.min_quantum == 16u); // vm.overrides' 1024 is nested
    CHECK(clock.where.empty());

    fs.files["/usr/share/pipewire/pipewire.conf"] = k_pipewire_142;
    clock = clock_of(fs, {"/usr/share/pipewire/pipewire.conf"});
    CHECK_FALSE(clock.quantum);
    CHECK_FALSE(clock.min_quantum); // the rules' 1024 is not context.properties

    // A later file wins a key; null removes one; JSON's own syntax reads the same.
    fs.files["/etc/pipewire/pipewire.conf.d/a.conf"] =
        "context.properties = {\n  default.clock.quantum = 64 # = 1024\n}\n";
    fs.files["/etc/pipewire/pipewire.conf.d/b.conf"] =
        "{ \"context.properties\": { \"default.clock.quantum\": \"128\",\n"
        "  \"default.clock.min-quantum\": null, } }\n";
    clock =
        clock_of(fs, {"/usr/share/pipewire/pipewire.conf", "/etc/pipewire/pipewire.conf.d/a.conf",
                      "/etc/pipewire/pipewire.conf.d/b.conf", "/etc/pipewire/gone.conf"});
    CHECK(clock.quantum == 128u);
    CHECK_FALSE(clock.min_quantum);
    CHECK(clock.where == "/etc/pipewire/pipewire.conf.d/b.conf:1");
    clock =
        clock_of(fs, {"/usr/share/pipewire/pipewire.conf", "/etc/pipewire/pipewire.conf.d/a.conf"});
    CHECK(clock.quantum == 64u);
    CHECK(clock.where == "/etc/pipewire/pipewire.conf.d/a.conf:2");

    // A section named twice in one file: the later replaces the whole earlier one.
    fs.files["/etc/pipewire/pipewire.conf.d/c.conf"] =
        "context.properties = { default.clock.quantum = 64 }\n"
        "context.properties = { default.clock.min-quantum = 32 }\n";
    clock = clock_of(fs, {"/etc/pipewire/pipewire.conf.d/c.conf"});
    CHECK_FALSE(clock.quantum);
    CHECK(clock.min_quantum == 32u);
}

TEST_CASE("PipeWire configuration rtprov cannot read is refused with file:line", "[stack-conf]") {
    const std::string at = "/etc/pipewire/pipewire.conf.d/x.conf:";
    CHECK(clock_problem("context.properties = {\n default.clock.quantum = \"256\n}\n") ==
          at + "2: a string that is never closed on its line");
    CHECK(clock_problem("\ncontext.properties = {\n default.clock.quantum = 256\n") ==
          at + "2: a '{' that is never closed");
    CHECK(clock_problem("context.modules = [ { name = x } \n") ==
          at + "1: a '[' that is never closed");
    CHECK(clock_problem("context.properties = { default.clock.quantum }\n") ==
          at + "1: the key 'default.clock.quantum' has no value");
    CHECK(clock_problem("context.properties = { default.clock.quantum = abc }\n") ==
          at + "1: 'default.clock.quantum' is 'abc', not a whole number PipeWire reads with "
               "certainty (it reads it with atoi()); write a number");
    CHECK(clock_problem("context.properties = { default.clock.quantum = 0x100 }\n") ==
          at + "1: 'default.clock.quantum' is '0x100', not a whole number PipeWire reads with "
               "certainty (it reads it with atoi()); write a number");
    CHECK(clock_problem("context.properties = { default.clock.min-quantum = [ 32 ] }\n") ==
          at + "1: 'default.clock.min-quantum' is an object or array, not a number");
    CHECK(clock_problem("context.properties = [ default.clock.quantum 256 ]\n") ==
          at + "1: 'context.properties' is not an object ('{ }')");
    CHECK(clock_problem("context.modules = [ a = b ]\n") ==
          at + "1: '=' where a key or a value should start");
    CHECK(clock_problem("context.properties = { a = b }\n}\n") ==
          at + "2: '}' that closes nothing");
    CHECK(clock_problem("context.properties = { { a = b } }\n") ==
          at + "1: an object or array where a key should be; give it a key ('name = { ... ')");
    CHECK(clock_problem("path = /a\\b\n") == at + "1: a backslash outside a string");
    CHECK(clock_problem("name = \"\\q\"\n") == at + "1: an escape PipeWire does not read (\\q)");
    CHECK(clock_problem("name = caf\xc3\xa9\n") ==
          at + "1: a byte PipeWire does not accept outside a string (\\xc3)");
    CHECK(clock_problem("name = \"\xff\"\n") ==
          at + "1: a byte PipeWire does not accept in a string, not UTF-8 (\\xff)");
    CHECK(clock_problem("{ a = 1 } b = 2\n") == at + "1: text after the object that makes this "
                                                     "file: 'b = 2\\x0a'");
    CHECK(clock_problem("x = " + std::string(200, '[') + std::string(200, ']')) ==
          at + "1: objects and arrays nested deeper than 128 levels");
    CHECK(clock_problem("x = [ \"a\" ]\nname = \"caf\xc3\xa9\"\ny = \"\\u00e9\\/\"\n"
                        "context.properties = { default.clock.quantum = 99999999999 }\n") ==
          at + "4: 'default.clock.quantum' is '99999999999', not a whole number PipeWire reads "
               "with certainty (it reads it with atoi()); write a number");
}

TEST_CASE("rtprov's PipeWire drop-in sets the quantum and min-quantum, in a VM too",
          "[stack-conf]") {
    const std::string dropin = pipewire_dropin("# rtprov: pi4; do not edit, run rtprov", 256);
    CHECK(dropin == R"(# rtprov: pi4; do not edit, run rtprov
context.properties = {
    default.clock.quantum     = 256
    default.clock.min-quantum = 256
    vm.overrides = null
}
context.properties.rules = [
    {   matches = [ { cpu.vm.name = !null } ]
        actions = {
            update-props = {
                default.clock.min-quantum = 256
            }
        }
    }
]
)");
    FakeFiles fs;
    fs.files["/usr/share/pipewire/pipewire.conf"] = k_pipewire_0365;
    fs.files["/etc/pipewire/pipewire.conf.d/90-rtprov.conf"] = dropin;
    const PipewireClock clock = clock_of(
        fs, {"/usr/share/pipewire/pipewire.conf", "/etc/pipewire/pipewire.conf.d/90-rtprov.conf"});
    CHECK(clock.quantum == 256u);
    CHECK(clock.min_quantum == 256u);
    CHECK(clock.where == "/etc/pipewire/pipewire.conf.d/90-rtprov.conf:3");
}

// ---- WirePlumber

TEST_CASE("WirePlumber's version is told by the files its package ships", "[stack-conf]") {
    FakeFiles fs;
    CHECK(wireplumber_format(fs.reader(), fs.lister()) == WirePlumberFormat::none);
    // Debian 12's 0.4.13: Lua, beside a wireplumber.conf that loads it.
    fs.files["/usr/share/wireplumber/wireplumber.conf"] =
        "context.properties = {\n  wireplumber.script-engine = lua-scripting\n}\n";
    fs.files["/usr/share/wireplumber/main.lua.d/50-alsa-config.lua"] =
        "alsa_monitor.properties = {\n}\n";
    CHECK(wireplumber_format(fs.reader(), fs.lister()) == WirePlumberFormat::lua);
    // Debian 13's 0.5.8.
    fs.files.erase("/usr/share/wireplumber/main.lua.d/50-alsa-config.lua");
    fs.files["/usr/share/wireplumber/wireplumber.conf.d/alsa-vm.conf"] = "";
    CHECK(wireplumber_format(fs.reader(), fs.lister()) == WirePlumberFormat::json);
}

TEST_CASE("rtprov's WirePlumber drop-in is a monitor.alsa.rules rule for every ALSA output",
          "[stack-conf]") {
    const std::string dropin = wireplumber_dropin("# rtprov\n", 256, 512);
    CHECK(dropin == R"(# rtprov
monitor.alsa.rules = [
  {
    matches = [
      {
        node.name = "~alsa_output.*"
      }
    ]
    actions = {
      update-props = {
        api.alsa.period-size = 256
        api.alsa.headroom    = 512
      }
    }
  }
]
)");
    const auto json = read_spa_json(dropin, "rtprov.conf");
    REQUIRE(json);
    REQUIRE(json->keys == std::vector<std::string>{"monitor.alsa.rules"});
    const JsonNode& rule = json->values[0].values.at(0);
    REQUIRE(rule.keys == std::vector<std::string>{"matches", "actions"});
    CHECK(rule.values[0].values.at(0).keys == std::vector<std::string>{"node.name"});
    CHECK(rule.values[0].values.at(0).values.at(0).text == "~alsa_output.*");
    const JsonNode& update = rule.values[1].values.at(0);
    CHECK(update.keys == std::vector<std::string>{"api.alsa.period-size", "api.alsa.headroom"});
    CHECK(update.values.at(0).text == "256");
    CHECK(update.values.at(1).text == "512");

    // Debian 13's own alsa-vm.conf, the rule this one follows, reads the same way.
    const auto vm = read_spa_json(R"(# ALSA node property overrides for virtual machine hardware

monitor.alsa.rules = [
  # Generic PCI cards on any VM type
  {
    matches = [
      {
        node.name = "~alsa_input.pci.*"
        cpu.vm.name = "~.*"
      }
      {
        node.name = "~alsa_output.pci.*"
        cpu.vm.name = "~.*"
      }
    ]
    actions = {
      update-props = {
        api.alsa.period-size   = 1024
        api.alsa.headroom      = 2048
      }
    }
  }
]
)",
                                  "alsa-vm.conf");
    REQUIRE(vm);
    CHECK(vm->values.at(0).values.at(0).values.at(0).values.size() == 2);
}

// ---- JACK

namespace {

const std::string k_jack_path = "/etc/systemd/system/jackd.service";

JackCommand jack(const std::string& exec_start) {
    const auto command = read_jack_command(
        "[Unit]\nDescription=JACK\n\n[Service]\nExecStart=" + exec_start + "\nLimitRTPRIO=95\n",
        k_jack_path);
    INFO(command.problem);
    REQUIRE(command);
    CHECK(command->line == 5);
    return *command;
}

std::string jack_problem(const std::string& unit) {
    const auto command = read_jack_command(unit, k_jack_path);
    REQUIRE_FALSE(command);
    return command.problem;
}

// The drop-in's command line.
std::string dropin_command(const JackCommand& command, unsigned period, unsigned nperiods) {
    const std::string dropin = jack_dropin("# rtprov", command, period, nperiods);
    const std::string head = "# rtprov\n[Service]\nExecStart=\nExecStart=";
    REQUIRE(dropin.rfind(head, 0) == 0);
    // systemd reads it back as the same command with the new values.
    const auto again = read_jack_command(dropin, "/etc/systemd/system/jackd.service.d/rtprov.conf");
    INFO(again.problem);
    REQUIRE(again);
    CHECK(again->prefix == command.prefix);
    CHECK(again->period == period);
    CHECK(again->nperiods == nperiods);
    CHECK(again->rate == command.rate);
    CHECK(jack_dropin("# rtprov", *again, period, nperiods) == dropin);
    return dropin.substr(head.size(), dropin.size() - head.size() - 1);
}

} // namespace

TEST_CASE("jackd's period, periods and rate are read after '-d alsa'", "[stack-conf]") {
    JackCommand c = jack("/usr/bin/jackd -P70 -t2000 -d alsa -d hw:USB -r 48000 -p 256 -n 3");
    CHECK(c.unit_path == k_jack_path);
    CHECK(c.prefix.empty());
    CHECK(c.argv.front() == "/usr/bin/jackd");
    CHECK(c.period == 256u);
    CHECK(c.nperiods == 3u);
    CHECK(c.rate == 48000u);
    CHECK(jack_dropin("# rtprov: do not edit", c, 128, 2) ==
          "# rtprov: do not edit\n[Service]\nExecStart=\n"
          "ExecStart=/usr/bin/jackd -P70 -t2000 -d alsa -d hw:USB -r 48000 -p 128 -n 2\n");

    // The joined and long forms, kept as they are written.
    c = jack("jackd -Rdalsa -p256 --nperiods=3 --rate 44100");
    CHECK(c.period == 256u);
    CHECK(c.nperiods == 3u);
    CHECK(c.rate == 44100u);
    CHECK(dropin_command(c, 128, 2) == "jackd -Rdalsa -p128 --nperiods=2 --rate 44100");
    c = jack("/usr/bin/jackd --audio-driver=alsa --period 512 -n3");
    CHECK(dropin_command(c, 64, 3) == "/usr/bin/jackd --audio-driver=alsa --period 64 -n3");

    // jackd's own -p (port-max) before the driver is not the period; the driver's are added.
    c = jack("/usr/bin/jackd -p 512 --realtime -d alsa -d hw:0");
    CHECK_FALSE(c.period);
    CHECK_FALSE(c.nperiods);
    CHECK_FALSE(c.rate);
    CHECK(dropin_command(c, 128, 2) ==
          "/usr/bin/jackd -p 512 --realtime -d alsa -p 128 -n 2 -d hw:0");

    // An option without a value is the driver's default, and gets one.
    c = jack("/usr/bin/jackd -d alsa -p -n 3 -p");
    CHECK(c.period == 1024u);
    CHECK(dropin_command(c, 128, 2) == "/usr/bin/jackd -d alsa -p 128 -n 2 -p 128");
}

TEST_CASE("ExecStart= is split and written back as systemd splits it", "[stack-conf]") {
    // Prefixes, '@' and the name jackd runs as, quotes, escapes, '%%' and '$$'.
    JackCommand c = jack("-@/usr/bin/jackd jackd-audio -n \"studio $$1\" -d alsa -d 'hw:CARD=My "
                         "Card' -C \"a\\\"b\\\\c\\x41\" -P 100%%");
    CHECK(c.prefix == "-@");
    CHECK(c.argv == std::vector<std::string>{"/usr/bin/jackd", "jackd-audio", "-n", "studio $1",
                                             "-d", "alsa", "-d", "hw:CARD=My Card", "-C",
                                             "a\"b\\cA", "-P", "100%"});
    CHECK(dropin_command(c, 256, 2) ==
          "-@/usr/bin/jackd jackd-audio -n \"studio $$1\" -d alsa -p 256 -n 2 -d \"hw:CARD=My "
          "Card\" -C \"a\\\"b\\\\cA\" -P 100%%");

    // A continued line, a comment inside it, and an empty ExecStart= resetting the list.
    const auto continued = read_jack_command("[Service]\nExecStart=/bin/false\nExecStart=\n"
                                             "ExecStart=/usr/bin/jackd -d alsa \\\n"
                                             "# the card\n"
                                             "  -p 512\n",
                                             k_jack_path);
    REQUIRE(continued);
    CHECK(continued->line == 4);
    CHECK(continued->period == 512u);
    // An ExecStart= of another section does not count.
    const auto other = read_jack_command("[Unit]\nExecStart=/bin/true\n[Service]\n"
                                         "ExecStart = /usr/bin/jackd -d alsa\n",
                                         k_jack_path);
    REQUIRE(other);
    CHECK(other->line == 4);

    for (const std::string word :
         {"", "a b", "x\"y", "back\\slash", "100%", "$HOME", ";", "tab\there", "caf\xc3\xa9", "'",
          "new\nline", "v\vt", "\x01", "\x7f"}) {
        const auto split = split_exec_line("/bin/x " + exec_line_word(word), "u", 1);
        INFO(word);
        REQUIRE(split);
        CHECK(split->size() == 2);
        CHECK(split->back() == word);
    }
    // A control character written as an escape is taken (fuzz_stack_conf found '\v'
    // taken, written back as '\x0b' and that refused), one written as such is not.
    const auto escaped = split_exec_line("/bin/x a\\vb \"c\td\" \\x01", "u", 1);
    REQUIRE(escaped);
    CHECK(*escaped == std::vector<std::string>{"/bin/x", "a\vb", "c\td", "\x01"});
    const auto raw = split_exec_line("/bin/x a\vb", "u", 7);
    REQUIRE_FALSE(raw);
    CHECK(raw.problem == "u:7: a control character in 'ExecStart='");
}

TEST_CASE("jackd units rtprov cannot read with certainty are refused with file:line",
          "[stack-conf]") {
    const std::string at = k_jack_path + ":";
    const auto service = [](const std::string& exec) {
        return "[Unit]\nDescription=JACK\n[Service]\nExecStart=" + exec + "\n";
    };
    CHECK(jack_problem("[Service]\nType=simple\n") ==
          k_jack_path + ": no 'ExecStart=' in [Service]");
    CHECK(jack_problem("[Service]\nExecStart=/usr/bin/jackd -d alsa\nExecStart=/bin/true\n") ==
          at + "3: a second 'ExecStart=' (the first on line 2); rtprov changes a service that "
               "runs one command, jackd");
    CHECK(jack_problem(service("/usr/bin/jackd $JACK_OPTS")) ==
          at + "4: an environment variable ('$JACK_OPTS') in 'ExecStart=', which systemd "
               "substitutes when the service starts; rtprov cannot know its value: write "
               "jackd's options out");
    CHECK(jack_problem(service("/usr/bin/jackd -d alsa -d ${CARD}")) ==
          at + "4: an environment variable ('${CARD}') in 'ExecStart=', which systemd "
               "substitutes when the service starts; rtprov cannot know its value: write "
               "jackd's options out");
    CHECK(jack_problem(service("/usr/bin/jackd -d alsa -d hw:%i")) ==
          at + "4: a specifier ('%i') in 'ExecStart=', which systemd expands; rtprov cannot "
               "know its value: write it out");
    CHECK(jack_problem(service("/usr/bin/jackd -d alsa ; /bin/true")) ==
          at + "4: several commands in one 'ExecStart=' (';'); rtprov changes a service that "
               "runs jackd alone");
    CHECK(jack_problem(service("/usr/bin/jackd -d\"alsa\"")) ==
          at + "4: a quote in the middle of a word of 'ExecStart=' (/usr/bin/jackd -d\"); "
               "systemd reads quotes only around whole words");
    CHECK(jack_problem(service("/usr/bin/jackd -d 'alsa")) ==
          at + "4: a quote (') that is never closed in 'ExecStart='");
    CHECK(jack_problem(service("/usr/bin/jackd -d al\\qsa")) ==
          at + "4: an escape systemd does not read (\\q) in 'ExecStart='");
    CHECK(jack_problem(service("/usr/bin/jackd -d alsa -d hw:\\x00")) ==
          at + "4: a NUL character in 'ExecStart='");
    CHECK(jack_problem(service("/usr/bin/pipewire")) ==
          at + "4: the service runs '/usr/bin/pipewire', not jackd, in 'ExecStart='");
    CHECK(jack_problem(service("/usr/bin/jackd -d dummy -p 256")) ==
          at + "4: jackd's driver is 'dummy', not alsa; rtprov sets the period of jackd's ALSA "
               "driver only");
    CHECK(jack_problem(service("/usr/bin/jackd -R")) ==
          at + "4: jackd has no driver here ('-d alsa'); rtprov sets the period of jackd's ALSA "
               "driver only");
    CHECK(jack_problem(service("/usr/bin/jackd -F -d alsa")) ==
          at + "4: '-F': jackd does not run with '-F' (it prints its usage)");
    CHECK(jack_problem(service("/usr/bin/jackd --real -d alsa")) ==
          at + "4: '--real' is not one of jackd's options as written (rtprov reads whole option "
               "names, not abbreviations)");
    CHECK(jack_problem(service("/usr/bin/jackd hw:0 -d alsa")) ==
          at + "4: jackd would not start with 'hw:0' before its driver (it prints its usage)");
    CHECK(jack_problem(service("/usr/bin/jackd -d alsa --per=256")) ==
          at + "4: '--per=256' is not an option of jackd's ALSA driver as written (rtprov reads "
               "whole option names, not abbreviations)");
    CHECK(jack_problem(service("/usr/bin/jackd -d alsa -q")) ==
          at + "4: '-q' is not an option of jackd's ALSA driver (jackd would print the driver's "
               "options and stop)");
    CHECK(jack_problem(service("/usr/bin/jackd -d alsa -p 256 512")) ==
          at + "4: '512' after '-d alsa' is not an option of jackd's ALSA driver (jackd would "
               "ignore it)");
    CHECK(jack_problem(service("/usr/bin/jackd -d alsa -r 48k")) ==
          at + "4: '-r' with the value '48k': not a whole number jackd reads with certainty");
    CHECK(jack_problem(service("/usr/bin/jackd -d alsa --period=")) ==
          at + "4: '--period=' with the value '': not a whole number jackd reads with certainty");
}
