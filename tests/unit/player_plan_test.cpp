// SPDX-License-Identifier: Apache-2.0
#include "provisioner/player/player_plan.hpp"
#include "provisioner/player/stack_conf.hpp"

#include "provisioner/profile/app_loader.hpp"
#include "tests/unit/catch.hpp"

using namespace rtprov::core;
namespace player = rtprov::player;

namespace {

const std::vector<AppKnowledge>& apps() {
    static const std::vector<AppKnowledge> k_apps =
        rtprov::profile::load_apps(std::string(RTPROV_SOURCE_DIR) + "/board-profiles/apps");
    return k_apps;
}

AudioSize ms(std::uint32_t v) {
    return {v, AudioSize::Unit::ms};
}
AudioSize frames(std::uint32_t v) {
    return {v, AudioSize::Unit::frames};
}

Profile writing(std::vector<ServiceTuning> services) {
    Profile p;
    p.name = std::string("t");
    p.tuning.audio_buffers = BufferMode::write;
    p.tuning.services = std::move(services);
    return p;
}

ServiceTuning service(const std::string& name, std::optional<AudioSize> period,
                      std::optional<AudioSize> buffer) {
    ServiceTuning s;
    s.name = name;
    s.unit = name + ".service";
    s.period = period;
    s.buffer = buffer;
    return s;
}

TargetFacts facts_with(std::map<std::string, std::string> files,
                       std::vector<std::string> executables, TargetMode mode) {
    TargetFacts facts;
    facts.mode = mode;
    for (auto& [path, content] : files)
        facts.files[path] = FileState{content, 0644, 0, 0, std::nullopt};
    facts.executables = std::move(executables);
    return facts;
}

const FileChange* change_of(const Plan& p, const std::string& path) {
    for (const FileChange& c : p.changes)
        if (c.path == path)
            return &c;
    return nullptr;
}

const Finding* finding(const Plan& plan, const std::string& code) {
    for (const Finding& f : plan.findings)
        if (f.code == code)
            return &f;
    return nullptr;
}

const std::string k_mpd_conf = "music_directory \"/var/lib/mpd/music\"\n"
                               "audio_output {\n"
                               "\ttype\t\t\"alsa\"\n"
                               "\tname\t\t\"DAC\"\n"
                               "}\n";

} // namespace

TEST_CASE("write: MPD's ALSA output gets the profile's period and buffer in place",
          "[player-plan]") {
    Plan plan;
    player::plan_player_buffers(
        plan, writing({service("mpd", ms(25), ms(100))}),
        facts_with({{"/etc/mpd.conf", k_mpd_conf}}, {"/usr/bin/mpd"}, TargetMode::offline), apps());
    const FileChange* c = change_of(plan, "/etc/mpd.conf");
    REQUIRE(c);
    CHECK(c->old->content == k_mpd_conf);
    CHECK_THAT(c->next.content, Catch::Matchers::Contains("buffer_time \"100000\""));
    CHECK_THAT(c->next.content, Catch::Matchers::Contains("period_time \"25000\""));
    // everything before the block's end is kept
    CHECK(c->next.content.rfind(k_mpd_conf.substr(0, k_mpd_conf.size() - 2), 0) == 0);
    CHECK_FALSE(plan.refused());
}

TEST_CASE("write: an MPD output already as asked is unchanged in the file that holds it",
          "[player-plan]") {
    // Debian's mpd.conf includes /etc/mpd_local.conf, which holds the ALSA output
    const std::string local = "audio_output {\n"
                              "\ttype\t\t\"alsa\"\n"
                              "\tname\t\t\"DAC\"\n"
                              "\tbuffer_time \"100000\"\n"
                              "\tperiod_time \"25000\"\n"
                              "}\n";
    Plan plan;
    player::plan_player_buffers(
        plan, writing({service("mpd", ms(25), ms(100))}),
        facts_with(
            {{"/etc/mpd.conf", "music_directory \"/m\"\ninclude_optional \"mpd_local.conf\"\n"},
             {"/etc/mpd_local.conf", local}},
            {"/usr/bin/mpd"}, TargetMode::live),
        apps());
    CHECK(plan.changes.empty());
    CHECK(plan.unchanged == std::vector<std::string>{"/etc/mpd_local.conf"});
    CHECK_FALSE(plan.refused());
}

TEST_CASE("write: 'auto' offline writes nothing and says first boot chooses", "[player-plan]") {
    Plan plan;
    player::plan_player_buffers(
        plan, writing({service("mpd", std::nullopt, std::nullopt)}),
        facts_with({{"/etc/mpd.conf", k_mpd_conf}}, {"/usr/bin/mpd"}, TargetMode::offline), apps());
    CHECK(plan.changes.empty());
    const Finding* f = finding(plan, "buffers-auto");
    REQUIRE(f);
    CHECK_THAT(f->message, Catch::Matchers::Contains("first boot"));
}

TEST_CASE("write: a player not installed, and the other modes, write nothing", "[player-plan]") {
    Plan plan;
    player::plan_player_buffers(
        plan, writing({service("mpd", ms(25), ms(100))}),
        facts_with({{"/etc/mpd.conf", k_mpd_conf}}, {}, TargetMode::offline), apps());
    CHECK(plan.changes.empty());
    CHECK(finding(plan, "buffers-not-installed"));
    for (BufferMode mode : {BufferMode::keep, BufferMode::advise}) {
        Profile p = writing({service("mpd", ms(25), ms(100))});
        p.tuning.audio_buffers = mode;
        Plan none;
        player::plan_player_buffers(
            none, p,
            facts_with({{"/etc/mpd.conf", k_mpd_conf}}, {"/usr/bin/mpd"}, TargetMode::offline),
            apps());
        CHECK(none.changes.empty());
        CHECK(none.findings.empty());
    }
}

TEST_CASE("write: settings that do not fit the stack are refused with the key", "[player-plan]") {
    auto refused = [](ServiceTuning s, const std::string& exe, const std::string& words) {
        Plan plan;
        player::plan_player_buffers(
            plan, writing({std::move(s)}),
            facts_with({{"/etc/mpd.conf", k_mpd_conf}}, {exe}, TargetMode::offline), apps());
        CHECK(plan.refused());
        CHECK(plan.changes.empty());
        REQUIRE_FALSE(plan.findings.empty());
        CHECK_THAT(plan.findings.front().message, Catch::Matchers::Contains(words));
    };
    refused(service("mpd", frames(1024), frames(4096)), "/usr/bin/mpd", "in ms");
    refused(service("mpd", ms(60), ms(100)), "/usr/bin/mpd", "two periods");
    refused(service("mpd", ms(25), std::nullopt), "/usr/bin/mpd", "alone");
    refused(service("squeezelite", ms(15), ms(40)), "/usr/bin/squeezelite", "whole number");
    refused(service("squeezelite", ms(100), ms(600)), "/usr/bin/squeezelite", "bytes");
    refused(service("jackd", frames(256), frames(640)), "/usr/bin/jackd", "whole number");
    // PipeWire rounds a quantum down to a power of two (clock.power-of-two-quantum) and
    // clamps it to its max-quantum of 2048 and its floor of 4 (src/pipewire/settings.c):
    // 1ms is 48 frames, which would run as 32
    refused(service("pipewire", ms(1), ms(2)), "/usr/bin/pipewire",
            "a quantum of 48 frames, which PipeWire rounds down to 32");
    refused(service("pipewire", frames(4096), frames(8192)), "/usr/bin/pipewire",
            "above the 2048 frames PipeWire caps it at");
    refused(service("pipewire", frames(2), frames(8)), "/usr/bin/pipewire",
            "below the 4 frames PipeWire raises it to");
    refused(service("pipewire", frames(256), frames(1048576)), "/usr/bin/pipewire", "headroom");
    refused(service("shairport-sync", ms(10), ms(40)), "/usr/bin/shairport-sync",
            "MPD, squeezelite, JACK and PipeWire only");
}

TEST_CASE("write: moOde and Volumio are refused, naming their own place", "[player-plan]") {
    struct Case {
        std::string dir, file, name;
    };
    for (const Case& d : {Case{"/var/local/www/db", "moode-sqlite3.db", "moOde"},
                          Case{"/volumio/app/plugins/music_service/mpd", "index.js", "Volumio"}}) {
        TargetFacts facts =
            facts_with({{"/etc/mpd.conf", k_mpd_conf}}, {"/usr/bin/mpd"}, TargetMode::offline);
        facts.listings[d.dir] = {d.file};
        Plan plan;
        player::plan_player_buffers(plan, writing({service("mpd", ms(25), ms(100))}), facts,
                                    apps());
        CHECK(plan.refused());
        CHECK(plan.changes.empty());
        const Finding* f = finding(plan, "buffers-regenerated");
        REQUIRE(f);
        CHECK_THAT(f->message, Catch::Matchers::Contains(d.name));
        CHECK_THAT(f->message, Catch::Matchers::Contains("advise"));
    }
}

TEST_CASE("write: PipeWire's quantum, and WirePlumber by its version", "[player-plan]") {
    const Profile p = writing({service("pipewire", frames(256), frames(512))});
    {
        TargetFacts facts =
            facts_with({{"/usr/share/wireplumber/wireplumber.conf", "context.modules = []\n"}},
                       {"/usr/bin/pipewire"}, TargetMode::offline);
        Plan plan;
        player::plan_player_buffers(plan, p, facts, apps());
        const FileChange* pw = change_of(plan, player::k_pipewire_dropin);
        REQUIRE(pw);
        CHECK(pw->next.content.rfind(owned_file_header("t"), 0) == 0);
        CHECK_THAT(pw->next.content, Catch::Matchers::Contains("default.clock.quantum"));
        CHECK_THAT(pw->next.content, Catch::Matchers::Contains("256"));
        REQUIRE(change_of(plan, player::k_wireplumber_dropin));
        CHECK_THAT(change_of(plan, player::k_wireplumber_dropin)->next.content,
                   Catch::Matchers::Contains("api.alsa.period-size"));
    }
    {
        TargetFacts facts = facts_with({}, {"/usr/bin/pipewire"}, TargetMode::offline);
        facts.listings["/usr/share/wireplumber/main.lua.d"] = {"50-alsa-config.lua"};
        Plan plan;
        player::plan_player_buffers(plan, p, facts, apps());
        CHECK(change_of(plan, player::k_pipewire_dropin));
        CHECK_FALSE(change_of(plan, player::k_wireplumber_dropin));
        CHECK(finding(plan, "buffers-wireplumber-lua"));
        CHECK_FALSE(plan.refused());
    }
}

TEST_CASE("write: squeezelite's -a in /etc/default/squeezelite", "[player-plan]") {
    Plan plan;
    player::plan_player_buffers(plan, writing({service("squeezelite", ms(5), ms(20))}),
                                facts_with({}, {"/usr/bin/squeezelite"}, TargetMode::offline),
                                apps());
    const FileChange* c = change_of(plan, player::k_squeezelite_default);
    REQUIRE(c);
    CHECK_THAT(c->next.content, Catch::Matchers::Contains("-a 20:4"));
}

TEST_CASE("advise: what each player runs with and what a worst wake-up supports", "[player-plan]") {
    TargetFacts facts =
        facts_with({{"/etc/mpd.conf", "audio_output {\n type \"alsa\"\n name \"x\"\n buffer_time "
                                      "\"50000\"\n}\n"}},
                   {"/usr/bin/mpd", "/usr/bin/squeezelite"}, TargetMode::live);
    auto now = player::players_now(facts, apps(), nullptr);
    REQUIRE(now.size() == 2);
    CHECK(now[0].app->key == "mpd");
    REQUIRE(now[0].setting);
    CHECK(*now[0].setting == BufferSetting{ms(13), ms(50)}); // period a quarter, rounded
    CHECK_FALSE(now[0].from_default);
    CHECK(now[0].where == "/etc/mpd.conf:1");
    CHECK(now[1].app->key == "squeezelite");
    CHECK(now[1].from_default);
    CHECK(*now[1].setting == BufferSetting{ms(10), ms(40)});
    // 20 ms worst: 40 ms asked; MPD's 50 ms buffer leaves 37.5 ms
    auto advice = player::advise_players(now, 20000);
    CHECK(advice[0].now_holds == false);
    REQUIRE(advice[0].choice.setting);
    CHECK(*advice[0].choice.setting == BufferSetting{ms(15), ms(60)});
    CHECK_THAT(player::setting_text(BufferStack::mpd, *advice[0].choice.setting),
               Catch::Matchers::Contains("buffer_time \"60000\" and period_time \"15000\""));
    CHECK(player::advise_players(now, 1000)[0].now_holds == true);
    // the file that holds the output, where it is not mpd.conf itself
    CHECK_THAT(
        player::setting_text(BufferStack::mpd, *advice[0].choice.setting, "/etc/mpd_local.conf"),
        Catch::Matchers::Contains("audio_output of /etc/mpd_local.conf"));
}

TEST_CASE("advise: a configuration that cannot be read says why, never a guess", "[player-plan]") {
    TargetFacts facts = facts_with({{"/etc/mpd.conf", "audio_output {\n type \"alsa\n}\n"}},
                                   {"/usr/bin/mpd"}, TargetMode::live);
    auto now = player::players_now(facts, apps(), nullptr);
    REQUIRE(now.size() == 1);
    CHECK_FALSE(now[0].setting);
    CHECK_THAT(now[0].problem, Catch::Matchers::Contains("/etc/mpd.conf:2"));
    auto advice = player::advise_players(now, 1000);
    CHECK_FALSE(advice[0].now_holds);
}

TEST_CASE("write: PipeWire's quantum is refused when a drop-in PipeWire reads later sets it "
          "again",
          "[player-plan]") {
    // Debian 13's PipeWire 1.4.2 reads /usr/share's drop-ins, then /etc's, each folder by
    // name, the later file winning a key: a 70-*.conf comes after rtprov's 60-rtprov.conf.
    const Profile p = writing({service("pipewire", frames(256), frames(512))});
    const auto plan_with = [&](const std::string& dir, const std::string& name,
                               const std::string& content) {
        TargetFacts facts = facts_with(
            {{"/usr/share/pipewire/pipewire.conf",
              "# Daemon config file for PipeWire version \"1.4.2\" #\ncontext.properties = {}\n"},
             {dir + "/" + name, content}},
            {"/usr/bin/pipewire"}, TargetMode::offline);
        facts.listings[dir] = {name};
        Plan plan;
        player::plan_player_buffers(plan, p, facts, apps());
        return plan;
    };
    const std::string etc = "/etc/pipewire/pipewire.conf.d";
    {
        const Plan plan = plan_with(etc, "70-late.conf",
                                    "context.properties = {\n default.clock.quantum = 2048\n}\n");
        CHECK(plan.refused());
        CHECK(plan.changes.empty());
        const Finding* f = finding(plan, "buffers-pipewire-overridden");
        REQUIRE(f);
        CHECK(f->message ==
              "PipeWire's quantum is not written: '/etc/pipewire/pipewire.conf.d/70-late.conf:2' "
              "sets default.clock.quantum again, and PipeWire reads it after rtprov's "
              "'/etc/pipewire/pipewire.conf.d/60-rtprov.conf', so rtprov's 256 would not be "
              "what PipeWire runs: remove the setting there, or set tuning.audio.buffers to "
              "'advise'");
    }
    {
        // a lower floor lets a client ask for less than the measurement allows
        const Plan plan = plan_with(etc, "99-floor.conf",
                                    "context.properties = { default.clock.min-quantum = 32 }\n");
        const Finding* f = finding(plan, "buffers-pipewire-overridden");
        REQUIRE(f);
        CHECK_THAT(f->message, Catch::Matchers::Contains("'/etc/pipewire/pipewire.conf.d/"
                                                         "99-floor.conf:1' sets "
                                                         "default.clock.min-quantum again"));
    }
    {
        // a max-quantum below the quantum clamps it, wherever it is set
        const Plan plan = plan_with(etc, "10-max.conf",
                                    "context.properties = { default.clock.max-quantum = 128 }\n");
        const Finding* f = finding(plan, "buffers-pipewire-overridden");
        REQUIRE(f);
        CHECK_THAT(f->message,
                   Catch::Matchers::Contains("'/etc/pipewire/pipewire.conf.d/10-max.conf:1' sets "
                                             "default.clock.max-quantum to 128, below rtprov's "
                                             "256, and PipeWire clamps the quantum to it"));
    }
    {
        // one read before rtprov's is overridden by it: written
        const Plan plan = plan_with(etc, "10-early.conf",
                                    "context.properties = { default.clock.quantum = 2048 }\n");
        CHECK_FALSE(plan.refused());
        CHECK(change_of(plan, player::k_pipewire_dropin));
    }
    {
        // a drop-in PipeWire cannot be read with certainty
        const Plan plan =
            plan_with(etc, "70-bad.conf", "context.properties = { default.clock.quantum = \n");
        CHECK(plan.refused());
        const Finding* f = finding(plan, "buffers-pipewire-overridden");
        REQUIRE(f);
        CHECK_THAT(f->message,
                   Catch::Matchers::Contains("/etc/pipewire/pipewire.conf.d/70-bad.conf:"));
    }
}

TEST_CASE("write: a player's file the probe could not read is refused, never replaced",
          "[player-plan]") {
    // a 100 MB /etc/default/squeezelite, a folder where rtprov's PipeWire drop-in goes
    TargetFacts facts =
        facts_with({}, {"/usr/bin/squeezelite", "/usr/bin/pipewire"}, TargetMode::offline);
    facts.unreadable[player::k_squeezelite_default] = "'/r/etc/default/squeezelite' is too big";
    facts.unreadable[player::k_pipewire_dropin] = "'/r/etc/pipewire/x' is a folder";
    Plan plan;
    player::plan_player_buffers(plan,
                                writing({service("squeezelite", ms(5), ms(20)),
                                         service("pipewire", frames(256), frames(512))}),
                                facts, apps());
    CHECK(plan.refused());
    CHECK_FALSE(change_of(plan, player::k_squeezelite_default));
    CHECK_FALSE(change_of(plan, player::k_pipewire_dropin));
    std::vector<std::string> messages;
    for (const Finding& f : plan.findings)
        if (f.code == "buffers-unreadable")
            messages.push_back(f.message);
    CHECK(messages == std::vector<std::string>{
                          "'/etc/default/squeezelite' is not written: '/r/etc/default/"
                          "squeezelite' is too big; rtprov replaces only a file it has read",
                          "'/etc/pipewire/pipewire.conf.d/60-rtprov.conf' is not written: "
                          "'/r/etc/pipewire/x' is a folder; rtprov replaces only a file it has "
                          "read"});
}
