// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the boot plan's tests share (boot_plan_test, grub_loader_test,
// rpi_firmware_loader_test): a Pi 4 profile, a Pi image's facts, its plan, a finding by code.
#include "provisioner/boot/boot_plan.hpp"

#include <algorithm>
#include <string>

namespace rtprov::boot_test {

inline core::Profile pi4() {
    core::Profile p;
    p.name = "pi4";
    p.board.cpus = 4;
    p.board.boot.loader = core::BootLoader::rpi_firmware;
    p.tuning.cores.housekeeping = core::CpuList::range(0, 2);
    p.tuning.cores.reserved = core::CpuList({3});
    return p;
}

inline core::TargetFacts pi_image(const std::string& cmdline) {
    core::TargetFacts facts;
    core::FirmwarePartition fw;
    fw.dir = "/boot/firmware";
    fw.has_boot_files = true;
    facts.firmware = fw;
    facts.files["/boot/firmware/cmdline.txt"].content = cmdline;
    return facts;
}

inline core::Plan plan_for(const std::string& cmdline) {
    core::Plan plan;
    core::Profile profile = pi4();
    boot::plan_boot(plan, profile, core::resolve_cores(profile, std::nullopt), pi_image(cmdline),
                    core::PlanOptions{});
    return plan;
}

inline const core::Finding* finding(const core::Plan& plan, const std::string& code) {
    auto it = std::find_if(plan.findings.begin(), plan.findings.end(),
                           [&](const core::Finding& f) { return f.code == code; });
    return it == plan.findings.end() ? nullptr : &*it;
}

} // namespace rtprov::boot_test
