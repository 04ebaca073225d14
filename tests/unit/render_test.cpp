// SPDX-License-Identifier: Apache-2.0
#include "provisioner/cli/json.hpp"
#include "provisioner/cli/render.hpp"

#include "tests/unit/catch.hpp"

using namespace rtprov;

namespace {

// What a live apply of x86-debian13 writes, and what systemd must then be told.
systemd::OnlineActions x86_actions() {
    systemd::OnlineActions actions;
    actions.reload = true;
    actions.try_restart = {"mpd.service"};
    actions.restart = {"rtprov-sched-features.service"};
    return actions;
}

target::ApplyResult x86_applied() {
    target::ApplyResult applied;
    applied.written = {"/etc/rtprov/profile.yaml", "/etc/default/grub.d/90-rtprov.cfg",
                       "/etc/systemd/system/mpd.service.d/60-rtprov.conf",
                       "/etc/systemd/system/rtprov-sched-features.service"};
    applied.ran = {"update-grub"};
    return applied;
}

} // namespace

TEST_CASE("a live apply systemd could not be told about says what is done, what is not, and "
          "how to finish or undo it") {
    systemd::OnlineResult online;
    online.failure = "cannot reach systemd on the system bus: No such file or directory; is this "
                     "a running systemd system? (offline images: use --root)";
    online.not_done = systemd::online_steps(x86_actions());
    CHECK(cli::unfinished_live_apply("x86-debian13", x86_applied(), online) ==
          "applied profile 'x86-debian13' to the files, but systemd was not told everything: "
          "cannot reach systemd on the system bus: No such file or directory; is this a running "
          "systemd system? (offline images: use --root)\n"
          "written and recorded in /var/lib/rtprov/state: /etc/rtprov/profile.yaml, "
          "/etc/default/grub.d/90-rtprov.cfg, /etc/systemd/system/mpd.service.d/60-rtprov.conf, "
          "/etc/systemd/system/rtprov-sched-features.service\n"
          "ran: update-grub\n"
          "not done: daemon-reload, try-restart mpd.service, restart "
          "rtprov-sched-features.service\n"
          "to finish: systemctl daemon-reload && systemctl try-restart mpd.service && systemctl "
          "restart rtprov-sched-features.service\n"
          "or undo the apply: rtprov rollback --live");
}

TEST_CASE("when systemd refused a step, the message keeps what it did and starts there") {
    auto steps = systemd::online_steps(x86_actions());
    systemd::OnlineResult online;
    online.done = {steps[0]};
    online.not_done = {steps[1], steps[2]};
    online.failure = "systemd: try-restart mpd.service failed: Unit mpd.service is masked.";
    target::ApplyResult applied = x86_applied();
    applied.ran.clear();
    applied.retired = {"/etc/systemd/system/rtprov-cpu-dma-latency.service"};
    CHECK(cli::unfinished_live_apply("x86-debian13", applied, online) ==
          "applied profile 'x86-debian13' to the files, but systemd was not told everything: "
          "systemd: try-restart mpd.service failed: Unit mpd.service is masked.\n"
          "written and recorded in /var/lib/rtprov/state: /etc/rtprov/profile.yaml, "
          "/etc/default/grub.d/90-rtprov.cfg, /etc/systemd/system/mpd.service.d/60-rtprov.conf, "
          "/etc/systemd/system/rtprov-sched-features.service\n"
          "retired (no longer in the profile), recorded there too: "
          "/etc/systemd/system/rtprov-cpu-dma-latency.service\n"
          "systemd was told: daemon-reload\n"
          "not done: try-restart mpd.service, restart rtprov-sched-features.service\n"
          "to finish: systemctl try-restart mpd.service && systemctl restart "
          "rtprov-sched-features.service\n"
          "or undo the apply: rtprov rollback --live");

    target::RollbackResult rolled_back;
    rolled_back.restored = {"/etc/default/grub"};
    rolled_back.removed = {"/etc/systemd/system/rtprov-sched-features.service"};
    systemd::OnlineResult unreachable;
    unreachable.failure = "cannot reach systemd on the system bus: No such file or directory";
    unreachable.not_done = {steps[0]};
    CHECK(cli::unfinished_live_rollback(rolled_back, unreachable) ==
          "rolled back the files, but systemd was not told everything: cannot reach systemd on "
          "the system bus: No such file or directory\n"
          "restored: /etc/default/grub\n"
          "removed: /etc/systemd/system/rtprov-sched-features.service\n"
          "not done: daemon-reload\n"
          "to finish: systemctl daemon-reload");
}

TEST_CASE("a JSON string escapes every control byte, DEL included, and keeps valid UTF-8") {
    CHECK(cli::json_string(std::string("a\x7f"
                                       "b\x01\"\\\n",
                                       7)) == "\"a\\u007fb\\u0001\\\"\\\\\\n\"");
    CHECK(cli::json_string("µs") == "\"µs\"");
    CHECK(cli::json_string("\xff") == "\"\\u00ff\"");
    // C1 controls (U+009B is a CSI to some terminals) are escaped too; U+00A0 on is text
    CHECK(cli::json_string("a\xc2\x9b"
                           "b\xc2\xa0") == "\"a\\u009bb\xc2\xa0\"");
}

TEST_CASE("the status textfile has HELP and TYPE for every metric and escapes label values") {
    target::Status status;
    status.state = target::State{};
    status.state->status = target::ApplyStatus::applied;
    status.state->profile = "pi\"4";
    status.state->profile_sha256 = "abc";
    target::ManagedFile a, b;
    a.path = "/etc/a\\b";
    b.path = "/boot/firmware/cmdline.txt";
    status.files = {{a, target::Drift::modified, ""}, {b, target::Drift::none, ""}};
    status.state->pending = {{"kernel-install", "add", "6.12\"x", "/boot/vmlinuz-6.12\"x"}};
    const std::string text =
        cli::status_prometheus(status, {"Raspberry Pi 4\nModel B", "1.2.3", 1764806400});
    const std::string head =
        "# HELP rtprov_profile_info The profile rtprov applied here (rtprov status): 1, with "
        "the profile, its board, the SHA-256 of the resolved profile and rtprov's version in "
        "labels; absent when none is applied.\n"
        "# TYPE rtprov_profile_info gauge\n"
        "rtprov_profile_info{profile=\"pi\\\"4\",board=\"Raspberry Pi 4\\nModel "
        "B\",sha256=\"abc\",version=\"1.2.3\"} 1\n"
        "# HELP rtprov_profile_applied 1 when rtprov has applied a profile here and the apply "
        "finished, 0 when none is applied or an apply or rollback was interrupted.\n"
        "# TYPE rtprov_profile_applied gauge\n"
        "rtprov_profile_applied 1\n"
        "# HELP rtprov_managed_files Files rtprov wrote here and keeps track of.\n"
        "# TYPE rtprov_managed_files gauge\n"
        "rtprov_managed_files 2\n"
        "# HELP rtprov_drifted_files Managed files changed by hand or missing since rtprov "
        "wrote them ('rtprov status --diff' shows how).\n"
        "# TYPE rtprov_drifted_files gauge\n"
        "rtprov_drifted_files 1\n"
        "# HELP rtprov_file_drift Per managed file: 1 when it was changed by hand or is "
        "missing, else 0; the label drift says which (none, foreign-edit, modified, "
        "missing).\n"
        "# TYPE rtprov_file_drift gauge\n"
        "rtprov_file_drift{path=\"/etc/a\\\\b\",drift=\"modified\"} 1\n"
        "rtprov_file_drift{path=\"/boot/firmware/cmdline.txt\",drift=\"none\"} 0\n"
        "# HELP rtprov_pending_commands Commands the last apply planned that did not finish (an "
        "update-grub that failed or was killed): above 0 the boot configuration may lack what "
        "rtprov wrote, and rtprov status exits 3.\n"
        "# TYPE rtprov_pending_commands gauge\n"
        "rtprov_pending_commands 1\n"
        "# HELP rtprov_pending_command Per command the last apply did not finish: 1, the command "
        "in the label command; absent when none is pending.\n"
        "# TYPE rtprov_pending_command gauge\n"
        "rtprov_pending_command{command=\"kernel-install add '6.12\\\"x' "
        "'/boot/vmlinuz-6.12\\\"x'\"} 1\n"
        "# HELP rtprov_status_last_check_timestamp_seconds When rtprov status last looked at "
        "the managed files, in seconds since the epoch.\n"
        "# TYPE rtprov_status_last_check_timestamp_seconds gauge\n"
        "rtprov_status_last_check_timestamp_seconds 1764806400\n";
    CHECK(text.substr(0, head.size()) == head);
    // first boot never ran, no trial: said, not left out
    CHECK(text.substr(head.size()) ==
          "# HELP rtprov_firstboot_info The appliance's first boot (rtprov firstboot): 1, its "
          "phase (none: it never ran; started, rebooting, done, failed), the profile it "
          "applied, its reboots and the self-test's and audit's outcomes in labels.\n"
          "# TYPE rtprov_firstboot_info gauge\n"
          "rtprov_firstboot_info{phase=\"none\"} 1\n"
          "# HELP rtprov_trial_info The trial of a boot configuration (rtprov trial status): 1, "
          "its phase in the labels (none: no trial).\n"
          "# TYPE rtprov_trial_info gauge\n"
          "rtprov_trial_info{phase=\"none\"} 1\n");
}

TEST_CASE("a label value keeps valid UTF-8 and writes any other byte as its code point") {
    // 0xff 0xfe alone are no UTF-8; node-exporter drops a file with them
    CHECK(cli::prometheus_label("Pi\xff\xfe"
                                " x \xc3\xa9 \xe2\x82\xac") == "\"Pi\xc3\xbf\xc3\xbe"
                                                               " x \xc3\xa9 \xe2\x82\xac\"");
    // an overlong '/' (0xc0 0xaf) and a lone surrogate (0xed 0xa0 0x80) are not UTF-8 either
    CHECK(cli::prometheus_label("\xc0\xaf\xed\xa0\x80") ==
          "\"\xc3\x80\xc2\xaf\xc3\xad\xc2\xa0\xc2\x80\"");
}

TEST_CASE("the status textfile carries first boot's outcome") {
    target::FirstbootState firstboot;
    firstboot.phase = "done";
    firstboot.profile = "pi5";
    firstboot.reboots = 1;
    firstboot.selftest = "passed";
    firstboot.audit = "did not pass";
    const std::string text = cli::status_prometheus(target::Status{}, {"", "1.2.3", 5}, firstboot);
    CHECK(text.find("\nrtprov_firstboot_info{phase=\"done\",profile=\"pi5\",reboots=\"1\","
                    "selftest=\"passed\",audit=\"did not pass\"} 1\n") != std::string::npos);
    firstboot.phase = "";
    CHECK(cli::status_prometheus(target::Status{}, {"", "1.2.3", 5}, firstboot)
              .find("\nrtprov_firstboot_info{phase=\"started\",") != std::string::npos);
}

TEST_CASE("status names a command the last apply did not finish, and what to run") {
    target::Status status;
    status.state = target::State{};
    status.state->status = target::ApplyStatus::applied;
    status.state->profile = "x86";
    status.state->pending = {{"update-grub"}};
    const std::string offline = cli::status_text(status, "/img");
    CHECK(offline.find("\npending:     'update-grub' did not finish in the last apply, so the "
                       "boot configuration may lack what rtprov wrote; run the same 'rtprov "
                       "apply' again: with --regenerate-boot=now it runs it (where the target's "
                       "/dev and /boot are in place), without it records it for first boot\n"
                       "not finished: every file rtprov manages is as rtprov wrote it, but 1 "
                       "command of the last apply did not finish (above)\n") != std::string::npos);
    CHECK(cli::status_text(status, "/", {}, {}, true)
              .find("\npending:     'update-grub' did not finish in the last apply, so the "
                    "boot configuration may lack what rtprov wrote; run the same 'rtprov apply "
                    "--live' again to run it\n") != std::string::npos);
    status.state->pending = {{"apt-get", "update"}};
    CHECK(cli::status_text(status, "/img")
              .find("\npending:     'apt-get update' did not finish in the last apply; run the "
                    "same 'rtprov apply' again with --regenerate-boot=now to run it\n") !=
          std::string::npos);
    status.state->pending = {{"update-grub"}, {"apt-get", "update"}};
    CHECK(cli::status_json(status, "/img")
              .find(",\n  \"pending\": [[\"update-grub\"], "
                    "[\"apt-get\", \"update\"]],\n") != std::string::npos);
    status.state->pending.clear();
    CHECK(cli::status_json(status, "/img").find(",\n  \"pending\": [],\n") != std::string::npos);
    CHECK(cli::status_text(status, "/img").find("\nno drift: ") != std::string::npos);
    const std::string text = cli::status_prometheus(status, {"", "1.2.3", 5});
    CHECK(text.find("\nrtprov_pending_commands 0\n") != std::string::npos);
    CHECK(text.find("\nrtprov_pending_command{") == std::string::npos);
}

TEST_CASE("the status textfile without an applied profile has no info sample and applied 0") {
    const std::string text = cli::status_prometheus(target::Status{}, {"", "1.2.3", 5});
    CHECK(text.find("\nrtprov_profile_info{") == std::string::npos);
    CHECK(text.find("\nrtprov_profile_applied 0\n") != std::string::npos);
    CHECK(text.find("\nrtprov_drifted_files 0\n") != std::string::npos);
    CHECK(text.find("# TYPE rtprov_profile_info gauge\n") != std::string::npos);
}

TEST_CASE("the profile list has one line per profile, whatever its file is named") {
    std::vector<profile::ProfileEntry> entries = {
        {"x\nresult: passed", "/etc/rtprov/profiles/x\nresult: passed.yaml", "target", "a\nb",
         false},
        {"pi4", "/usr/share/rtprov/profiles/pi4.yaml", "built-in", "Raspberry Pi 4", false}};
    CHECK(cli::profiles_text(entries) == "NAME                 SOURCE    DESCRIPTION\n"
                                         "x\\x0aresult: passed  target    a\\x0ab\n"
                                         "pi4                  built-in  Raspberry Pi 4\n");
}
