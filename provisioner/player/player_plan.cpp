// SPDX-License-Identifier: Apache-2.0
#include "provisioner/player/player_plan.hpp"

#include "provisioner/player/mpd_conf.hpp"
#include "provisioner/player/stack_conf.hpp"

#include <algorithm>
#include <cmath>

namespace rtprov::player {

using namespace rtprov::core;

namespace {

// beside systemd::k_dropin_name (60-rtprov.conf), which the systemd writer owns
constexpr const char* k_jack_dropin_name = "61-rtprov-buffers.conf";

// The folders a unit file may be in, the administrator's first (systemd.unit(5)).
constexpr const char* k_unit_dirs[] = {"/etc/systemd/system", "/usr/lib/systemd/system",
                                       "/lib/systemd/system"};

// The marks of the distros that rebuild the players' files.
struct DistroMark {
    const char* dir;
    const char* file;
    const char* name;
    const char* files;
    const char* place;
};
constexpr DistroMark k_distro_marks[] = {
    {"/var/local/www/db", "moode-sqlite3.db", "moOde",
     "/etc/mpd.conf and squeezelite's configuration, from its database",
     "moOde's own settings (MPD config: buffer_time; Renderers, Squeezelite: ALSA params)"},
    {"/volumio/app/plugins/music_service/mpd", "index.js", "Volumio",
     "/etc/mpd.conf, from its template",
     "Volumio's own settings (Playback Options), or its MPD plugin's template"},
};

ReadFile facts_reader(const TargetFacts& facts) {
    return [&facts](const std::string& path) -> Result<std::string> {
        if (auto why = facts.unreadable.find(path); why != facts.unreadable.end())
            return Result<std::string>::failed(why->second);
        if (const FileState* f = facts.file(path); f && !f->symlink)
            return {f->content, "", false};
        return Result<std::string>::failed("'" + path + "' is not there", true);
    };
}

ListDir facts_lister(const TargetFacts& facts) {
    return [&facts](const std::string& dir) { return facts.listing(dir); };
}

AudioSize ms(std::uint32_t v) {
    return {v, AudioSize::Unit::ms};
}
AudioSize frames(std::uint32_t v) {
    return {v, AudioSize::Unit::frames};
}

// A whole number of microseconds as MPD writes them ('500000'); nullopt otherwise.
std::optional<std::uint32_t> whole_us(const std::string& text) {
    if (text.empty() || text.size() > 9 ||
        !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; }))
        return std::nullopt;
    return static_cast<std::uint32_t>(std::stoul(text));
}

std::uint32_t us_to_ms(std::uint32_t us) {
    return (us + 500) / 1000;
}

// The app's default, as the app table has it (players_now takes only apps that have one).
BufferSetting default_setting(const AppKnowledge& app) {
    return *default_buffers(app);
}

std::string line_of(const std::string& file, unsigned line) {
    return line ? file + ":" + std::to_string(line) : file;
}

void read_mpd(PlayerNow& p, const ReadFile& read) {
    p.where = k_mpd_conf;
    auto config = read_mpd_config(k_mpd_conf, read);
    if (!config) {
        if (config.absent) {
            p.setting = default_setting(*p.app);
            p.from_default = true;
            return;
        }
        p.problem = config.problem;
        return;
    }
    const MpdOutput* alsa = nullptr;
    for (const MpdOutput& o : config->outputs)
        if (o.type == "alsa") {
            alsa = &o;
            break;
        }
    if (!alsa && !config->outputs.empty()) {
        const MpdOutput& o = config->outputs.front();
        p.where = line_of(o.file, o.line);
        p.problem = "MPD plays through its '" + o.type +
                    "' output, not straight to ALSA: that output's own buffer is the one "
                    "that counts";
        return;
    }
    if (!alsa) { // no output: MPD finds the card itself, with its defaults
        p.setting = default_setting(*p.app);
        p.from_default = true;
        return;
    }
    p.where = line_of(alsa->file, alsa->line);
    std::uint32_t buffer_us = 500000;
    if (alsa->buffer_time) {
        auto v = whole_us(*alsa->buffer_time);
        if (!v) {
            p.where = line_of(alsa->file, alsa->buffer_time_line);
            p.problem = "buffer_time \"" + *alsa->buffer_time + "\" is not a whole number";
            return;
        }
        buffer_us = *v;
    }
    // period_time 0 or none: a quarter of buffer_time (MPD's src/lib/alsa/HwSetup.cxx)
    std::uint32_t period_us = buffer_us / 4;
    if (alsa->period_time) {
        auto v = whole_us(*alsa->period_time);
        if (!v) {
            p.where = line_of(alsa->file, alsa->period_time_line);
            p.problem = "period_time \"" + *alsa->period_time + "\" is not a whole number";
            return;
        }
        if (*v)
            period_us = *v;
    }
    p.setting = BufferSetting{ms(us_to_ms(period_us)), ms(us_to_ms(buffer_us))};
    p.from_default = !alsa->buffer_time && !alsa->period_time;
}

void read_squeezelite(PlayerNow& p, const ReadFile& read) {
    p.where = k_squeezelite_default;
    auto text = read(k_squeezelite_default);
    std::optional<std::string> value;
    if (text) {
        auto a = read_squeezelite_alsa(*text, k_squeezelite_default);
        if (!a) {
            p.problem = a.problem;
            return;
        }
        value = a->value;
        p.where = line_of(k_squeezelite_default, a->line);
    } else if (!text.absent) {
        p.problem = text.problem;
        return;
    }
    if (!value) {
        p.setting = default_setting(*p.app);
        p.from_default = true;
        return;
    }
    // -a <b>:<p>:...: b below 500 is ms, else bytes; p below 50 a count, else bytes
    // (squeezelite's -h); an empty field keeps the default (40, 4).
    const std::string& v = *value;
    const std::size_t colon = v.find(':');
    const std::string b = v.substr(0, colon);
    const std::string n =
        colon == std::string::npos ? "" : v.substr(colon + 1, v.find(':', colon + 1) - colon - 1);
    auto field = [](const std::string& f, unsigned fallback) -> std::optional<unsigned> {
        if (f.empty())
            return fallback;
        if (f.size() > 9 ||
            !std::all_of(f.begin(), f.end(), [](char c) { return c >= '0' && c <= '9'; }))
            return std::nullopt;
        return static_cast<unsigned>(std::stoul(f));
    };
    auto buffer = field(b, 40);
    auto periods = field(n, 4);
    if (!buffer || !periods || *buffer >= 500 || *periods >= 50 || *periods < 2 || *buffer == 0) {
        p.problem = "-a " + v +
                    " gives the buffer or the periods in bytes, or not as numbers: rtprov "
                    "reads '-a <ms>:<count>' only";
        return;
    }
    p.setting = BufferSetting{ms((*buffer + *periods / 2) / *periods), ms(*buffer)};
}

void read_pipewire(PlayerNow& p, const ReadFile& read, const ListDir& list) {
    p.where = k_pipewire_dropin;
    const auto files = pipewire_conf_files(read, list);
    if (!files) {
        p.problem = files.absent ? "PipeWire has no pipewire.conf here" : files.problem;
        return;
    }
    auto clock = read_pipewire_clock(*files, read);
    if (!clock) {
        p.problem = clock.problem;
        return;
    }
    const unsigned q = clock->quantum.value_or(1024);
    p.setting = BufferSetting{frames(q), frames(2 * q)};
    p.from_default = !clock->quantum;
    if (!clock->where.empty())
        p.where = clock->where;
}

// The unit file of 'unit' and the command line its JACK server runs; rtprov's own
// drop-in first, as systemd takes the last ExecStart=.
Result<JackCommand> jack_command(const ReadFile& read, const std::string& unit) {
    if (auto dropin = read(jack_dropin_path(unit))) {
        // rtprov's drop-in empties ExecStart= first, then sets it (systemd.service(5))
        std::string text = *dropin;
        const std::string reset = "\nExecStart=\n";
        if (auto at = text.find(reset); at != std::string::npos)
            text.erase(at + 1, reset.size() - 1);
        return read_jack_command(text, jack_dropin_path(unit));
    }
    for (const char* dir : k_unit_dirs) {
        const std::string path = std::string(dir) + "/" + unit;
        auto text = read(path);
        if (text)
            return read_jack_command(*text, path);
        if (!text.absent)
            return Result<JackCommand>::failed(text.problem);
    }
    return Result<JackCommand>::failed("no unit file for '" + unit + "'", true);
}

void read_jack(PlayerNow& p, const ReadFile& read) {
    if (p.unit.empty()) {
        p.problem = "no service of the profile runs jackd (tuning.services): rtprov reads "
                    "the -p and -n of the service it tunes";
        return;
    }
    auto command = jack_command(read, p.unit);
    if (!command) {
        p.problem = command.absent ? "jackd does not run as a system service here ('" + p.unit +
                                         "' has no unit file): set its -p and -n where it is "
                                         "started"
                                   : command.problem;
        return;
    }
    p.where = line_of(command->unit_path, command->line);
    const unsigned period = command->period.value_or(1024);
    const unsigned n = command->nperiods.value_or(2);
    p.setting = BufferSetting{frames(period), frames(period * n)};
    p.from_default = !command->period && !command->nperiods;
}

// Why rtprov's PipeWire drop-in, holding 'ours' (its quantum and min-quantum 'q'), would
// not set what PipeWire runs: a file PipeWire reads after it sets either key again, a
// max-quantum below 'q' clamps the quantum, or a file cannot be read with certainty.
// nullopt when it would, or when PipeWire's own configuration is not there.
std::optional<std::string> pipewire_overridden(const ReadFile& read, const ListDir& list,
                                               const std::string& ours, unsigned q) {
    const std::string path = k_pipewire_dropin;
    const std::string dir = path.substr(0, path.rfind('/'));
    const std::string name = path.substr(path.rfind('/') + 1);
    const ReadFile with_ours = [&](const std::string& p) -> Result<std::string> {
        if (p == path)
            return {ours, "", false};
        return read(p);
    };
    const ListDir with_ours_listed = [&](const std::string& d) {
        std::vector<std::string> names = list(d);
        if (d == dir && std::find(names.begin(), names.end(), name) == names.end()) {
            names.push_back(name);
            std::sort(names.begin(), names.end());
        }
        return names;
    };
    const auto files = pipewire_conf_files(with_ours, with_ours_listed);
    const std::string fix = ": remove the setting there, or set tuning.audio.buffers to 'advise'";
    const std::string unread = "; rtprov reads every file PipeWire reads to know that its quantum "
                               "would be the one PipeWire runs: correct the file, or set "
                               "tuning.audio.buffers to 'advise'";
    if (!files)
        return files.absent ? std::nullopt : std::optional<std::string>(files.problem + unread);
    if (std::find(files->begin(), files->end(), path) == files->end())
        return "PipeWire would not read rtprov's '" + path +
               "': a drop-in of its name in "
               "/usr/share/pipewire/pipewire.conf.d hides it; remove that file, or set "
               "tuning.audio.buffers to 'advise'";
    const auto clock = read_pipewire_clock(*files, with_ours);
    if (!clock)
        return clock.problem + unread;
    for (const char* key : {"default.clock.quantum", "default.clock.min-quantum"}) {
        const std::string& at = clock->set_at.at(key); // rtprov's drop-in sets both
        if (at.rfind(path + ":", 0) != 0)
            return "'" + at + "' sets " + key + " again, and PipeWire reads it after rtprov's '" +
                   path + "', so rtprov's " + std::to_string(q) +
                   " would not be what PipeWire runs" + fix;
    }
    if (clock->max_quantum && *clock->max_quantum < q)
        return "'" + clock->set_at.at("default.clock.max-quantum") +
               "' sets default.clock.max-quantum to " + std::to_string(*clock->max_quantum) +
               ", below rtprov's " + std::to_string(q) + ", and PipeWire clamps the quantum to it" +
               fix;
    return std::nullopt;
}

std::string unit_for(const AppKnowledge& app, const Profile* profile,
                     const std::vector<AppKnowledge>& apps) {
    if (profile)
        for (const ServiceTuning& s : profile->tuning.services)
            if (const AppKnowledge* a = find_app(apps, s.name, s.unit); a && a->key == app.key)
                return s.unit;
    return "";
}

} // namespace

std::string jack_dropin_path(const std::string& unit) {
    return "/etc/systemd/system/" + unit + ".d/" + k_jack_dropin_name;
}

const char* player_program(BufferStack stack) {
    switch (stack) {
    case BufferStack::mpd:
        return "/usr/bin/mpd";
    case BufferStack::squeezelite:
        return "/usr/bin/squeezelite";
    case BufferStack::jack:
        return "/usr/bin/jackd";
    case BufferStack::pipewire:
        return "/usr/bin/pipewire";
    }
    return "";
}

void visit_player_files(const ReadFile& read, const ListDir& list,
                        const std::vector<std::string>& jack_units) {
    (void)read_mpd_config(k_mpd_conf, read);
    (void)read(k_squeezelite_default);
    if (auto files = pipewire_conf_files(read, list))
        (void)read_pipewire_clock(*files, read);
    (void)read(k_pipewire_dropin);
    (void)wireplumber_format(read, list);
    (void)read(k_wireplumber_dropin);
    for (const std::string& unit : jack_units) {
        (void)read(jack_dropin_path(unit));
        for (const char* dir : k_unit_dirs)
            (void)read(std::string(dir) + "/" + unit);
    }
    for (const DistroMark& mark : k_distro_marks)
        (void)list(mark.dir);
}

std::optional<RegeneratingDistro> regenerating_distro(const ListDir& list) {
    for (const DistroMark& mark : k_distro_marks) {
        const auto names = list(mark.dir);
        if (std::find(names.begin(), names.end(), mark.file) != names.end())
            return RegeneratingDistro{mark.name, std::string(mark.dir) + "/" + mark.file,
                                      mark.files, mark.place};
    }
    return std::nullopt;
}

std::vector<PlayerNow> players_now(const TargetFacts& facts, const std::vector<AppKnowledge>& apps,
                                   const Profile* profile) {
    const ReadFile read = facts_reader(facts);
    const ListDir list = facts_lister(facts);
    std::vector<PlayerNow> out;
    for (const AppKnowledge& app : apps) {
        auto stack = buffer_stack(app.key);
        // an app the table gives no default sizes has nothing to compare against
        if (!stack || !default_buffers(app) || !facts.has_executable(player_program(*stack)))
            continue;
        PlayerNow p;
        p.app = &app;
        p.stack = *stack;
        p.unit = unit_for(app, profile, apps);
        switch (*stack) {
        case BufferStack::mpd:
            read_mpd(p, read);
            break;
        case BufferStack::squeezelite:
            read_squeezelite(p, read);
            break;
        case BufferStack::pipewire:
            read_pipewire(p, read, list);
            break;
        case BufferStack::jack:
            read_jack(p, read);
            break;
        }
        out.push_back(std::move(p));
    }
    return out;
}

std::string setting_text(BufferStack stack, const BufferSetting& s, const std::string& file) {
    const unsigned rate = k_buffer_rate;
    switch (stack) {
    case BufferStack::mpd:
        return "buffer_time \"" + std::to_string(std::uint64_t(s.buffer.value) * 1000) +
               "\" and period_time \"" + std::to_string(std::uint64_t(s.period.value) * 1000) +
               "\" in the ALSA audio_output of " + (file.empty() ? std::string(k_mpd_conf) : file);
    case BufferStack::squeezelite:
        return "-a " + std::to_string(s.buffer.value) + ":" +
               std::to_string(s.period.value ? s.buffer.value / s.period.value : 4) +
               " in the options of " + k_squeezelite_default;
    case BufferStack::jack: {
        const unsigned p = s.period.frames_at(rate);
        return "-p " + std::to_string(p) + " -n " +
               std::to_string(p ? s.buffer.frames_at(rate) / p : 2) +
               " after '-d alsa' on jackd's command line";
    }
    case BufferStack::pipewire: {
        const unsigned q = s.period.frames_at(rate);
        const unsigned b = s.buffer.frames_at(rate);
        std::string text = "default.clock.quantum = " + std::to_string(q) +
                           " and default.clock.min-quantum = " + std::to_string(q) +
                           " in context.properties of " + k_pipewire_dropin;
        if (b > 2 * q)
            text += ", and api.alsa.headroom = " + std::to_string(b - 2 * q) + " in " +
                    k_wireplumber_dropin;
        return text;
    }
    }
    return "";
}

std::vector<PlayerAdvice> advise_players(const std::vector<PlayerNow>& players, double worst_us) {
    std::vector<PlayerAdvice> out;
    for (const PlayerNow& p : players) {
        PlayerAdvice a;
        a.now = p;
        a.choice = choose_buffers(p.stack, worst_us);
        if (p.setting)
            a.now_holds = buffer_deadline_us(*p.setting) >= a.choice.need_us;
        out.push_back(std::move(a));
    }
    return out;
}

Result<BufferSetting> check_setting(BufferStack stack, const BufferSetting& given) {
    using R = Result<BufferSetting>;
    BufferSetting s = given;
    const bool timed = stack == BufferStack::mpd || stack == BufferStack::squeezelite;
    if (timed) {
        if (s.period.unit != AudioSize::Unit::ms || s.buffer.unit != AudioSize::Unit::ms)
            return R::failed(to_string(stack) +
                             " takes its period and buffer as times: write them in ms "
                             "('25ms', '100ms')");
    } else { // frames, at the stack's 48000 Hz where a time is given
        s.period = frames(s.period.frames_at(k_buffer_rate));
        s.buffer = frames(s.buffer.frames_at(k_buffer_rate));
    }
    if (s.buffer.value < 2 * std::uint64_t{s.period.value})
        return R::failed("a buffer of " + given.buffer.to_string() +
                         " holds less than two periods of " + given.period.to_string() +
                         ": make the buffer at least twice the period");
    if (stack == BufferStack::squeezelite || stack == BufferStack::jack) {
        if (s.buffer.value % s.period.value)
            return R::failed("a buffer of " + given.buffer.to_string() +
                             " is not a whole number of periods of " + given.period.to_string() +
                             ": " + to_string(stack) + " counts periods (" +
                             (stack == BufferStack::jack ? "-n" : "-a <ms>:<count>") + ")");
        if (stack == BufferStack::squeezelite &&
            (s.buffer.value >= 500 || s.buffer.value / s.period.value >= 50))
            return R::failed("squeezelite reads a buffer of 500 or more, or 50 or more periods, "
                             "as bytes (-a): give less than 500ms in fewer than 50 periods");
    }
    if (stack == BufferStack::pipewire) {
        // The quantum PipeWire runs is not always the one written: it clamps
        // default.clock.quantum and min-quantum to [4, max-quantum] (max-quantum 2048 by
        // default; src/pipewire/settings.c, pw_settings_init) and rounds the graph's
        // quantum down to a power of two (clock.power-of-two-quantum, on by default;
        // src/pipewire/context.c). A shorter quantum than asked would underrun.
        const std::uint32_t q = s.period.value;
        const std::string asked = "a quantum of " + std::to_string(q) + " frames";
        const std::string fix = ": give a power of two from 4 to 2048 frames ('256frames')";
        if (q < 4)
            return R::failed(asked + ", below the 4 frames PipeWire raises it to" + fix);
        if (q > 2048)
            return R::failed(asked +
                             ", above the 2048 frames PipeWire caps it at (its "
                             "default.clock.max-quantum)" +
                             fix);
        if (q & (q - 1)) {
            std::uint32_t down = 1;
            while (down * 2 <= q)
                down *= 2;
            return R::failed(asked + ", which PipeWire rounds down to " + std::to_string(down) +
                             " (clock.power-of-two-quantum)" + fix);
        }
        // the rest of the buffer is WirePlumber's api.alsa.headroom: at most
        // default.clock.quantum-limit (8192 frames, src/pipewire/settings.c), a bound of
        // rtprov's own, beyond which the device's buffer would be the limit, not the setting
        if (s.buffer.value - 2 * q > 8192)
            return R::failed("a buffer of " + given.buffer.to_string() + " leaves " +
                             std::to_string(s.buffer.value - 2 * q) +
                             " frames of ALSA headroom beyond two quanta: give at most 8192 "
                             "(PipeWire's quantum-limit) more than two quanta");
    }
    return {s, "", false};
}

void plan_player_buffers(Plan& plan, const Profile& profile, const TargetFacts& facts,
                         const std::vector<AppKnowledge>& apps) {
    if (profile.tuning.audio_buffers != BufferMode::write)
        return;
    const ReadFile read = facts_reader(facts);
    const ListDir list = facts_lister(facts);
    const std::string header = owned_file_header(profile.name);
    const auto distro = regenerating_distro(list);
    // A file the probe would not read (a folder, over the size limit) is never replaced.
    const auto change = [&](const std::string& path, FileState next, const std::string& why) {
        if (auto problem = facts.unreadable.find(path); problem != facts.unreadable.end())
            plan.findings.push_back({Severity::error, "buffers-unreadable",
                                     "'" + path + "' is not written: " + problem->second +
                                         "; rtprov replaces only a file it has read"});
        else
            add_file_change(plan, facts, path, std::move(next), why);
    };
    for (const ServiceTuning& service : profile.tuning.services) {
        const AppKnowledge* app = find_app(apps, service.name, service.unit);
        const auto stack = app ? buffer_stack(app->key) : std::nullopt;
        const std::string key = "tuning.services." + service.name;
        if (!stack) {
            if (service.period || service.buffer)
                plan.findings.push_back(
                    {Severity::error, "buffers-unknown-player",
                     service.origin.to_string() + ": " + key +
                         " sets a period or buffer, but rtprov sets the buffers of MPD, "
                         "squeezelite, JACK and PipeWire only: remove them there"});
            continue;
        }
        const BufferStack kind = *stack;
        if (!facts.has_executable(player_program(kind))) {
            plan.findings.push_back({Severity::info, "buffers-not-installed",
                                     app->name + " is not installed (no " + player_program(kind) +
                                         "): its buffers are not written"});
            continue;
        }
        if (distro) {
            plan.findings.push_back(
                {Severity::error, "buffers-regenerated",
                 distro->name + " rewrites " + distro->files + " (found " + distro->mark +
                     "), so a setting rtprov wrote there would not last: set " + app->name +
                     "'s buffer in " + distro->place +
                     ", or set tuning.audio.buffers to 'advise' for rtprov's advice"});
            continue;
        }
        if (!service.period && !service.buffer) {
            plan.findings.push_back(
                {Severity::info, "buffers-auto",
                 app->name + "'s period and buffer are 'auto': " +
                     (facts.mode == TargetMode::offline
                          ? "nothing is measured offline, so first boot measures, chooses, "
                            "writes and proves them with the underrun test"
                          : "first boot (or 'rtprov firstboot') measures and chooses them; "
                            "this apply writes nothing for it")});
            continue;
        }
        if (!service.period || !service.buffer) {
            plan.findings.push_back(
                {Severity::error, "buffers-invalid",
                 service.origin.to_string() + ": " + key + " gives " +
                     (service.period ? "a period" : "a buffer") +
                     " alone: give both period and buffer, or neither for 'auto'"});
            continue;
        }
        const BufferSetting given{*service.period, *service.buffer};
        auto setting = check_setting(kind, given);
        if (!setting) {
            plan.findings.push_back(
                {Severity::error, "buffers-invalid",
                 service.origin.to_string() + ": " + key + ": " + setting.problem});
            continue;
        }
        const std::string why = app->name + "'s ALSA period and buffer (" +
                                setting->period.to_string() + " in " + setting->buffer.to_string() +
                                ", tuning.audio.buffers)";
        switch (kind) {
        case BufferStack::mpd: {
            auto edits = set_mpd_buffers(k_mpd_conf, read, setting->period.value * 1000,
                                         setting->buffer.value * 1000);
            if (!edits) {
                plan.findings.push_back({Severity::error, "buffers-mpd-conf",
                                         "MPD's configuration is not written: " + edits.problem});
                break;
            }
            for (const auto& [path, content] : *edits) {
                FileState next;
                next.content = content;
                change(path, std::move(next), why);
            }
            // already as asked: unchanged are the files that hold the ALSA outputs, which
            // an include may have put beside mpd.conf
            if (edits->empty())
                if (auto config = read_mpd_config(k_mpd_conf, read))
                    for (const MpdOutput& o : config->outputs)
                        if (o.type == "alsa" &&
                            std::find(plan.unchanged.begin(), plan.unchanged.end(), o.file) ==
                                plan.unchanged.end())
                            plan.unchanged.push_back(o.file);
            break;
        }
        case BufferStack::squeezelite: {
            const FileState* current = facts.file(k_squeezelite_default);
            const std::uint32_t periods = setting->buffer.value / setting->period.value;
            auto next = set_squeezelite_alsa(current ? current->content : "", k_squeezelite_default,
                                             setting->buffer.value, periods);
            if (!next) {
                plan.findings.push_back({Severity::error, "buffers-squeezelite",
                                         "squeezelite's options are not written: " + next.problem});
                break;
            }
            FileState state;
            state.content = *next;
            change(k_squeezelite_default, std::move(state), why);
            break;
        }
        case BufferStack::pipewire: {
            const unsigned q = setting->period.value;
            FileState dropin;
            dropin.content = pipewire_dropin(header, q);
            if (auto why_not = pipewire_overridden(read, list, dropin.content, q)) {
                plan.findings.push_back({Severity::error, "buffers-pipewire-overridden",
                                         "PipeWire's quantum is not written: " + *why_not});
                break;
            }
            change(k_pipewire_dropin, std::move(dropin), why);
            switch (wireplumber_format(read, list)) {
            case WirePlumberFormat::json: {
                FileState wp;
                wp.content = wireplumber_dropin(header, q, setting->buffer.value - 2 * q);
                change(k_wireplumber_dropin, std::move(wp), why);
                break;
            }
            case WirePlumberFormat::lua:
                plan.findings.push_back(
                    {Severity::warning, "buffers-wireplumber-lua",
                     "WirePlumber 0.4 here reads its ALSA rules in Lua, which rtprov does not "
                     "write: PipeWire's quantum is set, the ALSA nodes keep WirePlumber's "
                     "period size and headroom (0.5, in Debian 13, reads rtprov's JSON)"});
                break;
            case WirePlumberFormat::none:
                break;
            }
            break;
        }
        case BufferStack::jack: {
            auto command = jack_command(read, service.unit);
            if (!command) {
                plan.findings.push_back(
                    {command.absent ? Severity::warning : Severity::error, "buffers-jack",
                     "jackd's buffers are not written: " +
                         (command.absent ? "'" + service.unit +
                                               "' has no unit file, and rtprov sets jackd's -p "
                                               "and -n only where it runs as a system service; "
                                               "this is advice only"
                                         : command.problem)});
                break;
            }
            FileState dropin;
            dropin.content = jack_dropin(header, *command, setting->period.value,
                                         setting->buffer.value / setting->period.value);
            change(jack_dropin_path(service.unit), std::move(dropin), why);
            break;
        }
        }
        if (facts.mode == TargetMode::live)
            plan.findings.push_back({Severity::info, "buffers-restart",
                                     app->name + " reads the new setting when " + service.unit +
                                         " starts again: restart it, or reboot"});
    }
}

} // namespace rtprov::player
