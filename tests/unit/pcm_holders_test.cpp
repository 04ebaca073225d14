// SPDX-License-Identifier: Apache-2.0
#include "provisioner/system/pcm_holders.hpp"

#include "tests/unit/catch.hpp"
#include "tests/unit/temp_dir.hpp"

#include <filesystem>

using namespace rtprov::system;
namespace stdfs = std::filesystem;

namespace {

// A copied /proc of a player box: MPD (812) in mpd.service playing to card 1, device 0;
// aplay (900) from a login shell holding card 0's; PipeWire (1500) of user 1000 holding
// card 2's; others holding nothing.
struct ProcTree {
    TempDir dir;

    void process(int pid, const std::string& comm, const std::string& cgroup) const {
        const std::string p = "proc/" + std::to_string(pid) + "/";
        dir.write(p + "comm", comm);
        dir.write(p + "cgroup", cgroup);
        stdfs::create_directories(dir.path() + "/" + p + "fd");
    }
    void opens(int pid, int fd, const std::string& target) const {
        stdfs::create_symlink(target, dir.path() + "/proc/" + std::to_string(pid) + "/fd/" +
                                          std::to_string(fd));
    }

    ProcTree() {
        process(1, "systemd\n", "0::/init.scope\n");
        opens(1, 0, "/dev/null");
        process(812, "mpd\n", "0::/system.slice/mpd.service\n");
        opens(812, 0, "/dev/null");
        opens(812, 7, "socket:[4242]");
        opens(812, 9, "/dev/snd/pcmC1D0p");
        opens(812, 10, "/dev/snd/controlC1");
        process(900, "aplay\n", "0::/user.slice/user-1000.slice/session-2.scope\n");
        opens(900, 4, "/dev/snd/pcmC0D0p");
        process(1500, "pipewire\n",
                "0::/user.slice/user-1000.slice/user@1000.service/session.slice/"
                "pipewire.service\n");
        opens(1500, 30, "/dev/snd/pcmC2D0p");
        process(1600, "wireplumber\n",
                "0::/user.slice/user-1000.slice/user@1000.service/session.slice/"
                "wireplumber.service\n");
        opens(1600, 3, "/dev/snd/controlC2");
    }

    PcmHolders holders(unsigned card, unsigned device) const {
        Fact<PcmHolders> h = read_pcm_holders(SysRoot(dir.path()), card, device);
        REQUIRE(h);
        return *h;
    }
};

PlaybackDevice dac() {
    PlaybackDevice d;
    d.card = 1;
    d.device = 0;
    d.card_id = "DAC";
    d.alsa_name = "hw:CARD=DAC,DEV=0";
    d.node = "/dev/snd/pcmC1D0p";
    return d;
}

PcmHolder holder(int pid, const std::string& comm, const std::string& unit,
                 std::optional<unsigned> user = std::nullopt) {
    return PcmHolder{pid, comm, unit, user};
}

} // namespace

TEST_CASE("a PCM's holders are found through the processes' descriptors, with their unit") {
    ProcTree tree;
    PcmHolders mpd = tree.holders(1, 0);
    CHECK(mpd.node == "/dev/snd/pcmC1D0p");
    REQUIRE(mpd.holders.size() == 1);
    CHECK(mpd.holders[0].pid == 812);
    CHECK(mpd.holders[0].comm == "mpd");
    CHECK(mpd.holders[0].unit == "mpd.service");
    CHECK_FALSE(mpd.holders[0].user);
    CHECK(mpd.unseen == 0);

    PcmHolders aplay = tree.holders(0, 0);
    REQUIRE(aplay.holders.size() == 1);
    CHECK(aplay.holders[0].unit == "session-2.scope");

    PcmHolders pipewire = tree.holders(2, 0);
    REQUIRE(pipewire.holders.size() == 1);
    CHECK(pipewire.holders[0].unit == "pipewire.service");
    CHECK(pipewire.holders[0].user == 1000u);

    CHECK(tree.holders(1, 1).holders.empty()); // a device nobody plays to
    CHECK(tree.holders(3, 0).holders.empty());
}

TEST_CASE("holders: a node below another root, a device unplugged, a process with no unit") {
    ProcTree tree;
    tree.process(2000, "squeezelite\n", "");
    tree.opens(2000, 5, "/srv/chroot/dev/snd/pcmC1D0p");
    tree.process(2001, "aplay\n", "0::/\n");
    tree.opens(2001, 5, "/dev/snd/pcmC1D0p (deleted)");
    tree.process(2002, "x\n", "0::/\n");
    tree.opens(2002, 5, "/dev/snd/pcmC1D0p.bak"); // not the node
    tree.opens(2002, 6, "/dev/snd/pcmC11D0p");
    PcmHolders h = tree.holders(1, 0);
    REQUIRE(h.holders.size() == 3);
    CHECK(h.holders[1].pid == 2000);
    CHECK(h.holders[1].unit.empty());
    CHECK(h.holders[2].pid == 2001);
    CHECK(h.holders[2].unit.empty());
}

TEST_CASE("holders: a process that ends while looked at is left out, an unreadable one counted") {
    ProcTree tree;
    // ended before its descriptors were listed: /proc/PID is there, its fd folder is not
    tree.dir.write("proc/3000/comm", "gone\n");
    // ended after: its descriptor is there, its comm is not
    stdfs::create_directories(tree.dir.path() + "/proc/3001/fd");
    tree.opens(3001, 4, "/dev/snd/pcmC1D0p");
    // another user's process, to a caller who is not root: its descriptors cannot be listed
    // (a file where the folder would be fails to list, as EACCES would, whoever runs this)
    tree.dir.write("proc/3002/comm", "hidden\n");
    tree.dir.write("proc/3002/fd", "");
    tree.dir.write("proc/3003/comm", "hidden2\n");
    tree.dir.write("proc/3003/fd", "");
    PcmHolders h = tree.holders(1, 0);
    REQUIRE(h.holders.size() == 1);
    CHECK(h.holders[0].pid == 812);
    CHECK(h.unseen == 2);
    CHECK(h.unseen_problem.starts_with("cannot list '/proc/3002/fd': "));

    // no /proc at all
    TempDir empty;
    CHECK_FALSE(read_pcm_holders(SysRoot(empty.path()), 0, 0));
}

TEST_CASE("holders: a hostile process name stays on one line") {
    ProcTree tree;
    tree.process(4000, "evil\nresult: pass\x1b[2J\n", "0::/system.slice/e\x1bvil.service\n");
    tree.opens(4000, 3, "/dev/snd/pcmC0D0p");
    PcmHolders h = tree.holders(0, 0);
    REQUIRE(h.holders.size() == 2);
    CHECK(h.holders[1].comm == "evil\\x0aresult: pass\\x1b[2J");
    CHECK(h.holders[1].unit == "e\\x1bvil.service");
    const std::string text = holder_refusal(dac(), h);
    CHECK(text.find_first_of("\n\x1b") == std::string::npos);
}

TEST_CASE("the command that frees a device: the service stopped, else the process killed") {
    CHECK(free_command(holder(812, "mpd", "mpd.service")) ==
          std::vector<std::string>{"systemctl", "stop", "mpd.service"});
    CHECK(
        free_command(holder(1500, "mpd", "mpd.service", 1000)) ==
        std::vector<std::string>{"systemctl", "--user", "--machine=1000@", "stop", "mpd.service"});
    CHECK(free_command(holder(900, "aplay", "session-2.scope")) ==
          std::vector<std::string>{"kill", "900"});
    CHECK(free_command(holder(900, "aplay", "")) == std::vector<std::string>{"kill", "900"});
    // a user's whole manager is not stopped for a test
    CHECK(free_command(holder(77, "systemd", "user@1000.service")) ==
          std::vector<std::string>{"kill", "77"});
}

TEST_CASE(
    "the busy device's refusal names the holder, its service, the command and --stop-player") {
    PcmHolders h;
    h.node = "/dev/snd/pcmC1D0p";
    h.holders = {holder(812, "mpd", "mpd.service")};
    CHECK(holder_refusal(dac(), h) ==
          "'hw:CARD=DAC,DEV=0' (card 1 'DAC', '/dev/snd/pcmC1D0p') is in use by mpd (812) of "
          "'mpd.service': run 'systemctl stop mpd.service' to free it, or pass --stop-player to "
          "stop 'mpd.service' for the run and start it again afterwards");

    h.holders = {holder(900, "aplay", "session-2.scope")};
    CHECK(holder_refusal(dac(), h) ==
          "'hw:CARD=DAC,DEV=0' (card 1 'DAC', '/dev/snd/pcmC1D0p') is in use by aplay (900) of "
          "'session-2.scope': run 'kill 900' to free it");

    h.holders = {holder(812, "mpd", "mpd.service", 1000), holder(901, "aplay", "")};
    h.unseen = 3;
    h.unseen_problem = "cannot list '/proc/5/fd': Permission denied";
    CHECK(holder_refusal(dac(), h) ==
          "'hw:CARD=DAC,DEV=0' (card 1 'DAC', '/dev/snd/pcmC1D0p') is in use by mpd (812) of "
          "user 1000's 'mpd.service' and aplay (901), in no service: run 'systemctl --user "
          "--machine=1000@ stop mpd.service' and 'kill 901' to free it, or pass --stop-player "
          "to stop 'mpd.service' for the run and start it again afterwards; 3 processes could "
          "not be looked at (cannot list '/proc/5/fd': Permission denied), and may hold it too");
}

TEST_CASE("a busy device whose holder cannot be seen is not said to be held by nobody") {
    PcmHolders h;
    h.node = "/dev/snd/pcmC1D0p";
    h.unseen = 1;
    h.unseen_problem = "cannot list '/proc/5/fd': Permission denied";
    CHECK(holder_refusal(dac(), h) ==
          "'hw:CARD=DAC,DEV=0' (card 1 'DAC', '/dev/snd/pcmC1D0p') is in use, and by no process "
          "rtprov can see: 1 process could not be looked at (cannot list '/proc/5/fd': "
          "Permission denied); run rtprov as root to see who holds it");
    h.unseen = 0;
    CHECK(holder_refusal(dac(), h) ==
          "'hw:CARD=DAC,DEV=0' (card 1 'DAC', '/dev/snd/pcmC1D0p') is in use, but no process in "
          "/proc has it open (a process of another PID namespace, such as a container's, may): "
          "stop what plays to it");
}

TEST_CASE("a sound server among the holders: PipeWire, JACK or PulseAudio, by process name") {
    CHECK_FALSE(sound_server_of({}));
    CHECK_FALSE(sound_server_of({holder(812, "mpd", "mpd.service")}));
    for (const char* comm : {"pipewire", "pipewire-pulse", "wireplumber"}) {
        std::optional<ServerHold> s = sound_server_of({holder(1, "mpd", ""), holder(2, comm, "")});
        REQUIRE(s);
        CHECK(s->server == SoundServer::pipewire);
        CHECK(s->holder.pid == 2);
    }
    CHECK(sound_server_of({holder(3, "jackd", "")})->server == SoundServer::jack);
    CHECK(sound_server_of({holder(3, "jackdbus", "")})->server == SoundServer::jack);
    CHECK(sound_server_of({holder(3, "pulseaudio", "")})->server == SoundServer::pulseaudio);
    CHECK(to_string(SoundServer::jack) == "JACK");
    CHECK(server_pcm(SoundServer::pipewire) == "pipewire");
    CHECK(server_pcm(SoundServer::jack) == "jack");
    CHECK(server_pcm(SoundServer::pulseaudio) == "pulse");
    // PipeWire: a holder's name as the kernel keeps it
    ProcTree tree;
    std::optional<ServerHold> s = sound_server_of(tree.holders(2, 0).holders);
    REQUIRE(s);
    CHECK(s->server == SoundServer::pipewire);
    CHECK(s->holder.unit == "pipewire.service");
}

TEST_CASE("an ALSA plugin is available with its module and a configuration alsa-lib loads") {
    TempDir dir;
    const SysRoot root(dir.path());
    const std::string lib = alsa_plugin_dirs().front();
    PluginCheck none = plugin_available(root, "pipewire");
    CHECK_FALSE(none.available);
    CHECK(none.problem.starts_with("alsa-lib has no 'pipewire' plugin: "
                                   "'libasound_module_pcm_pipewire.so' is in none of '" +
                                   lib + "'"));
    CHECK(none.problem.ends_with("; install pipewire-alsa"));

    // as Debian's pipewire-alsa installs it
    dir.write(lib.substr(1) + "/libasound_module_pcm_pipewire.so", "");
    dir.write("usr/share/alsa/alsa.conf.d/50-pipewire.conf", "pcm.pipewire {}\n");
    PluginCheck unlinked = plugin_available(root, "pipewire");
    CHECK_FALSE(unlinked.available);
    CHECK(unlinked.module == lib + "/libasound_module_pcm_pipewire.so");
    CHECK(unlinked.problem ==
          "alsa-lib has the 'pipewire' plugin ('" + lib +
              "/libasound_module_pcm_pipewire.so') but no PCM 'pipewire': "
              "'/usr/share/alsa/alsa.conf.d/50-pipewire.conf' defines it but is not linked into "
              "'/etc/alsa/conf.d', which alsa-lib reads; link it there");
    stdfs::create_directories(dir.path() + "/etc/alsa/conf.d");
    stdfs::create_symlink("/usr/share/alsa/alsa.conf.d/50-pipewire.conf",
                          dir.path() + "/etc/alsa/conf.d/50-pipewire.conf");
    PluginCheck ok = plugin_available(root, "pipewire");
    CHECK(ok.available);
    CHECK(ok.config == "/etc/alsa/conf.d/50-pipewire.conf");
    CHECK(ok.problem.empty());

    // JACK: the module alone is not enough; a dangling link is no configuration
    dir.write(lib.substr(1) + "/libasound_module_pcm_jack.so", "");
    stdfs::create_symlink("/usr/share/alsa/alsa.conf.d/50-jack.conf",
                          dir.path() + "/etc/alsa/conf.d/50-jack.conf");
    PluginCheck jack = plugin_available(root, "jack");
    CHECK_FALSE(jack.available);
    CHECK(jack.problem.ends_with("no configuration in '/etc/alsa/conf.d' defines it; reinstall "
                                 "libasound2-plugins"));
    dir.write("usr/share/alsa/alsa.conf.d/50-jack.conf", "pcm.jack {}\n");
    CHECK(plugin_available(root, "jack").available);
}
