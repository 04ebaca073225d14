// SPDX-License-Identifier: Apache-2.0
#include "provisioner/audit/accounts.hpp"

#include "tests/unit/audit_fixture.hpp"
#include "tests/unit/catch.hpp"

using namespace rtprov;
using namespace rtprov::audit;
using namespace audit_fixture;

namespace {

const char* k_passwd = "root:x:0:0:root:/root:/bin/bash\n"
                       "mpd:x:107:29::/var/lib/mpd:/usr/sbin/nologin\n"
                       "alice:x:1000:1000:Alice:/home/alice:/bin/bash\n"
                       "bob:x:1001:1001::/home/bob:/bin/zsh\n"
                       "svc:x:1002:1002::/srv/svc:/usr/sbin/nologin\n"
                       "dj:x:1003:29::/home/dj:/bin/bash\n"
                       "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n";

ServiceExpectation mpd_service() {
    ServiceExpectation s;
    s.unit = "mpd.service";
    s.profile_key = "mpd";
    s.app_name = "MPD";
    s.app_threads = "rtio and output:* threads";
    s.app_sched = ThreadSched{core::SchedPolicy::fifo, 40};
    s.min_rtprio = 40;
    return s;
}

std::vector<std::string> names(const std::vector<AudioUser>& users) {
    std::vector<std::string> out;
    for (const AudioUser& u : users)
        out.push_back(u.name);
    return out;
}

} // namespace

TEST_CASE("passwd and group lines are read field by field; malformed ones are left out") {
    const std::vector<PasswdEntry> users =
        parse_passwd("# comment\nroot:x:0:0:root:/root:/bin/bash\r\nshort:x:1\n"
                     "bad:x:uid:0::/:/bin/sh\nalice:x:1000:100:A:/home/alice:/bin/bash\n");
    REQUIRE(users.size() == 2);
    CHECK(users[1].name == "alice");
    CHECK(users[1].uid == 1000);
    CHECK(users[1].gid == 100);
    CHECK(users[1].home == "/home/alice");
    CHECK(users[1].shell == "/bin/bash");
    const std::vector<GroupEntry> groups =
        parse_group("audio:x:29:alice,,bob\nodd:x:x:\nplugdev:x:46:\nshort:x:1\n");
    REQUIRE(groups.size() == 2);
    CHECK(groups[0].members == std::vector<std::string>{"alice", "bob"});
    CHECK(groups[1].members.empty());
}

TEST_CASE("regular users are uid 1000-60000 with a shell to log in with") {
    const std::vector<PasswdEntry> users = parse_passwd(k_passwd);
    std::vector<std::string> regular;
    for (const PasswdEntry& u : users)
        if (is_regular_user(u))
            regular.push_back(u.name);
    CHECK(regular == std::vector<std::string>{"alice", "bob", "dj"});
}

TEST_CASE("the users who log in to run audio: group audio's members, primary group included") {
    FakeSystem sys;
    sys.write("etc/passwd", k_passwd);
    sys.write("etc/group", "root:x:0:\naudio:x:29:alice\nalice:x:1000:\n");
    sys.process(900, "/user.slice/user-1000.slice/session-1.scope", {{900, "pipewire"}},
                limits_text("0", "8388608"), 1000);
    const SystemView v = sys.view();
    AudioUsers users = audio_users(v, nullptr);
    CHECK(users.problem.empty());
    // dj has audio as their primary group; so has mpd (Debian's adduser --ingroup audio),
    // a service's account, which logs in nowhere and so gets no limits from pam_limits
    CHECK(users.judged == "the members of group audio who can log in ('mpd' has no login "
                          "shell: a service's account)");
    REQUIRE(names(users.logins) == std::vector<std::string>{"alice", "dj"});
    CHECK(users.logins[0].uid == 1000u);
    CHECK(users.logins[0].groups == std::vector<std::string>{"audio", "alice"});
    CHECK(users.logins[0].gids == std::vector<unsigned>{29, 1000});
    REQUIRE(users.logins[0].processes.size() == 1);
    CHECK(users.logins[0].processes[0]->pid == 900);
    CHECK(users.logins[1].groups == std::vector<std::string>{"audio"});
    CHECK(users.logins[1].uid == 1003u);
    CHECK(users.services.empty());
}

TEST_CASE("with no member in group audio and no profile, the regular users are judged; "
          "with neither, it says so") {
    FakeSystem sys;
    sys.write("etc/passwd", "root:x:0:0:root:/root:/bin/bash\n"
                            "alice:x:1000:1000:Alice:/home/alice:/bin/bash\n"
                            "bob:x:1001:1001::/home/bob:/bin/zsh\n"
                            "svc:x:1002:1002::/srv/svc:/usr/sbin/nologin\n");
    AudioUsers users = audio_users(sys.view(), nullptr);
    CHECK(names(users.logins) == std::vector<std::string>{"alice", "bob"});
    CHECK(users.judged == "group audio has no member, so the regular users of /etc/passwd (uid "
                          "1000-60000 with a login shell)");
    CHECK(users.logins[0].how == "a regular user (uid 1000)");

    sys.write("etc/passwd", "root:x:0:0:root:/root:/bin/bash\n");
    AudioUsers none = audio_users(sys.view(), nullptr);
    CHECK(none.logins.empty());
    CHECK(none.judged == "group audio has no member and /etc/passwd no regular user (uid "
                         "1000-60000 with a login shell)");
}

TEST_CASE("a profile's service runs as the user of its processes, else its unit's User=, else "
          "root") {
    FakeSystem sys;
    sys.write("etc/passwd", k_passwd);
    Expectation e;
    e.services.push_back(mpd_service());
    sys.process(812, "/system.slice/mpd.service", {{812, "mpd"}}, limits_text("40", "unlimited"),
                107);
    SystemView running = read_system_view(sys.dir.path(), {"mpd.service"});
    AudioUsers users = audio_users(running, &e);
    REQUIRE(users.services.size() == 1);
    CHECK(users.services[0].user.name == "mpd");
    CHECK(users.services[0].user.how == "runs 'mpd.service' (pid 812)");
    CHECK(users.services[0].user.processes.size() == 1);
    // dj is in group audio by their primary group and logs in
    CHECK(names(users.logins) == std::vector<std::string>{"dj"});
    sys.write("etc/passwd", std::string(k_passwd).substr(0, std::string(k_passwd).find("dj:")));
    AudioUsers only_services = audio_users(read_system_view(sys.dir.path(), {"mpd.service"}), &e);
    // no member of group audio logs in: with a profile service, nobody else is judged
    CHECK(only_services.logins.empty());
    CHECK(only_services.judged == "group audio has no member who can log in ('mpd' has no login "
                                  "shell: a service's account), and the audio runs as the "
                                  "profile's services");

    sys.remove("proc/812");
    sys.write("lib/systemd/system/mpd.service", "[Service]\nExecStart=/usr/bin/mpd\n");
    AudioUsers root = audio_users(read_system_view(sys.dir.path(), {"mpd.service"}), &e);
    CHECK(root.services[0].user.name == "root");
    CHECK(root.services[0].user.uid == 0u);
    sys.write("etc/systemd/system/mpd.service.d/10-user.conf", "[Service]\nUser=alice\n");
    AudioUsers user = audio_users(read_system_view(sys.dir.path(), {"mpd.service"}), &e);
    CHECK(user.services[0].user.name == "alice");
    CHECK(user.services[0].user.uid == 1000u);
    CHECK(user.services[0].user.how ==
          "User= of 'mpd.service' (/etc/systemd/system/mpd.service.d/10-user.conf:2)");
    // the unit was not asked for
    AudioUsers unread = audio_users(sys.view(), &e);
    CHECK(unread.services[0].user.name == "?");
    CHECK(unread.services[0].user.how == "'mpd.service' is not running and its unit was not read");
}

TEST_CASE("accounts that cannot be read are a problem, never an empty list") {
    FakeSystem sys;
    sys.remove("etc/passwd");
    AudioUsers users = audio_users(sys.view(), nullptr);
    CHECK(users.problem == "cannot read '/etc/passwd': No such file or directory");
    sys.remove("etc/group");
    CHECK(audio_users(sys.view(), nullptr).problem ==
          "cannot read '/etc/group': No such file or directory; cannot read '/etc/passwd': No "
          "such file or directory");
}
