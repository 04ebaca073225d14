// SPDX-License-Identifier: Apache-2.0
#include "provisioner/audit/filesystem_checks.hpp"

#include "tests/unit/audit_fixture.hpp"
#include "tests/unit/catch.hpp"

#include <sys/stat.h>

#include <filesystem>

using namespace rtprov;
using namespace rtprov::audit;
using namespace audit_fixture;

namespace {

bool has(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

void folder(const FakeSystem& sys, const std::string& path) {
    std::filesystem::create_directories(sys.dir.path() + "/" + path);
}

} // namespace

TEST_CASE("mpd_setting reads top-level settings, not those of a block") {
    const std::string conf = "# MPD\nmusic_directory\t\t\"/srv/my \\\"music\\\"\"\n"
                             "user \"mpd\"\naudio_output {\n  type \"alsa\"\n"
                             "  user \"other\"\n}\nmusic_directoryx \"/no\"\n";
    CHECK(mpd_setting(conf, "music_directory") == "/srv/my \"music\"");
    CHECK(mpd_setting(conf, "user") == "mpd");
    CHECK_FALSE(mpd_setting(conf, "type"));
    CHECK_FALSE(mpd_setting("#music_directory \"/x\"\n", "music_directory"));
}

TEST_CASE("the music folders: MPD's when it names one, else the common places") {
    FakeSystem sys;
    sys.write("etc/passwd", "root:x:0:0:root:/root:/bin/bash\n"
                            "mpd:x:107:29::/var/lib/mpd:/usr/sbin/nologin\n"
                            "alice:x:1000:1000::/home/alice:/bin/bash\n");
    std::vector<MusicFolder> common = music_folders(sys.view()).folders;
    // mpd is in group audio (its primary group) but logs in nowhere: no ~/Music of its own
    REQUIRE(common.size() == 4);
    CHECK(common[0].path == "/home/alice/Music");
    CHECK(common[0].source == "~/Music of 'alice'");
    CHECK(common[3].path == "/mnt");
    sys.write("etc/mpd.conf", "user \"mpd\"\nmusic_directory \"~/music\"\n");
    std::vector<MusicFolder> mpd = music_folders(sys.view()).folders;
    REQUIRE(mpd.size() == 1);
    CHECK(mpd[0].path == "/var/lib/mpd/music");
    CHECK(mpd[0].source == "MPD's music_directory in /etc/mpd.conf");
}

TEST_CASE("audio-filesystems: a folder on the kernel's own file system is ok") {
    FakeSystem sys;
    Check nothing = check_audio_filesystems(sys.view());
    CHECK(nothing.status == Status::ok);
    CHECK(nothing.reason == "no music folder was found; not there: '/srv', '/media' and '/mnt'");
    sys.write("etc/mpd.conf", "music_directory \"/var/lib/mpd/music\"\n");
    folder(sys, "var/lib/mpd/music");
    Check ok = check_audio_filesystems(sys.view());
    CHECK(ok.status == Status::ok);
    CHECK(ok.reason == "music is read through the kernel's own file systems: "
                       "'/var/lib/mpd/music' (MPD's music_directory in /etc/mpd.conf) on ext4 "
                       "from '/dev/vda' on '/'");
}

TEST_CASE("audio-filesystems: FUSE and network mounts holding music, or below it, warn") {
    FakeSystem sys;
    folder(sys, "media/usb");
    folder(sys, "mnt/nas");
    sys.write("proc/mounts", "/dev/vda / ext4 rw,relatime 0 0\n"
                             "/dev/sdb1 /media/usb\\040stick fuseblk rw,user_id=0 0 0\n"
                             "nas:/music /mnt/nas nfs4 rw,relatime 0 0\n");
    Check c = check_audio_filesystems(sys.view());
    CHECK(c.status == Status::warn);
    CHECK(has(c.reason, "'/media/usb stick' below '/media' on fuseblk from '/dev/sdb1' on "
                        "'/media/usb stick', FUSE: every read passes through a user-space daemon "
                        "(ntfs-3g or exfat-fuse)"));
    CHECK(has(c.reason, "'/mnt/nas' below '/mnt' on nfs4 from 'nas:/music' on '/mnt/nas', a "
                        "network file system"));
    CHECK(has(c.fix, "mount -t ntfs3"));
    CHECK(has(c.fix, "copy the music to a local disk"));
    // the fix changes what it saw: the kernel's ntfs3 and a local copy are not flagged
    sys.write("proc/mounts", "/dev/vda / ext4 rw,relatime 0 0\n"
                             "/dev/sdb1 /media/usb\\040stick ntfs3 rw 0 0\n");
    CHECK(check_audio_filesystems(sys.view()).status == Status::ok);
}

TEST_CASE("audio-filesystems: MPD's music over the network or a missing folder warns") {
    FakeSystem sys;
    sys.write("etc/mpd.conf", "music_directory \"nfs://nas/export/music\"\n");
    Check uri = check_audio_filesystems(sys.view());
    CHECK(uri.status == Status::warn);
    CHECK(has(uri.reason, "'nfs://nas/export/music' (MPD's music_directory in /etc/mpd.conf): "
                          "MPD reads it over the network"));
    sys.write("etc/mpd.conf", "music_directory \"/srv/music\"\n");
    Check missing = check_audio_filesystems(sys.view());
    CHECK(missing.status == Status::warn);
    CHECK(missing.reason == "MPD's music_directory '/srv/music' (in /etc/mpd.conf) does not "
                            "exist, so MPD finds no music there");
    folder(sys, "srv/music");
    CHECK(check_audio_filesystems(sys.view()).status == Status::ok);
}

TEST_CASE("audio-filesystems cannot see without /proc/mounts, or with an unreadable mpd.conf") {
    FakeSystem sys;
    sys.remove("proc/mounts");
    Check mounts = check_audio_filesystems(sys.view());
    CHECK(mounts.status == Status::warn);
    CHECK(mounts.reason == "cannot read '/proc/mounts': No such file or directory");
    sys.write("proc/mounts", "/dev/vda / ext4 rw 0 0\n");
    const std::string fifo = sys.dir.path() + "/etc/mpd.conf";
    REQUIRE(::mkfifo(fifo.c_str(), 0644) == 0);
    Check conf = check_audio_filesystems(sys.view());
    CHECK(conf.status == Status::warn);
    CHECK(has(conf.reason, "so MPD's music_directory is not known"));
}

TEST_CASE("audio-filesystems: a music folder is judged where its symlinks and '..' lead") {
    // Debian's mpd.conf has music_directory "/var/lib/mpd/music"; a link from there to a
    // NAS mount puts the music on the NAS
    FakeSystem sys;
    folder(sys, "mnt/nas");
    folder(sys, "var/lib/mpd");
    std::filesystem::create_directory_symlink("/mnt/nas", sys.dir.path() + "/var/lib/mpd/music");
    sys.write("proc/mounts", "/dev/vda / ext4 rw 0 0\nnas:/music /mnt/nas nfs4 rw 0 0\n");
    sys.write("etc/mpd.conf", "music_directory \"/var/lib/mpd/music\"\n");
    Check linked = check_audio_filesystems(sys.view());
    CHECK(linked.status == Status::warn);
    CHECK(has(linked.reason, "'/var/lib/mpd/music' (MPD's music_directory in /etc/mpd.conf), "
                             "which is '/mnt/nas', on nfs4 from 'nas:/music' on '/mnt/nas', a "
                             "network file system"));
    folder(sys, "srv");
    sys.write("etc/mpd.conf", "music_directory \"/srv/../mnt/nas\"\n");
    CHECK(check_audio_filesystems(sys.view()).status == Status::warn);
    // the NAS unmounted: its folder is on the root file system again
    sys.write("proc/mounts", "/dev/vda / ext4 rw 0 0\n");
    CHECK(check_audio_filesystems(sys.view()).status == Status::ok);
}

TEST_CASE("audio-filesystems: '~name' is that user's home, as MPD reads it") {
    FakeSystem sys;
    sys.write("etc/passwd", "root:x:0:0:root:/root:/bin/bash\n"
                            "mpd:x:107:29::/var/lib/mpd:/usr/sbin/nologin\n"
                            "bob:x:1001:1001::/home/bob:/bin/bash\n");
    sys.write("etc/mpd.conf", "music_directory \"~bob/Music\"\nuser \"mpd\"\n");
    std::vector<MusicFolder> bob = music_folders(sys.view()).folders;
    REQUIRE(bob.size() == 1);
    CHECK(bob[0].path == "/home/bob/Music");
    sys.write("etc/mpd.conf", "music_directory \"~\"\nuser \"mpd\"\n");
    CHECK(music_folders(sys.view()).folders[0].path == "/var/lib/mpd");
    folder(sys, "home/bob/Music");
    sys.write("proc/mounts", "/dev/vda / ext4 rw 0 0\nnas:/bob /home/bob nfs4 rw 0 0\n");
    sys.write("etc/mpd.conf", "music_directory \"~bob/Music\"\n");
    CHECK(check_audio_filesystems(sys.view()).status == Status::warn);
}

TEST_CASE("audio-filesystems: what it cannot place is a warning, never ok") {
    FakeSystem sys;
    folder(sys, "mnt/nas");
    sys.write("etc/mpd.conf", "music_directory \"/mnt/nas\"\n");
    SECTION("no mount holds the folder (/proc/mounts empty or garbage)") {
        for (const char* mounts : {"", "garbage\n"}) {
            sys.write("proc/mounts", mounts);
            Check c = check_audio_filesystems(sys.view());
            CHECK(c.status == Status::warn);
            CHECK(has(c.reason, "cannot tell the file system of '/mnt/nas' (MPD's "
                                "music_directory in /etc/mpd.conf): no mount of /proc/mounts "
                                "holds it"));
        }
    }
    SECTION("a '~' whose home /etc/passwd does not have") {
        sys.write("etc/mpd.conf", "music_directory \"~nobody-here/music\"\n");
        Check c = check_audio_filesystems(sys.view());
        CHECK(c.status == Status::warn);
        CHECK(has(c.reason, "cannot tell the file system of '~nobody-here/music' (MPD's "
                            "music_directory in /etc/mpd.conf): whose home is not in /etc/passwd"));
    }
    SECTION("more users than the audit looks at") {
        std::string passwd = "root:x:0:0:root:/root:/bin/bash\n";
        for (std::size_t i = 0; i < k_most_homes + 3; ++i)
            passwd += "u" + std::to_string(i) + ":x:" + std::to_string(1000 + i) + ":100::/home/u" +
                      std::to_string(i) + ":/bin/sh\n";
        sys.write("etc/passwd", passwd);
        sys.remove("etc/mpd.conf");
        MusicFolders found = music_folders(sys.view());
        CHECK(found.folders.size() == k_most_homes + 3);
        CHECK(found.homes_left_out == 3);
        Check c = check_audio_filesystems(sys.view());
        CHECK(c.status == Status::warn);
        CHECK(has(c.reason, "cannot tell the file system of the ~/Music of 3 more users (the "
                            "audit looks at 256)"));
    }
}

TEST_CASE("audio-filesystems: an mpd.conf that includes another file may set music_directory "
          "there, which is not read") {
    FakeSystem sys;
    folder(sys, "srv");
    sys.write("etc/mpd.conf", "user \"mpd\"\n");
    CHECK(check_audio_filesystems(sys.view()).status == Status::ok);
    sys.write("etc/mpd.conf", "user \"mpd\"\ninclude \"/etc/mpd.d/music.conf\"\n");
    Check c = check_audio_filesystems(sys.view());
    CHECK(c.status == Status::warn);
    CHECK(has(c.reason, "cannot tell the file system of MPD's music_directory, which "
                        "'/etc/mpd.d/music.conf' (include in /etc/mpd.conf) may set: the audit "
                        "reads /etc/mpd.conf only"));
    // one it names itself is judged
    sys.write("etc/mpd.conf", "include_optional \"x.conf\"\nmusic_directory \"/srv\"\n");
    CHECK(check_audio_filesystems(sys.view()).status == Status::ok);
}
