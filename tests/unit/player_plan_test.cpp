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
