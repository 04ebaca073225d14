// SPDX-License-Identifier: Apache-2.0
#include "provisioner/core/irq_layout.hpp"

#include <algorithm>

namespace rtprov::core {

std::vector<AudioThreads> audio_threads(const Profile& profile,
                                        const std::vector<AppKnowledge>& apps) {
    std::vector<AudioThreads> out;
    for (const ServiceTuning& s : profile.tuning.services) {
        const AppKnowledge* app = find_app(apps, s.name, s.unit);
        if (!s.policy && app)
            out.push_back({app->name + "'s " + app->threads, app->priority,
                           std::max(app->priority, app->highest_priority)});
        else if (s.policy && has_static_priority(*s.policy) && s.priority)
            out.push_back({"'" + s.unit + "' at " + kernel_name(*s.policy) + " " +
                               std::to_string(*s.priority) + " unit-wide",
                           *s.priority, *s.priority});
    }
    return out;
}

namespace {

const AudioThreads* highest_of(const std::vector<AudioThreads>& audio) {
    auto it = std::max_element(audio.begin(), audio.end(),
                               [](const auto& a, const auto& b) { return a.highest < b.highest; });
    return it == audio.end() ? nullptr : &*it;
}

const AudioThreads* lowest_of(const std::vector<AudioThreads>& audio) {
    auto it = std::min_element(audio.begin(), audio.end(),
                               [](const auto& a, const auto& b) { return a.lowest < b.lowest; });
    return it == audio.end() ? nullptr : &*it;
}

} // namespace

IrqLayout irq_layout(const Profile& profile, const std::vector<AppKnowledge>& apps,
                     std::vector<ProfileProblem>& problems) {
    using Mode = IrqPriority::Mode;
    const IrqTuning& t = profile.tuning.irqs;
    IrqLayout layout;
    layout.audio = audio_threads(profile, apps);
    const AudioThreads* high = highest_of(layout.audio);
    const AudioThreads* low = lowest_of(layout.audio);
    auto problem = [&](const char* key, const std::string& message) {
        problems.push_back({profile.origin_of(key, {}), message});
    };
    const char* sound_key = "tuning.irqs.sound_priority";
    const char* others_key = "tuning.irqs.other_priority";

    // The sound path: above the threads it feeds, or they would wait for their own data.
    if (t.sound.mode == Mode::value) {
        layout.sound = t.sound.value;
        layout.sound_reason = "as the profile says";
        if (high && layout.sound <= high->highest)
            problem(sound_key,
                    "'" + std::string(sound_key) + "' is " + std::to_string(layout.sound) +
                        ", not above " + high->who + " (" + std::to_string(high->highest) +
                        "): the sound card's interrupt would wait behind the threads it feeds; "
                        "set it to " +
                        std::to_string(high->highest + 1) + " or more, or 'auto'");
    } else if (high) {
        layout.sound = high->highest + 1;
        layout.sound_reason = "one above " + high->who + " (" + std::to_string(high->highest) + ")";
        if (layout.sound > k_max_irq_priority)
            problem(sound_key, high->who + " run at " + std::to_string(high->highest) +
                                   ", which leaves no priority above them up to " +
                                   std::to_string(k_max_irq_priority) +
                                   " for the sound card's interrupt; lower the service's "
                                   "priority");
    } else {
        // No service says what it runs at: rtirq's default for the first sound IRQ
        // (RTIRQ_PRIO_HIGH=90, rncbc/rtirq rtirq.conf).
        layout.sound = 90;
        layout.sound_reason = "no service of the profile runs real-time audio threads, so "
                              "rtirq's default 90";
    }

    // Every other IRQ thread: below the audio threads, or a network or SD card burst
    // outranks them (the kernel starts them all at 50).
    if (t.others.mode == Mode::value) {
        layout.others = t.others.value;
        layout.others_reason = "as the profile says";
        if (low && *layout.others >= low->lowest)
            problem(others_key, "'" + std::string(others_key) + "' is " +
                                    std::to_string(*layout.others) + ", not below " + low->who +
                                    " (" + std::to_string(low->lowest) +
                                    "): every other interrupt would outrank the audio threads; "
                                    "set it below " +
                                    std::to_string(low->lowest) + ", or 'auto'");
        else if (*layout.others >= layout.sound)
            problem(others_key, "'" + std::string(others_key) + "' is " +
                                    std::to_string(*layout.others) + ", not below the sound " +
                                    "path's " + std::to_string(layout.sound));
    } else if (t.others.mode == Mode::automatic && low && low->lowest <= k_kernel_irq_priority) {
        if (low->lowest <= 1)
            problem(others_key, low->who +
                                    " run at 1, so no priority is left below them for "
                                    "the other interrupts; raise the service's "
                                    "priority, or set '" +
                                    std::string(others_key) + "' to 'keep'");
        else {
            layout.others = low->lowest - 1;
            layout.others_reason = "one below " + low->who + " (" + std::to_string(low->lowest) +
                                   "), which the kernel's " +
                                   std::to_string(k_kernel_irq_priority) + " would outrank";
        }
    } else {
        layout.others_reason =
            t.others.mode == Mode::leave
                ? "kept at the kernel's " + std::to_string(k_kernel_irq_priority) +
                      " as the profile says"
                : "kept at the kernel's " + std::to_string(k_kernel_irq_priority) +
                      (low ? ", already below " + low->who + " (" + std::to_string(low->lowest) +
                                 ")"
                           : ": no audio threads to stay below");
    }

    // PREEMPT_RT expires the soft hrtimers (timerfd, a SCHED_OTHER task's sleep) and the
    // timer wheel in ktimers/N at FIFO 1 (kernel/softirq.c): a timer an audio thread
    // waits on must not queue behind the priorities between.
    if (t.timer_threads)
        layout.timers = layout.sound + 1;
    return layout;
}

} // namespace rtprov::core
