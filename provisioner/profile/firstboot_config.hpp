// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace rtprov::profile {

// /etc/rtprov/firstboot.yaml, which 'rtprov apply --firstboot' writes beside
// rtprov-firstboot.service's enable link (format in docs/firstboot.md; an image builder may
// also write it by hand). Every key is optional: without the file, first boot detects the
// board and uses the defaults below.
struct FirstbootConfig {
    std::string profile;           // a profile name; "" detects the board
    std::vector<std::string> sets; // 'KEY=VALUE' overrides, as apply --set takes them
    bool install_packages = false; // install the PREEMPT_RT kernel and rt-tests if missing
    bool reboot = true;            // reboot once when the boot parameters must take effect
    bool trial = true;       // boot changes as a trial (apply --trial) where the loader has one
    unsigned selftest_s = 5; // latency run per CPU after the reboot; 0: no self-test
    unsigned pi_probe_s = 2; // PI-boost probe after it; 0: none
    friend bool operator==(const FirstbootConfig&, const FirstbootConfig&) = default;
};

// Parses the file's text; 'label' names it in messages. Throws rtprov::Error with every
// unknown key and wrong value, one 'file:line:col: message' a line.
FirstbootConfig parse_firstboot_config(const std::string& text, const std::string& label);

// The file's text as rtprov writes it: 'header' (comment lines, each ending in a newline),
// then every key in table order, written by the schema's writer, which quotes each value
// as YAML needs, so that parse_firstboot_config reads 'config' back whatever its strings
// hold. Throws rtprov::Error when a value cannot be written as YAML.
std::string write_firstboot_config(const FirstbootConfig& config, const std::string& header);

// Sets first boot's own keys from 'KEY=VALUE' texts (apply --firstboot-set), in order, a
// later one for the same key winning; each value is YAML and read as the file's key is
// ('reboot=false', 'selftest_s=10'). 'profile' and 'set' are refused: they are the
// apply's own --profile and --set. Throws rtprov::Error with every problem, one a line,
// each naming the option it came from.
void set_firstboot_keys(FirstbootConfig& config, const std::vector<std::string>& settings);

// The keys the file may hold, in the order docs/firstboot.md lists them.
std::vector<std::string> firstboot_key_names();

} // namespace rtprov::profile
