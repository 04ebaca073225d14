// SPDX-License-Identifier: Apache-2.0
#include "provisioner/player/mpd_conf.hpp"

#include "tests/unit/catch.hpp"

#include <map>
#include <string>

using namespace rtprov;
using namespace rtprov::player;
using Catch::Matchers::Contains;

namespace {

using FileMap = std::map<std::string, std::string>;

// A target's files: a path not in 'files' is absent. 'reads' counts each read.
ReadFile over(const FileMap& files, std::map<std::string, int>* reads = nullptr) {
    return [&files, reads](const std::string& path) -> core::Result<std::string> {
        if (reads)
            ++(*reads)[path];
        auto it = files.find(path);
        if (it == files.end())
            return core::Result<std::string>::failed(
                "cannot read '" + path + "': No such file or directory", true);
        return {it->second, {}, false};
    };
}

// The problem of reading 'text' as /etc/mpd.conf; "" when it reads.
std::string refusal(const std::string& text) {
    const FileMap files{{"/etc/mpd.conf", text}};
    auto config = read_mpd_config("/etc/mpd.conf", over(files));
    return config ? "" : config.problem;
}

// Debian's mpd.conf in shape: top-level settings, comment-only audio_output examples
// (with '##' option lines and trailing comments), input and decoder blocks, tabs, and
// include_optional of a local file at the end.
const std::string k_debian_like = "# An example configuration file for MPD.\n"
                                  "music_directory\t\t\"/var/lib/mpd/music\"\n"
                                  "user\t\t\t\t\"mpd\"\n"
                                  "bind_to_address\t\t\t\"localhost\"\n"
                                  "#\n"
                                  "input {\n"
                                  "        plugin \"curl\"\n"
                                  "#       proxy \"proxy.isp.com:8080\"\n"
                                  "}\n"
                                  "\n"
                                  "decoder {\n"
                                  "        plugin                  \"hybrid_dsd\"\n"
                                  "        enabled                 \"no\"\n"
                                  "#       gapless                 \"no\"\n"
                                  "}\n"
                                  "# An example of an ALSA output:\n"
                                  "#\n"
                                  "#audio_output {\n"
                                  "#\ttype\t\t\"alsa\"\n"
                                  "#\tname\t\t\"My ALSA Device\"\n"
                                  "##\tdevice\t\t\"hw:0,0\"\t# optional\n"
                                  "#}\n"
                                  "filesystem_charset\t\t\"UTF-8\"\n"
                                  "include_optional \"mpd_local.conf\"\n";

const std::string k_added = "# Added by rtprov to set the ALSA buffer: with no audio_output, "
                            "MPD detects ALSA's\n"
                            "# default device itself, and this output is that device.\n"
                            "audio_output {\n"
                            "    type \"alsa\"\n"
                            "    name \"rtprov\"\n"
                            "    buffer_time \"100000\"\n"
                            "    period_time \"25000\"\n"
                            "}\n";

} // namespace

TEST_CASE("Debian's shape: comment-only outputs are no outputs, and an absent "
          "include_optional is looked at and skipped",
          "[mpd-conf]") {
    const FileMap files{{"/etc/mpd.conf", k_debian_like}};
    auto config = read_mpd_config("/etc/mpd.conf", over(files));
    REQUIRE(config);
    CHECK(config->outputs.empty());
    CHECK(config->files == std::vector<std::string>{"/etc/mpd.conf", "/etc/mpd_local.conf"});
}

TEST_CASE("with no audio_output, an ALSA output named rtprov is appended to the main file "
          "after a comment, every byte before it kept",
          "[mpd-conf]") {
    const FileMap files{{"/etc/mpd.conf", k_debian_like}};
    auto changed = set_mpd_buffers("/etc/mpd.conf", over(files), 25000, 100000);
    REQUIRE(changed);
    CHECK(*changed == FileMap{{"/etc/mpd.conf", k_debian_like + "\n" + k_added}});
    // and read back, it is the one output, with what was asked
    const FileMap after = *changed;
    auto config = read_mpd_config("/etc/mpd.conf", over(after));
    REQUIRE(config);
    REQUIRE(config->outputs.size() == 1);
    CHECK(config->outputs[0].type == "alsa");
    CHECK(config->outputs[0].name == "rtprov");
    CHECK(config->outputs[0].buffer_time == "100000");
    CHECK(config->outputs[0].period_time == "25000");
    // a second run changes nothing
    auto again = set_mpd_buffers("/etc/mpd.conf", over(after), 25000, 100000);
    REQUIRE(again);
    CHECK(again->empty());
}

TEST_CASE("the added output follows a last line without a newline, and an empty file gets "
          "the output alone",
          "[mpd-conf]") {
    const FileMap no_newline{{"/etc/mpd.conf", "user \"mpd\"\n# the end"}};
    auto changed = set_mpd_buffers("/etc/mpd.conf", over(no_newline), 25000, 100000);
    REQUIRE(changed);
    CHECK(changed->at("/etc/mpd.conf") == "user \"mpd\"\n# the end\n\n" + k_added);

    const FileMap empty{{"/etc/mpd.conf", ""}};
    auto added = set_mpd_buffers("/etc/mpd.conf", over(empty), 25000, 100000);
    REQUIRE(added);
    CHECK(added->at("/etc/mpd.conf") == k_added);
}

TEST_CASE("an output's type, name, buffer_time and period_time are read as MPD reads them, "
          "with their lines",
          "[mpd-conf]") {
    const FileMap files{{"/etc/mpd.conf", "audio_output {\n"
                                          "\ttype\t\t\"alsa\"   # the card\n"
                                          "\tname\t\t\"My \\\"DAC\\\" \\\\ #1\"\n"
                                          "\n"
                                          "\t# buffer_time \"1\"\n"
                                          "\tbuffer_time\t\"500000\"\n"
                                          "}\n"
                                          "audio_output {\n"
                                          "  type \"pipewire\"\n"
                                          "  period_time \"1\\0000\"\n"
                                          "}\n"}};
    auto config = read_mpd_config("/etc/mpd.conf", over(files));
    REQUIRE(config);
    REQUIRE(config->outputs.size() == 2);
    const MpdOutput& alsa = config->outputs[0];
    CHECK(alsa.file == "/etc/mpd.conf");
    CHECK(alsa.line == 1);
    CHECK(alsa.type == "alsa");
    CHECK(alsa.name == "My \"DAC\" \\ #1");
    CHECK(alsa.buffer_time == "500000");
    CHECK(alsa.buffer_time_line == 6);
    CHECK_FALSE(alsa.period_time);
    CHECK(alsa.period_time_line == 0);
    const MpdOutput& pipewire = config->outputs[1];
    CHECK(pipewire.line == 8);
    CHECK(pipewire.type == "pipewire");
    CHECK(pipewire.name.empty());
    CHECK_FALSE(pipewire.buffer_time);
    CHECK(pipewire.period_time == "10000"); // '\0' is a '0' escaped
    CHECK(pipewire.period_time_line == 10);
}

TEST_CASE("an existing value is replaced in place and a missing one added before '}', "
          "indented as the block's first setting; other outputs and bytes stay",
          "[mpd-conf]") {
    const std::string before = "# mine\n"
                               "audio_output {\n"
                               "\ttype\t\t\"alsa\"\n"
                               "\tname\t\t\"DAC\"\t# USB\n"
                               "\tbuffer_time\t\"500000\"\t# too long\n"
                               "  }   # end of DAC\n"
                               "audio_output {\n"
                               "    type \"httpd\"\n"
                               "    buffer_time \"1\"\n"
                               "}\n"
                               "audio_output {\n"
                               "        type \"alsa\"\n"
                               "        period_time \"5\"   \n"
                               "        buffer_time \"100000\"\n"
                               "}\n";
    const std::string after = "# mine\n"
                              "audio_output {\n"
                              "\ttype\t\t\"alsa\"\n"
                              "\tname\t\t\"DAC\"\t# USB\n"
                              "\tbuffer_time\t\"100000\"\t# too long\n"
                              "\tperiod_time \"25000\"\n"
                              "  }   # end of DAC\n"
                              "audio_output {\n"
                              "    type \"httpd\"\n"
                              "    buffer_time \"1\"\n"
                              "}\n"
                              "audio_output {\n"
                              "        type \"alsa\"\n"
                              "        period_time \"25000\"   \n"
                              "        buffer_time \"100000\"\n"
                              "}\n";
    const FileMap files{{"/etc/mpd.conf", before}};
    auto changed = set_mpd_buffers("/etc/mpd.conf", over(files), 25000, 100000);
    REQUIRE(changed);
    CHECK(*changed == FileMap{{"/etc/mpd.conf", after}});
    const FileMap edited = *changed;
    auto again = set_mpd_buffers("/etc/mpd.conf", over(edited), 25000, 100000);
    REQUIRE(again);
    CHECK(again->empty());
}

TEST_CASE("a CRLF file keeps its CRLF, and an added line ends in CRLF too", "[mpd-conf]") {
    const std::string before = "audio_output {\r\n"
                               "  type \"alsa\"\r\n"
                               "  buffer_time \"500000\" # long\r\n"
                               "}\r\n";
    const std::string after = "audio_output {\r\n"
                              "  type \"alsa\"\r\n"
                              "  buffer_time \"100000\" # long\r\n"
                              "  period_time \"25000\"\r\n"
                              "}\r\n";
    const FileMap files{{"/etc/mpd.conf", before}};
    auto changed = set_mpd_buffers("/etc/mpd.conf", over(files), 25000, 100000);
    REQUIRE(changed);
    CHECK(changed->at("/etc/mpd.conf") == after);

    const FileMap none{{"/etc/mpd.conf", "user \"mpd\"\r\n"}};
    auto added = set_mpd_buffers("/etc/mpd.conf", over(none), 25000, 100000);
    REQUIRE(added);
    std::string crlf_added;
    for (char c : k_added)
        crlf_added += c == '\n' ? std::string("\r\n") : std::string(1, c);
    CHECK(added->at("/etc/mpd.conf") == "user \"mpd\"\r\n\r\n" + crlf_added);
}

TEST_CASE("bytes that are not UTF-8, in values and comments, are read as bytes and kept",
          "[mpd-conf]") {
    const std::string before = "# caf\xe9 \xff\n"
                               "audio_output {\n"
                               " type \"alsa\"\n"
                               " name \"Ger\xe4t \xc3\x28\" # \xfe\n"
                               " buffer_time \"1000000\"\n"
                               " period_time \"25000\"\n"
                               "}\n";
    const FileMap files{{"/etc/mpd.conf", before}};
    auto config = read_mpd_config("/etc/mpd.conf", over(files));
    REQUIRE(config);
    CHECK(config->outputs.at(0).name == "Ger\xe4t \xc3\x28");
    auto changed = set_mpd_buffers("/etc/mpd.conf", over(files), 25000, 100000);
    REQUIRE(changed);
    std::string after = before;
    after.replace(after.find("1000000"), 7, "100000");
    CHECK(changed->at("/etc/mpd.conf") == after);
}

TEST_CASE("values already as asked change nothing", "[mpd-conf]") {
    const FileMap files{{"/etc/mpd.conf", "audio_output {\n type \"alsa\"\n"
                                          " buffer_time \"100000\"\n period_time \"25000\"\n}\n"}};
    auto changed = set_mpd_buffers("/etc/mpd.conf", over(files), 25000, 100000);
    REQUIRE(changed);
    CHECK(changed->empty());
}

TEST_CASE("an output in an included file is edited there, and only that file is returned",
          "[mpd-conf]") {
    const std::string out_before = "audio_output {\n  type \"alsa\"\n  name \"usb\"\n}\n";
    const FileMap files{{"/etc/mpd.conf",
                         "user \"mpd\"\ninclude \"mpd.d/out.conf\" # the outputs\n"
                         "include_optional \"/srv/extra.conf\"\ninclude \"./mpd.d//more.conf\"\n"},
                        {"/etc/mpd.d/out.conf", out_before},
                        {"/srv/extra.conf", "audio_output {\n  type \"null\"\n}\n"},
                        {"/etc/mpd.d/more.conf", "# nothing\n"}};
    auto config = read_mpd_config("/etc/mpd.conf", over(files));
    REQUIRE(config);
    CHECK(config->files == std::vector<std::string>{"/etc/mpd.conf", "/etc/mpd.d/out.conf",
                                                    "/srv/extra.conf", "/etc/mpd.d/more.conf"});
    REQUIRE(config->outputs.size() == 2);
    CHECK(config->outputs[0].file == "/etc/mpd.d/out.conf");
    CHECK(config->outputs[0].line == 1);
    CHECK(config->outputs[1].file == "/srv/extra.conf");

    auto changed = set_mpd_buffers("/etc/mpd.conf", over(files), 25000, 100000);
    REQUIRE(changed);
    CHECK(*changed == FileMap{{"/etc/mpd.d/out.conf",
                               "audio_output {\n  type \"alsa\"\n  name \"usb\"\n"
                               "  buffer_time \"100000\"\n  period_time \"25000\"\n}\n"}});
}

TEST_CASE("outputs come in the order MPD reads them, an included file's at its include",
          "[mpd-conf]") {
    const FileMap files{{"/etc/mpd.conf", "audio_output {\n type \"alsa\"\n name \"a\"\n}\n"
                                          "include \"b.conf\"\n"
                                          "audio_output {\n type \"alsa\"\n name \"c\"\n}\n"
                                          "include \"b.conf\"\n"},
                        {"/etc/b.conf", "audio_output {\n type \"alsa\"\n name \"b\"\n}\n"}};
    std::map<std::string, int> reads;
    auto config = read_mpd_config("/etc/mpd.conf", over(files, &reads));
    REQUIRE(config);
    std::vector<std::string> names;
    for (const MpdOutput& output : config->outputs)
        names.push_back(output.name);
    CHECK(names == std::vector<std::string>{"a", "b", "c", "b"});
    CHECK(config->files == std::vector<std::string>{"/etc/mpd.conf", "/etc/b.conf"});
    CHECK(reads["/etc/b.conf"] == 1); // read once, though included twice
    // the block included twice gets its lines once
    auto changed = set_mpd_buffers("/etc/mpd.conf", over(files), 25000, 100000);
    REQUIRE(changed);
    CHECK(changed->at("/etc/b.conf") == "audio_output {\n type \"alsa\"\n name \"b\"\n"
                                        " buffer_time \"100000\"\n period_time \"25000\"\n}\n");
}

TEST_CASE("an 'include' inside a block is a setting of that block, not followed", "[mpd-conf]") {
    const FileMap files{{"/etc/mpd.conf", "decoder {\n plugin \"x\"\n include \"gone.conf\"\n}\n"}};
    auto config = read_mpd_config("/etc/mpd.conf", over(files));
    REQUIRE(config);
    CHECK(config->files == std::vector<std::string>{"/etc/mpd.conf"});
}

TEST_CASE("outputs but none of type alsa: refused, naming the first output", "[mpd-conf]") {
    const FileMap files{{"/etc/mpd.conf", "include \"o.conf\"\n"},
                        {"/etc/o.conf", "\naudio_output {\n type \"pipewire\"\n}\n"
                                        "audio_output {\n name \"x\"\n}\n"}};
    auto changed = set_mpd_buffers("/etc/mpd.conf", over(files), 25000, 100000);
    REQUIRE_FALSE(changed);
    CHECK(changed.problem ==
          "/etc/o.conf:2: this audio_output is of type 'pipewire' and no output is of type "
          "'alsa'; rtprov sets buffer_time and period_time in ALSA outputs, and one it added "
          "would be a second output that MPD plays to as well: set this output's buffer by "
          "hand, or make it type \"alsa\"");
    const FileMap untyped{{"/etc/mpd.conf", "audio_output {\n name \"x\"\n}\n"}};
    auto refused = set_mpd_buffers("/etc/mpd.conf", over(untyped), 25000, 100000);
    REQUIRE_FALSE(refused);
    CHECK_THAT(refused.problem,
               Contains("/etc/mpd.conf:1: this audio_output has no type and no output is of "
                        "type 'alsa';"));
}

TEST_CASE("a period and buffer MPD cannot run with are refused", "[mpd-conf]") {
    const FileMap files{{"/etc/mpd.conf", ""}};
    auto zero = set_mpd_buffers("/etc/mpd.conf", over(files), 0, 100000);
    REQUIRE_FALSE(zero);
    CHECK(zero.problem == "MPD's period_time 0 and buffer_time 100000 µs are not a pair MPD can "
                          "run with: each must be above 0 (MPD refuses 0) and the period no "
                          "longer than the buffer");
    CHECK_FALSE(set_mpd_buffers("/etc/mpd.conf", over(files), 25000, 0));
    CHECK_FALSE(set_mpd_buffers("/etc/mpd.conf", over(files), 100001, 100000));
}

TEST_CASE("a missing main file is 'absent'; a missing 'include' is refused, a missing "
          "include_optional is not",
          "[mpd-conf]") {
    const FileMap none;
    auto absent = read_mpd_config("/etc/mpd.conf", over(none));
    REQUIRE_FALSE(absent);
    CHECK(absent.absent);
    CHECK(absent.problem == "cannot read '/etc/mpd.conf': No such file or directory");
    auto not_set = set_mpd_buffers("/etc/mpd.conf", over(none), 25000, 100000);
    REQUIRE_FALSE(not_set);
    CHECK(not_set.absent);

    const FileMap files{{"/etc/mpd.conf", "include_optional \"a.conf\"\n\ninclude \"b.conf\"\n"}};
    auto missing = read_mpd_config("/etc/mpd.conf", over(files));
    REQUIRE_FALSE(missing);
    CHECK_FALSE(missing.absent);
    CHECK(missing.problem == "/etc/mpd.conf:3: include 'b.conf': there is no '/etc/b.conf', and "
                             "MPD refuses to start without it; create it, or write "
                             "include_optional");

    const ReadFile broken = [](const std::string& path) -> core::Result<std::string> {
        if (path == "/etc/mpd.conf")
            return {std::string("include \"b.conf\"\n"), {}, false};
        return core::Result<std::string>::failed("cannot read '" + path + "': Permission denied");
    };
    auto unreadable = read_mpd_config("/etc/mpd.conf", broken);
    REQUIRE_FALSE(unreadable);
    CHECK(unreadable.problem == "/etc/mpd.conf:1: include 'b.conf': cannot read it: cannot read "
                                "'/etc/b.conf': Permission denied");
}

TEST_CASE("include loops are refused, however the path is spelled", "[mpd-conf]") {
    const FileMap itself{{"/etc/mpd.conf", "user \"mpd\"\ninclude \"mpd.conf\"\n"}};
    CHECK(read_mpd_config("/etc/mpd.conf", over(itself)).problem ==
          "/etc/mpd.conf:2: an include loop: '/etc/mpd.conf' line 2 includes '/etc/mpd.conf'; "
          "MPD would read these files in a circle until it fails, so remove one of these "
          "includes");

    const FileMap two{{"/etc/mpd.conf", "include \"mpd.d/b.conf\"\n"},
                      {"/etc/mpd.d/b.conf", "# b\ninclude_optional \"/etc/./mpd.conf\"\n"}};
    CHECK(read_mpd_config("/etc/mpd.conf", over(two)).problem ==
          "/etc/mpd.d/b.conf:2: an include loop: '/etc/mpd.conf' line 1 includes "
          "'/etc/mpd.d/b.conf', '/etc/mpd.d/b.conf' line 2 includes '/etc/mpd.conf'; MPD would "
          "read these files in a circle until it fails, so remove one of these includes");

    const FileMap parent{{"/etc/mpd.conf", "include \"mpd.d/b.conf\"\n"},
                         {"/etc/mpd.d/b.conf", "include \"../mpd.conf\"\n"},
                         {"/etc/mpd.d/../mpd.conf", "# the same file\n"}};
    CHECK_THAT(read_mpd_config("/etc/mpd.conf", over(parent)).problem,
               Contains("/etc/mpd.d/b.conf:1: an include loop: '/etc/mpd.conf' line 1 includes "
                        "'/etc/mpd.d/b.conf', '/etc/mpd.d/b.conf' line 1 includes "
                        "'/etc/mpd.d/../mpd.conf' (the file '/etc/mpd.conf');"));

    // the same file twice, one after the other, is no loop
    const FileMap twice{{"/etc/mpd.conf", "include \"b.conf\"\ninclude \"/etc//b.conf\"\n"},
                        {"/etc/b.conf", "# b\n"}};
    CHECK(read_mpd_config("/etc/mpd.conf", over(twice)));
}

TEST_CASE("includes nested deeper than 16 files, or over 256 in all, are refused", "[mpd-conf]") {
    FileMap chain{{"/etc/mpd.conf", "include \"c1.conf\"\n"}};
    for (int i = 1; i < 16; ++i)
        chain["/etc/c" + std::to_string(i) + ".conf"] =
            "include \"c" + std::to_string(i + 1) + ".conf\"\n";
    chain["/etc/c16.conf"] = "# the 17th file\n";
    CHECK(read_mpd_config("/etc/mpd.conf", over(chain)).problem ==
          "/etc/c15.conf:1: includes nested more than 16 files deep, more than rtprov follows "
          "(MPD sets no limit); include the files from fewer levels");
    chain["/etc/c15.conf"] = "# the 16th file\n";
    CHECK(read_mpd_config("/etc/mpd.conf", over(chain)));

    // each file includes the next twice: 2^12 includes, read each once, refused at 256
    FileMap doubling;
    for (int i = 0; i < 12; ++i)
        doubling["/etc/d" + std::to_string(i) + ".conf"] = "include \"d" + std::to_string(i + 1) +
                                                           ".conf\"\ninclude \"d" +
                                                           std::to_string(i + 1) + ".conf\"\n";
    doubling["/etc/d12.conf"] = "audio_output {\n type \"alsa\"\n}\n";
    std::map<std::string, int> reads;
    auto config = read_mpd_config("/etc/d0.conf", over(doubling, &reads));
    REQUIRE_FALSE(config);
    CHECK_THAT(config.problem, Contains(": more than 256 includes in all, more than rtprov "
                                        "follows (MPD sets no limit); include fewer files"));
    for (const auto& [path, count] : reads)
        CHECK(count == 1);

    std::string many;
    for (int i = 0; i < 257; ++i)
        many += "include_optional \"x" + std::to_string(i) + ".conf\"\n";
    CHECK(refusal(many) == "/etc/mpd.conf:257: more than 256 includes, more than rtprov follows; "
                           "include fewer files");
}

TEST_CASE("what MPD's grammar refuses is refused with file:line, in words that say what to do",
          "[mpd-conf]") {
    const std::vector<std::pair<std::string, std::string>> cases{
        {"user \"mpd\ngroup \"audio\"\n",
         "/etc/mpd.conf:1: the value of 'user' has no closing '\"' on its line; close it (a "
         "value is one line)"},
        {"audio_output {\n name \"a\\\"\n}\n",
         "/etc/mpd.conf:2: the value of 'name' has no closing '\"' on its line; close it (a "
         "value is one line)"},
        {"audio_output {\n buffer_time 100000\n}\n",
         "/etc/mpd.conf:2: the value of 'buffer_time' is not in double quotes, which MPD "
         "requires; write it as buffer_time \"VALUE\""},
        {"user mpd\n", "/etc/mpd.conf:1: the value of 'user' is not in double quotes, which MPD "
                       "requires; write it as user \"VALUE\""},
        {"user \"mpd\" \"x\"\n",
         "/etc/mpd.conf:1: '\"x\"' after the value of 'user'; a line holds one setting, and "
         "only a '#' comment may follow its value"},
        {"user \"mpd\"# c\n",
         "/etc/mpd.conf:1: the value of 'user' is followed by '# c' with no blank between, "
         "which MPD refuses; put a blank after the closing '\"'"},
        {"# x\n}\n", "/etc/mpd.conf:2: '}' closes no block; remove it, or open the block with "
                     "'NAME {' on a line before"},
        {"input {\n} x\n",
         "/etc/mpd.conf:2: 'x' after '}'; only a '#' comment may follow it on its line"},
        {"input { plugin \"curl\" }\n",
         "/etc/mpd.conf:1: 'plugin \"curl\" }' after '{'; the block's settings go on the lines "
         "after it, one a line"},
        {"user \"mpd\"\naudio_output {\n type \"alsa\"\n",
         "/etc/mpd.conf:2: the block 'audio_output' opened here is not closed before the end "
         "of the file; add a line '}' after its last setting"},
        {"audio_output {\n type \"alsa\"\n decoder {\n}\n}\n",
         "/etc/mpd.conf:3: 'decoder {' inside the block 'audio_output' of line 1; MPD's blocks "
         "do not nest: close that one with '}' first"},
        {"audio_output {\n type \"alsa\"\n buffer_time \"1\"\n\n buffer_time \"2\"\n}\n",
         "/etc/mpd.conf:5: 'buffer_time' is set twice in the block 'audio_output' of line 1, "
         "first on line 3; MPD refuses that: keep one"},
        {"audio_output {\n type\n}\n",
         "/etc/mpd.conf:2: 'type' has no value; write it as type \"VALUE\""},
        {"user \"mpd\"\n\"x\" \"y\"\n",
         "/etc/mpd.conf:2: '\"x\"' does not start with a letter, as the name of an MPD setting "
         "must; fix the line or make it a '#' comment"},
        {"\xef\xbb\xbfuser \"mpd\"\n",
         "/etc/mpd.conf:1: a UTF-8 byte order mark at the start of the file, which MPD reads "
         "as part of the first line and refuses; save the file without it"},
        {"\xef\xbb\xbf# comment\n",
         "/etc/mpd.conf:1: a UTF-8 byte order mark at the start of the file, which MPD reads "
         "as part of the first line and refuses; save the file without it"},
        {"\xc3\xa4rger \"1\"\n",
         "/etc/mpd.conf:1: '\xc3\xa4rger' does not start with a letter, as the name of an MPD "
         "setting must; fix the line or make it a '#' comment"},
        {"\x01\x02x \"1\" \x7f\n", "/etc/mpd.conf:1: '\\x7f' after the value of 'x'; a line "
                                   "holds one setting, and only a '#' comment may follow its "
                                   "value"},
        {"audio_output{\n type \"alsa\"\n}\n",
         "/etc/mpd.conf:1: 'audio_output{' is not a setting name: a name holds only letters, "
         "digits and '_', and a blank separates it from its value or '{'; fix the line"},
        {"buffer-time \"1\"\n",
         "/etc/mpd.conf:1: 'buffer-time' is not a setting name: a name holds only letters, "
         "digits and '_', and a blank separates it from its value or '{'; fix the line"},
        {"audio_output\n{\n type \"alsa\"\n}\n",
         "/etc/mpd.conf:1: 'audio_output' opens a block: write 'audio_output {' on this line, "
         "its settings on the lines after, and '}' alone on the last"},
        {"decoder \"x\"\n", "/etc/mpd.conf:1: 'decoder' opens a block: write 'decoder {' on "
                            "this line, its settings on the lines after, and '}' alone on the "
                            "last"},
        {"include \"\"\n", "/etc/mpd.conf:1: 'include' of an empty path; name a file"},
        {"include\n", "/etc/mpd.conf:1: 'include' has no value; write it as include \"VALUE\""},
        {"include {\n}\n", "/etc/mpd.conf:1: the value of 'include' is not in double quotes, "
                           "which MPD requires; write it as include \"VALUE\""},
        {"include_optional \"conf.d/*.conf\"\n",
         "/etc/mpd.conf:1: 'conf.d/*.conf' is a wildcard, which MPD expands and rtprov does "
         "not; name each file in an include of its own"},
        {"# \"odd\nuser \"a\\\nb\"\n",
         "/etc/mpd.conf:2: the value of 'user' has no closing '\"' on its line; close it (a "
         "value is one line)"},
    };
    for (const auto& [text, problem] : cases) {
        INFO(text);
        CHECK(refusal(text) == problem);
    }
    const char nul[] = "user \"mpd\"\ngroup \"au\0dio\"\n";
    CHECK(refusal(std::string(nul, sizeof nul - 1)) ==
          "/etc/mpd.conf:2: a NUL byte, where MPD would end the line and skip the rest of it "
          "unread; remove it");
}

TEST_CASE("what MPD's grammar reads is read: blanks, comments, a '*' in a directory, a "
          "top-level name without a value, names MPD may not know",
          "[mpd-conf]") {
    CHECK(refusal("") == "");
    CHECK(refusal("\n\n   \n\t# only comments\n") == "");
    CHECK(refusal("user \"mpd\"") == "");                            // no final newline
    CHECK(refusal("user\t\"mpd\"\t\r\n") == "");                     // tab, CRLF
    CHECK(refusal("user \"mpd\" # a \"quote\n") == "");              // a quote in a comment
    CHECK(refusal("user \"a#b\"\n") == "");                          // '#' in a value
    CHECK(refusal("audio_output {   # the DAC\n}  # done\n") == ""); // comments after { and }
    CHECK(refusal("audio_output {\n}\n") == "");                     // an empty block
    CHECK(refusal("neighbors {\n plugin \"upnp\"\n}\n") == "");
    CHECK(refusal("future_block {\n x \"1\"\n}\n") == ""); // a block MPD may add
    CHECK(refusal("playlist_plugin {\n name \"m3u\"\n}\nplaylist_plugin {\n name \"pls\"\n}\n") ==
          ""); // repeated blocks
    CHECK(refusal("input_cache {\n size \"1 GB\"\n}\n") == "");
    CHECK(refusal("password\n") == "");  // 0.24: resets a repeatable one
    CHECK(refusal("user \"\"\n") == ""); // an empty value
    const FileMap star{{"/etc/mpd.conf", "include \"a*b/c.conf\"\n"}, {"/etc/a*b/c.conf", ""}};
    CHECK(read_mpd_config("/etc/mpd.conf", over(star))); // '*' only outside the last part
}

TEST_CASE("a line over 64 KiB is refused; one at 64 KiB is read", "[mpd-conf]") {
    const std::string at_limit = "user \"" + std::string(65536 - 7, 'x') + "\"\n";
    CHECK(at_limit.size() == 65536 + 1);
    CHECK(refusal(at_limit) == "");
    CHECK(refusal("# one\n" + std::string(65537, '#') + "\n") ==
          "/etc/mpd.conf:2: a line of 65537 bytes, longer than the 65536 rtprov reads (MPD "
          "stops reading a file, without a word, at a line over 512 KiB); shorten it");
}

TEST_CASE("hostile sizes stay bounded: 20 MB of settings reads, and big blocks and many "
          "outputs are refused",
          "[mpd-conf]") {
    // ~20 MB of ordinary lines with one output at the end: read through, linearly
    std::string big;
    big.reserve(21 << 20);
    while (big.size() < (20u << 20))
        big += "state_file \"/var/lib/mpd/state\" # a comment, and a \"quote\"\n";
    big += "audio_output {\n type \"alsa\"\n}\n";
    const FileMap files{{"/etc/mpd.conf", big}};
    auto config = read_mpd_config("/etc/mpd.conf", over(files));
    REQUIRE(config);
    CHECK(config->outputs.size() == 1);
    auto changed = set_mpd_buffers("/etc/mpd.conf", over(files), 25000, 100000);
    REQUIRE(changed);
    CHECK(changed->at("/etc/mpd.conf").size() == big.size() + 43);

    // ~20 MB on one line, and ~20 MB in one block
    CHECK_THAT(refusal(std::string(20u << 20, 'a')),
               Contains("/etc/mpd.conf:1: a line of 20971520 bytes"));
    std::string block = "decoder {\n";
    for (int i = 0; i < 1025; ++i)
        block += " s" + std::to_string(i) + " \"x\"\n";
    CHECK(refusal(block + "}\n") == "/etc/mpd.conf:1026: more than 1024 settings in the block "
                                    "of line 1, more than rtprov reads in one block; split it");
    std::string outputs;
    for (int i = 0; i < 257; ++i)
        outputs += "audio_output {\n}\n";
    CHECK(refusal(outputs) == "/etc/mpd.conf:513: more than 256 audio_output blocks, more than "
                              "rtprov reads");
    // 20 MB of blocks, each small
    std::string blocks;
    while (blocks.size() < (20u << 20))
        blocks += "decoder {\n plugin \"x\"\n enabled \"no\"\n}\n";
    CHECK(refusal(blocks) == "");
}
