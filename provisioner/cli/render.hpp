#pragma once

#include "provisioner/core/plan.hpp"
#include "provisioner/profile/profile_loader.hpp"
#include "provisioner/target/firstboot_state.hpp"
#include "provisioner/target/journal.hpp"

#include <string>
#include <vector>

// Text and JSON forms of what the commands report. Pure: strings in, strings out.
namespace rtprov::cli {

struct PlanView {
    std::string profile;
    std::string root;
    bool live = false;
    const core::Plan* plan = nullptr;
    std::vector<std::string> retired; // managed files the profile no longer wants
};

std::string plan_text(const PlanView& view);
std::string plan_json(const PlanView& view);

std::string status_text(const target::Status& status, const std::string& root,
                        const std::optional<target::FirstbootState>& firstboot = {});
std::string status_json(const target::Status& status, const std::string& root,
                        const std::optional<target::FirstbootState>& firstboot = {});

std::string profiles_text(const std::vector<profile::ProfileEntry>& entries);
std::string profiles_json(const std::vector<profile::ProfileEntry>& entries);

} // namespace rtprov::cli
