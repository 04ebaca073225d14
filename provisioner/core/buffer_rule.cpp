// SPDX-License-Identifier: Apache-2.0
#include "provisioner/core/buffer_rule.hpp"

namespace rtprov::core {

namespace {

AudioSize ms(std::uint32_t value) {
    return {value, AudioSize::Unit::ms};
}
AudioSize frames(std::uint32_t value) {
    return {value, AudioSize::Unit::frames};
}

// A buffer in four periods, as MPD (period_time 0: a quarter of buffer_time,
// src/lib/alsa/HwSetup.cxx) and squeezelite (ALSA_PERIOD_COUNT 4, squeezelite.h) make it.
std::vector<BufferSetting> quarters(std::initializer_list<std::uint32_t> buffers_ms) {
    std::vector<BufferSetting> out;
    for (std::uint32_t b : buffers_ms)
        out.push_back({ms(b / 4), ms(b)});
    return out;
}

} // namespace

std::optional<BufferStack> buffer_stack(const std::string& app_key) {
    if (app_key == "mpd")
        return BufferStack::mpd;
    if (app_key == "squeezelite")
        return BufferStack::squeezelite;
    if (app_key == "jackd")
        return BufferStack::jack;
    if (app_key == "pipewire")
        return BufferStack::pipewire;
    return std::nullopt;
}

std::string to_string(BufferStack stack) {
    switch (stack) {
    case BufferStack::mpd:
        return "mpd";
    case BufferStack::squeezelite:
        return "squeezelite";
    case BufferStack::jack:
        return "jackd";
    case BufferStack::pipewire:
        return "pipewire";
    }
    return "";
}

std::optional<BufferSetting> default_buffers(const AppKnowledge& app) {
    if (!app.alsa_period || !app.alsa_buffer)
        return std::nullopt;
    return BufferSetting{*app.alsa_period, *app.alsa_buffer};
}

double buffer_deadline_us(const BufferSetting& setting, unsigned rate) {
    const double period = 1e6 * setting.period.frames_at(rate) / rate;
    const double buffer = 1e6 * setting.buffer.frames_at(rate) / rate;
    return buffer > period ? buffer - period : 0;
}

std::vector<BufferSetting> buffer_ladder(BufferStack stack, bool usb) {
    switch (stack) {
    case BufferStack::mpd:
        // up to 2 s: MPD limits its ALSA buffer to 2 seconds (NEWS, 0.23.15)
        return quarters({20, 40, 60, 100, 200, 300, 400, 500, 1000, 2000});
    case BufferStack::squeezelite:
        // -a takes the buffer in ms below 500 (output_alsa.c); 480 is the last such step
        return quarters({20, 40, 80, 160, 320, 480});
    case BufferStack::jack: {
        std::vector<BufferSetting> out;
        const std::uint32_t periods = usb ? 3 : 2;
        for (std::uint32_t p = 64; p <= 4096; p *= 2)
            out.push_back({frames(p), frames(p * periods)});
        return out;
    }
    case BufferStack::pipewire: {
        // a power of two (clock.power-of-two-quantum) up to max-quantum's 2048
        // (src/pipewire/settings.c); the ALSA headroom left at 0, its default
        std::vector<BufferSetting> out;
        for (std::uint32_t q = 64; q <= 2048; q *= 2)
            out.push_back({frames(q), frames(2 * q)});
        return out;
    }
    }
    return {};
}

BufferChoice choose_buffers(BufferStack stack, double worst_us, bool usb) {
    BufferChoice choice;
    choice.need_us = k_buffer_margin * (worst_us > 0 ? worst_us : 0);
    for (const BufferSetting& s : buffer_ladder(stack, usb)) {
        const double deadline = buffer_deadline_us(s);
        if (deadline >= choice.need_us) {
            choice.setting = s;
            choice.deadline_us = deadline;
            break;
        }
    }
    return choice;
}

std::vector<BufferSetting> buffer_steps(BufferStack stack, const BufferSetting& from,
                                        const BufferSetting& upto, bool usb) {
    std::vector<BufferSetting> out{from};
    const double first = buffer_deadline_us(from);
    const double last = buffer_deadline_us(upto);
    for (const BufferSetting& s : buffer_ladder(stack, usb)) {
        const double d = buffer_deadline_us(s);
        if (d > first && d < last)
            out.push_back(s);
    }
    if (last > first)
        out.push_back(upto);
    return out;
}

} // namespace rtprov::core
