// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace rtprov::profile {

// /etc/rtprov/firstboot.yaml, which an image builder puts beside rtprov-firstboot.service
// (format in docs/firstboot.md). Every key is optional: without the file, first boot
// detects the board and uses the defaults below.
struct FirstbootConfig {
    std::string profile;           // a profile name; "" detects the board
    std::vector<std::string> sets; // 'KEY=VALUE' overrides, as apply --set takes them
    bool install_packages = false; // install the PREEMPT_RT kernel and rt-tests if missing
    bool reboot = true;            // reboot once when the boot parameters must take effect
    bool trial = true;       // boot changes as a trial (apply --trial) where the loader has one
    unsigned selftest_s = 5; // latency run per CPU after the reboot; 0: no self-test
    unsigned pi_probe_s = 2; // PI-boost probe after it; 0: none
};

// Parses the file's text; 'label' names it in messages. Throws rtprov::Error with every
// unknown key and wrong value, one 'file:line:col: message' a line.
FirstbootConfig parse_firstboot_config(const std::string& text, const std::string& label);

// The keys the file may hold, in the order docs/firstboot.md lists them.
std::vector<std::string> firstboot_key_names();

} // namespace rtprov::profile
