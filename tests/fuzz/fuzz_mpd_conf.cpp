// SPDX-License-Identifier: Apache-2.0
// Fuzz target: MPD's configuration (player::read_mpd_config, player::set_mpd_buffers). The
// input is /etc/mpd.conf up to its first NUL byte; every file it includes is the rest after
// that NUL (the same text when there is none), or absent when the path's length is odd, or
// unreadable when it holds "unreadable". Invariants: where the buffers are set, the files
// as changed read again, with the asked values in every ALSA output and the same outputs
// (or the one added to a configuration that had none); setting them again changes nothing.
#include "provisioner/player/mpd_conf.hpp"

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

namespace {

using namespace rtprov;

struct Target {
    std::string main, other;
    std::map<std::string, std::string> changed;

    core::Result<std::string> read(const std::string& path) const {
        if (auto it = changed.find(path); it != changed.end())
            return {it->second, {}, false};
        if (path == "/etc/mpd.conf")
            return {main, {}, false};
        if (path.find("unreadable") != std::string::npos)
            return core::Result<std::string>::failed("cannot read '" + path + "'");
        if (path.size() % 2)
            return core::Result<std::string>::failed("no '" + path + "'", true);
        return {other, {}, false};
    }
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string input(reinterpret_cast<const char*>(data), size);
    Target target;
    const std::size_t nul = input.find('\0');
    target.main = input.substr(0, nul);
    target.other = nul == std::string::npos ? input : input.substr(nul + 1);
    const player::ReadFile read = [&target](const std::string& path) { return target.read(path); };

    const auto before = player::read_mpd_config("/etc/mpd.conf", read);
    const auto changed = player::set_mpd_buffers("/etc/mpd.conf", read, 25000, 100000);
    if (!before) {
        if (changed) // set reads as read does
            __builtin_trap();
        return 0;
    }
    if (!changed)
        return 0; // outputs, none of them ALSA
    for (const auto& [path, text] : *changed)
        target.changed[path] = text;
    const auto after = player::read_mpd_config("/etc/mpd.conf", read);
    if (!after)
        __builtin_trap();
    const std::size_t outputs = before->outputs.empty() ? 1 : before->outputs.size();
    if (after->outputs.size() != outputs)
        __builtin_trap();
    for (std::size_t i = 0; i < after->outputs.size(); ++i) {
        const player::MpdOutput& output = after->outputs[i];
        if (!before->outputs.empty() &&
            (output.type != before->outputs[i].type || output.name != before->outputs[i].name ||
             output.file != before->outputs[i].file))
            __builtin_trap();
        if (output.type == "alsa" &&
            (output.buffer_time != "100000" || output.period_time != "25000"))
            __builtin_trap();
        if (output.type != "alsa" && !before->outputs.empty() &&
            (output.buffer_time != before->outputs[i].buffer_time ||
             output.period_time != before->outputs[i].period_time))
            __builtin_trap();
    }
    const auto again = player::set_mpd_buffers("/etc/mpd.conf", read, 25000, 100000);
    if (!again || !again->empty())
        __builtin_trap();
    return 0;
}
