// SPDX-License-Identifier: Apache-2.0
#include "provisioner/profile/profile_loader.hpp"

#include "provisioner/core/error.hpp"
#include "provisioner/core/grammar.hpp"
#include "provisioner/core/irq_layout.hpp"
#include "provisioner/fs/root.hpp"
#include "provisioner/profile/schema.hpp"
#include "provisioner/profile/yaml_tree.hpp"

#include <yaml-cpp/yaml.h> // the emitter: to_yaml()

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>

namespace rtprov::profile {

using core::Origin;
using core::ProfileProblem;
namespace stdfs = std::filesystem;

namespace {

using Problems = std::vector<ProfileProblem>;

class HostFiles : public FileSource {
  public:
    // A folder of that name is not a profile; a FIFO or device is refused by its type.
    std::optional<std::string> read(const std::string& path) const override {
        std::error_code ec;
        if (stdfs::is_directory(path, ec))
            return std::nullopt;
        return fs::read_host_file(path, fs::caps::k_config);
    }
    std::vector<std::string> list(const std::string& dir) const override {
        std::vector<std::string> names;
        std::error_code ec;
        for (const auto& entry : stdfs::directory_iterator(dir, ec))
            names.push_back(entry.path().filename().string());
        return names;
    }
    std::string identity(const std::string& path) const override {
        std::error_code ec;
        return stdfs::weakly_canonical(path, ec).string();
    }
    std::string display(const std::string& path) const override { return path; }
};

// A file of a profile folder: where it is read from and its path there.
struct ProfileFile {
    std::shared_ptr<const FileSource> files;
    std::string path;

    std::string shown() const { return files->display(path); }
    std::string stem() const { return stdfs::path(path).stem().string(); }
    std::string identity() const { return files->identity(path); }
    bool same_as(const ProfileFile& other) const {
        return files == other.files && identity() == other.identity();
    }
};

using schema::shown;

// ---- the schema: every key of a profile, once ---------------------------------------------

#define RTPROV_FIELD(R, expr)                                                                      \
    +[](R & r) -> auto& {                                                                          \
        return r.expr;                                                                             \
    }

// rt_image: a file name, or empty for none.
std::optional<std::string> file_name_or_empty(const std::string& value) {
    return value.empty() ? std::nullopt : core::grammar::file_name(value);
}

// isolcpus= flags the kernel knows (Documentation/admin-guide/kernel-parameters.txt).
std::optional<std::string> isolcpus_flag(const std::string& flag) {
    if (flag == "nohz" || flag == "domain" || flag == "managed_irq")
        return std::nullopt;
    return "unknown isolcpus flag; the kernel knows 'nohz', 'domain', 'managed_irq'";
}

// The words of a service's 'policy': 'app', then every kernel policy but deadline, which
// systemd's CPUSchedulingPolicy= does not take (systemd.exec(5): other, batch, idle, fifo,
// rr); SCHED_DEADLINE needs a runtime, deadline and period that a unit cannot give.
core::Words<std::optional<core::SchedPolicy>> service_policies() {
    static const auto k_words = [] {
        std::vector<std::pair<std::string_view, std::optional<core::SchedPolicy>>> out = {
            {"app", std::nullopt}};
        for (const core::SchedPolicyName& name : core::sched_policy_names())
            if (name.policy != core::SchedPolicy::deadline)
                out.emplace_back(name.word, name.policy);
        return out;
    }();
    return k_words;
}

// 'auto' or a CPU list.
schema::Key<core::Profile>
auto_cpus(std::string_view path, schema::Field<core::Profile, std::optional<core::CpuList>> field) {
    return schema::custom<core::Profile>(
        path,
        [=](schema::Reader& c, const Tree& t, const std::string& shown, core::Profile& p) {
            if (t.kind == Tree::Kind::scalar && t.scalar == "auto")
                field(p).reset();
            else if (auto list = c.cpu_list(t, shown))
                field(p) = *list;
        },
        [=](YAML::Emitter& out, const core::Profile& p) {
            const auto& list = field(const_cast<core::Profile&>(p));
            out << (list ? list->to_string() : "auto");
        });
}

// An IRQ priority: 'auto', a number from 1 to 94, or 'leave' (the word that leaves the
// kernel's priority: 'off' for the sound path, 'keep' for the others).
schema::Key<core::Profile> irq_priority(std::string_view path, const char* leave,
                                        schema::Field<core::Profile, core::IrqPriority> field) {
    using Mode = core::IrqPriority::Mode;
    const std::string leave_word = leave;
    return schema::custom<core::Profile>(
        path,
        [=](schema::Reader& c, const Tree& t, const std::string& shown, core::Profile& p) {
            if (t.kind == Tree::Kind::scalar && t.scalar == "auto")
                field(p) = {Mode::automatic, 0};
            else if (t.kind == Tree::Kind::scalar && t.scalar == leave_word)
                field(p) = {Mode::leave, 0};
            else if (t.kind != Tree::Kind::scalar || t.scalar.empty() ||
                     !std::isdigit(static_cast<unsigned char>(t.scalar.front())))
                c.fail(t.origin, "'" + shown + "' must be 'auto', '" + leave_word +
                                     "' or a priority from 1 to " +
                                     std::to_string(core::k_max_irq_priority));
            else if (auto n = c.integer(t, shown, 1, core::k_max_irq_priority))
                field(p) = {Mode::value, int(*n)};
        },
        [=](YAML::Emitter& out, const core::Profile& p) {
            const core::IrqPriority& v = field(const_cast<core::Profile&>(p));
            out << (v.mode == Mode::value       ? std::to_string(v.value)
                    : v.mode == Mode::automatic ? std::string("auto")
                                                : leave_word);
        });
}

// A player's period or buffer: 'auto' (nullopt) or a size ('25ms', '256frames').
schema::Key<core::ServiceTuning>
audio_size_key(const char* name, std::optional<core::AudioSize> core::ServiceTuning::*field) {
    using S = core::ServiceTuning;
    return schema::custom<S>(
        name,
        [=](schema::Reader& c, const Tree& t, const std::string& shown, S& s) {
            const std::string* value =
                c.scalar(t, shown, "'auto' or a size like '25ms' or '256frames'");
            if (!value)
                return;
            if (*value == "auto") {
                s.*field = std::nullopt;
                return;
            }
            auto size = core::parse_audio_size(*value);
            if (!size)
                c.fail(t.origin, "'" + shown + "': " + size.problem + ", or 'auto'");
            else
                s.*field = *size;
        },
        [=](YAML::Emitter& out, const S& s) { out << (s.*field)->to_string(); },
        [=](const S& s) { return (s.*field).has_value(); });
}

const schema::Keys<core::ServiceTuning>& service_keys() {
    using S = core::ServiceTuning;
    using namespace schema;
    static const Keys<S> k_keys = {
        text<S>("unit", RTPROV_FIELD(S, unit), core::grammar::service_unit),
        custom<S>(
            "cpus",
            [](Reader& c, const Tree& t, const std::string& shown, S& s) {
                core::CpuTarget target;
                const bool word = t.kind == Tree::Kind::scalar;
                if (word && t.scalar == "reserved")
                    target.kind = core::CpuTargetKind::reserved;
                else if (word && t.scalar == "housekeeping")
                    target.kind = core::CpuTargetKind::housekeeping;
                else if (word && t.scalar == "all")
                    target.kind = core::CpuTargetKind::all;
                else if (auto list = c.cpu_list(t, shown)) {
                    target.kind = core::CpuTargetKind::list;
                    target.list = *list;
                } else
                    return;
                s.cpus = target;
            },
            [](YAML::Emitter& out, const S& s) { out << core::to_string(*s.cpus); },
            [](const S& s) { return s.cpus.has_value(); }),
        custom<S>(
            "policy",
            [](Reader& c, const Tree& t, const std::string& shown, S& s) {
                if (auto policy = c.choice(t, shown, service_policies()))
                    s.policy = *policy;
            },
            [](YAML::Emitter& out, const S& s) { out << core::service_policy_word(s.policy); }),
        // The range 1-99 is checked by core::validate() with a message about scheduling.
        number<S>("priority", RTPROV_FIELD(S, priority), -100000, 100000),
        flag<S>("reset_on_fork", RTPROV_FIELD(S, reset_on_fork)),
        number<S>("limit_rtprio", RTPROV_FIELD(S, limit_rtprio), -100000, 100000),
        text<S>("limit_memlock", RTPROV_FIELD(S, limit_memlock), core::grammar::memlock_size),
        number<S>("nice", RTPROV_FIELD(S, nice), -100000, 100000),
        choice<S>("io_class", RTPROV_FIELD(S, io_class)),
        flag<S>("force_priority", RTPROV_FIELD(S, force_priority)),
        audio_size_key("period", &S::period),
        audio_size_key("buffer", &S::buffer),
        choice<S>("if_missing", RTPROV_FIELD(S, if_missing)),
    };
    return k_keys;
}

// tuning.services: a map of service names, each read by service_keys().
schema::Key<core::Profile> services_key() {
    using namespace schema;
    return custom<core::Profile>(
        "tuning.services",
        [](Reader& c, const Tree& t, const std::string& shown, core::Profile& p) {
            if (t.kind != Tree::Kind::map) {
                if (t.kind != Tree::Kind::null)
                    c.fail(t.origin, "'" + shown + "' must be a map of service names");
                return;
            }
            p.tuning.services.clear();
            for (const TreeEntry& entry : t.entries) {
                core::ServiceTuning service;
                service.name = entry.key;
                service.unit = entry.key + ".service";
                service.origin = entry.key_origin;
                if (c.follows(entry.key_origin, shown, entry.key, core::grammar::service_key)) {
                    const std::string path = shown + "." + entry.key;
                    read(c, entry.value, path, path + ".", service_keys(), service);
                    // The unit named after the key must be a unit name too.
                    if (!schema::detail::child(entry.value, "unit"))
                        c.follows(entry.key_origin, path + ".unit", service.unit,
                                  core::grammar::service_unit);
                }
                p.tuning.services.push_back(std::move(service));
            }
        },
        [](YAML::Emitter& out, const core::Profile& p) {
            out << YAML::BeginMap;
            for (const core::ServiceTuning& service : p.tuning.services) {
                out << YAML::Key << service.name << YAML::Value;
                write(out, service_keys(), service);
            }
            out << YAML::EndMap;
        });
}

// Every key of a profile, in the order 'profiles show' writes them.
const schema::Keys<core::Profile>& profile_keys() {
    using P = core::Profile;
    using namespace schema;
    namespace grammar = core::grammar;
    static const Keys<P> k_keys = {
        text<P>("name", RTPROV_FIELD(P, name), grammar::profile_name),
        text<P>("description", RTPROV_FIELD(P, description), grammar::text_line),
        known<P>("extends"), // the loader's: merged before the keys are read
        text<P>("board.model", RTPROV_FIELD(P, board.model), grammar::text_line),
        strings<P>("board.match.device_tree_model", RTPROV_FIELD(P, board.match.device_tree_model),
                   grammar::text_line),
        strings<P>("board.match.dmi_product_name", RTPROV_FIELD(P, board.match.dmi_product_name),
                   grammar::text_line),
        strings<P>("board.match.os_id", RTPROV_FIELD(P, board.match.os_id), grammar::text_line),
        number<P>("board.match.cpu_count", RTPROV_FIELD(P, board.match.cpu_count), 1,
                  core::CpuList::k_max_cpu + 1),
        custom<P>(
            "board.cpus",
            [](Reader& c, const Tree& t, const std::string& shown, P& p) {
                if (t.kind == Tree::Kind::scalar && t.scalar == "auto")
                    p.board.cpus.reset();
                else if (t.kind != Tree::Kind::scalar)
                    c.fail(t.origin, "'" + shown + "' must be a whole number or 'auto'");
                else if (auto n = c.integer(t, shown, 1, core::CpuList::k_max_cpu + 1))
                    p.board.cpus = unsigned(*n);
            },
            [](YAML::Emitter& out, const P& p) {
                out << (p.board.cpus ? std::to_string(*p.board.cpus) : std::string("auto"));
            }),
        choice<P>("board.boot.loader", RTPROV_FIELD(P, board.boot.loader)),
        text<P>("board.boot.firmware_dir", RTPROV_FIELD(P, board.boot.firmware_dir),
                grammar::absolute_folder),
        text<P>("board.boot.cmdline_file", RTPROV_FIELD(P, board.boot.cmdline_file),
                grammar::file_name),
        text<P>("board.boot.config_filter", RTPROV_FIELD(P, board.boot.config_filter),
                grammar::rpi_model_filter),
        strings<P>("board.kernel.packages", RTPROV_FIELD(P, board.kernel.packages),
                   grammar::debian_package),
        strings<P>("board.kernel.rt_packages", RTPROV_FIELD(P, board.kernel.rt_packages),
                   grammar::debian_package),
        text<P>("board.kernel.rt_image", RTPROV_FIELD(P, board.kernel.rt_image),
                file_name_or_empty),
        auto_cpus("tuning.cores.housekeeping", RTPROV_FIELD(P, tuning.cores.housekeeping)),
        auto_cpus("tuning.cores.reserved", RTPROV_FIELD(P, tuning.cores.reserved)),
        choice<P>("tuning.reserve_method", RTPROV_FIELD(P, tuning.reserve_method)),
        flag<P>("tuning.kernel.realtime", RTPROV_FIELD(P, tuning.kernel.realtime)),
        strings<P>("tuning.kernel.isolcpus", RTPROV_FIELD(P, tuning.kernel.isolcpus_flags),
                   isolcpus_flag),
        choice<P>("tuning.kernel.nohz_full", RTPROV_FIELD(P, tuning.kernel.nohz_full)),
        choice<P>("tuning.kernel.rcu_nocbs", RTPROV_FIELD(P, tuning.kernel.rcu_nocbs)),
        flag<P>("tuning.kernel.irqaffinity", RTPROV_FIELD(P, tuning.kernel.irqaffinity)),
        choice<P>("tuning.kernel.missing_config", RTPROV_FIELD(P, tuning.kernel.missing_config)),
        strings<P>("tuning.kernel.extra", RTPROV_FIELD(P, tuning.kernel.extra),
                   grammar::kernel_parameter),
        services_key(),
        flag<P>("tuning.rt_push_ipi_guard", RTPROV_FIELD(P, tuning.rt_push_ipi_guard)),
        flag<P>("tuning.hold_cpu_dma_latency", RTPROV_FIELD(P, tuning.hold_cpu_dma_latency)),
        flag<P>("tuning.cpuset_partition", RTPROV_FIELD(P, tuning.cpuset_partition)),
        text<P>("tuning.cpu_governor", RTPROV_FIELD(P, tuning.cpu_governor), grammar::cpu_governor),
        irq_priority("tuning.irqs.sound_priority", "off", RTPROV_FIELD(P, tuning.irqs.sound)),
        choice<P>("tuning.irqs.sound_cpus", RTPROV_FIELD(P, tuning.irqs.sound_cpus)),
        strings<P>("tuning.irqs.sound_names", RTPROV_FIELD(P, tuning.irqs.sound_names),
                   grammar::irq_name_glob),
        irq_priority("tuning.irqs.other_priority", "keep", RTPROV_FIELD(P, tuning.irqs.others)),
        choice<P>("tuning.irqs.threaded", RTPROV_FIELD(P, tuning.irqs.threaded)),
        flag<P>("tuning.irqs.timer_threads", RTPROV_FIELD(P, tuning.irqs.timer_threads)),
        flag<P>("tuning.housekeeping_workqueues", RTPROV_FIELD(P, tuning.housekeeping_workqueues)),
        number<P>("tuning.selftest.duration_s", RTPROV_FIELD(P, tuning.selftest.duration_s), 1,
                  core::k_max_selftest_duration_s),
        number<P>("tuning.selftest.interval_us", RTPROV_FIELD(P, tuning.selftest.interval_us), 20,
                  1000000),
        number<P>("tuning.selftest.max_latency_us.reserved",
                  RTPROV_FIELD(P, tuning.selftest.max_latency_reserved_us), 1, 10000000),
        number<P>("tuning.selftest.max_latency_us.housekeeping",
                  RTPROV_FIELD(P, tuning.selftest.max_latency_housekeeping_us), 1, 10000000),
        number<P>("tuning.selftest.max_missed_per_mille",
                  RTPROV_FIELD(P, tuning.selftest.max_missed_per_mille), 0, 1000),
        flag<P>("tuning.selftest.audio", RTPROV_FIELD(P, tuning.selftest.audio)),
        text<P>("tuning.selftest.audio_device", RTPROV_FIELD(P, tuning.selftest.audio_device),
                grammar::alsa_pcm_name),
        number<P>("tuning.selftest.audio_min_headroom_percent",
                  RTPROV_FIELD(P, tuning.selftest.audio_min_headroom_percent), 0, 100),
        choice<P>("tuning.audio.buffers", RTPROV_FIELD(P, tuning.audio_buffers)),
        flag<P>("tuning.health_gate", RTPROV_FIELD(P, tuning.health_gate)),
    };
    return k_keys;
}

const Tree* child(const Tree& map, const char* key) {
    return schema::detail::child(map, key);
}

core::Profile convert(const Tree& tree, const std::string& default_name, const Origin& name_origin,
                      Problems& problems) {
    core::Profile profile;
    profile.name = default_name;
    schema::Reader c(problems, {}, &profile.origins);
    schema::read(c, tree, "profile", "", profile_keys(), profile);
    // Without a 'name' key the name is the file's: the file is what to rename.
    if (!child(tree, "name"))
        c.follows(name_origin, "name", profile.name, core::grammar::profile_name);
    return profile;
}

using schema::throw_problems;

// ---- files, extends, overrides ----------------------------------------------------------

bool looks_like_path(const std::string& name) {
    return name.find('/') != std::string::npos || (name.size() > 5 && name.ends_with(".yaml"));
}

// The file for profile 'name', searching the folders from 'first_dir' on.
std::optional<ProfileFile> find_in(const SearchPath& search_path, const std::string& name,
                                   std::size_t first_dir) {
    for (std::size_t i = first_dir; i < search_path.size(); ++i) {
        ProfileFile candidate{search_path[i].files, search_path[i].path + "/" + name + ".yaml"};
        if (candidate.files->read(candidate.path))
            return candidate;
    }
    return std::nullopt;
}

std::size_t dir_index(const SearchPath& search_path, const ProfileFile& file) {
    std::string parent = file.files->identity(stdfs::path(file.path).parent_path().string());
    for (std::size_t i = 0; i < search_path.size(); ++i)
        if (search_path[i].files == file.files &&
            search_path[i].files->identity(search_path[i].path) == parent)
            return i;
    return search_path.size();
}

std::string not_found(const std::string& name, const SearchPath& search_path) {
    std::string dirs;
    for (const ProfileDir& dir : search_path)
        dirs += (dirs.empty() ? "" : ", ") + quoted(dir.files->display(dir.path));
    return "no profile " + quoted(name) + " in " + (dirs.empty() ? "any folder" : dirs) +
           "; 'rtprov profiles' lists the known ones";
}

// Reads 'file' and the chain it extends into one merged tree; 'sources' gets the files
// read, base first. 'visiting' holds the files on the way down, to catch loops.
Tree load_chain(const ProfileFile& file, const SearchPath& search_path,
                std::vector<ProfileFile>& visiting, std::vector<std::string>& sources,
                Problems& problems) {
    for (const ProfileFile& seen : visiting)
        if (seen.same_as(file)) {
            std::string chain;
            for (const ProfileFile& s : visiting)
                chain += quoted(s.shown()) + " -> ";
            throw Error(file.shown() + ": 'extends' forms a loop: " + chain + quoted(file.shown()));
        }
    // A profile builds on a board profile and maybe a user's: a deeper chain is not a
    // profile but a puzzle, and each level costs a search of the path.
    constexpr std::size_t k_max_extends = 16;
    if (visiting.size() >= k_max_extends)
        throw Error(file.shown() + ": 'extends' goes deeper than " + std::to_string(k_max_extends) +
                    " profiles; shorten the chain");
    visiting.push_back(file);
    auto text = file.files->read(file.path);
    if (!text)
        throw Error("profile file " + quoted(file.shown()) + " does not exist");
    Tree tree = parse_yaml(*text, file.shown(), problems);
    const Tree* extends = child(tree, "extends");
    if (extends && extends->kind != Tree::Kind::null) {
        std::optional<ProfileFile> base_file;
        if (extends->kind != Tree::Kind::scalar) {
            problems.push_back({extends->origin, "'extends' must be the name of a profile"});
        } else if (looks_like_path(extends->scalar)) {
            // Relative to the file, in the same file system (an image's profile extends
            // files of the image).
            ProfileFile base{file.files, extends->scalar.front() == '/'
                                             ? extends->scalar
                                             : stdfs::path(file.path).parent_path().string() + "/" +
                                                   extends->scalar};
            if (base.files->read(base.path))
                base_file = base;
            else
                problems.push_back(
                    {extends->origin, "profile file " + quoted(base.shown()) + " does not exist"});
        } else {
            // A profile that extends its own name means the one it hides: the next file
            // of that name down the search path.
            std::size_t from = 0;
            if (extends->scalar == file.stem()) {
                std::size_t at = dir_index(search_path, file);
                from = at < search_path.size() ? at + 1 : 0;
            }
            base_file = find_in(search_path, extends->scalar, from);
            if (base_file && base_file->same_as(file))
                base_file.reset();
            if (!base_file)
                problems.push_back({extends->origin, not_found(extends->scalar, search_path)});
        }
        if (base_file) {
            Tree merged = load_chain(*base_file, search_path, visiting, sources, problems);
            if (merged.kind != Tree::Kind::map)
                problems.push_back(
                    {extends->origin, "'extends' names " + quoted(base_file->shown()) +
                                          ", which is not a profile (a map of keys)"});
            // The base's name is not the child's: drop it so the child's file name applies.
            if (auto it = std::find_if(merged.entries.begin(), merged.entries.end(),
                                       [](const TreeEntry& e) { return e.key == "name"; });
                it != merged.entries.end())
                merged.entries.erase(it);
            merge_into(merged, tree);
            tree = std::move(merged);
        }
    }
    sources.push_back(file.shown());
    return tree;
}

void apply_override(Tree& tree, const Override& override, Problems& problems) {
    Origin origin{"--set " + shown(override.text)};
    auto equals = override.text.find('=');
    if (equals == std::string::npos || equals == 0) {
        problems.push_back({origin, "expected KEY=VALUE, e.g. 'tuning.cores.reserved=2-3'"});
        return;
    }
    std::string key = override.text.substr(0, equals);
    std::string value = override.text.substr(equals + 1);
    if (const std::string top = key.substr(0, key.find('.')); top == "extends" || top == "name") {
        problems.push_back({origin, "'" + top +
                                        "' cannot be set with --set; write a profile "
                                        "file with 'extends:' and pass it to --profile"});
        return;
    }
    Problems value_problems;
    // An empty value or '~' is null: it removes the key.
    Tree value_tree = parse_yaml(value, "--set", value_problems, EmptyDocument::null);
    if (!value_problems.empty()) {
        problems.push_back({origin, "value is not valid YAML: " + value_problems.front().message});
        return;
    }
    auto stamp = [&](auto& self, Tree& t) -> void {
        t.origin = origin;
        for (Tree& item : t.items)
            self(self, item);
        for (TreeEntry& entry : t.entries) {
            entry.key_origin = origin;
            self(self, entry.value);
        }
    };
    stamp(stamp, value_tree);

    Tree* node = &tree;
    std::size_t start = 0;
    while (true) {
        std::size_t dot = key.find('.', start);
        std::string part =
            key.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
        if (part.empty()) {
            problems.push_back({origin, "empty part in key '" + key + "'"});
            return;
        }
        // Removing a key that is not there removes nothing, and makes no map on the way.
        if (value_tree.kind == Tree::Kind::null &&
            (node->kind != Tree::Kind::map || !node->find(part)))
            return;
        if (node->kind == Tree::Kind::null)
            *node = Tree{Tree::Kind::map, {}, {}, {}, origin};
        if (node->kind != Tree::Kind::map) {
            problems.push_back({origin, "'" + key.substr(0, start - 1) + "' is not a map"});
            return;
        }
        Tree* next = node->find(part);
        if (!next) {
            node->entries.push_back({part, origin, Tree{Tree::Kind::null, {}, {}, {}, origin}});
            next = &node->entries.back().value;
        }
        if (dot == std::string::npos) {
            if (value_tree.kind == Tree::Kind::null) {
                node->entries.erase(
                    std::find_if(node->entries.begin(), node->entries.end(),
                                 [&](const TreeEntry& e) { return e.key == part; }));
            } else {
                for (TreeEntry& entry : node->entries)
                    if (entry.key == part)
                        entry.key_origin = origin;
                *next = value_tree;
            }
            return;
        }
        node = next;
        start = dot + 1;
    }
}

core::Profile finish(const Tree& tree, const std::string& default_name,
                     std::vector<std::string> sources, Problems problems) {
    core::Profile profile = convert(
        tree, default_name, Origin{sources.empty() ? default_name : sources.back()}, problems);
    profile.sources = std::move(sources);
    if (problems.empty()) {
        auto semantic = core::validate(profile);
        problems.insert(problems.end(), semantic.begin(), semantic.end());
    }
    if (!problems.empty())
        throw_problems(problems);
    return profile;
}

} // namespace

std::shared_ptr<const FileSource> host_files() {
    static const auto k_host = std::make_shared<const HostFiles>();
    return k_host;
}

std::vector<ProfileEntry> list_profiles(const SearchPath& search_path) {
    std::vector<ProfileEntry> entries;
    std::set<std::string> seen;
    for (const ProfileDir& dir : search_path) {
        std::vector<std::string> names = dir.files->list(dir.path);
        std::sort(names.begin(), names.end());
        for (const std::string& name : names) {
            if (!name.ends_with(".yaml") || name.size() == 5)
                continue;
            ProfileFile file{dir.files, dir.path + "/" + name};
            ProfileEntry entry{file.stem(), file.shown(), dir.label, "", false};
            Problems problems;
            try {
                auto text = file.files->read(file.path);
                if (!text)
                    continue; // not a regular file
                Tree tree = parse_yaml(*text, file.shown(), problems);
                if (const Tree* description = child(tree, "description");
                    description && description->kind == Tree::Kind::scalar)
                    entry.description = description->scalar;
            } catch (const std::exception& e) {
                // One bad file marks itself, never the listing of the others.
                entry.description = std::string("(unreadable: ") + e.what() + ")";
            }
            if (!problems.empty())
                entry.description = "(unreadable: " + problems.front().origin.to_string() + ": " +
                                    problems.front().message + ")";
            entry.hidden = !seen.insert(entry.name).second;
            entries.push_back(std::move(entry));
        }
    }
    std::stable_sort(entries.begin(), entries.end(),
                     [](const ProfileEntry& a, const ProfileEntry& b) { return a.name < b.name; });
    return entries;
}

bool is_profile_path(const std::string& name_or_path) {
    return looks_like_path(name_or_path);
}

core::Profile load_profile(const std::string& name_or_path, const SearchPath& search_path,
                           const std::vector<Override>& overrides) {
    std::optional<ProfileFile> file;
    if (looks_like_path(name_or_path)) {
        // A path given on the command line is the host's.
        file = ProfileFile{host_files(), name_or_path};
        if (!file->files->read(file->path))
            throw Error("profile file " + quoted(name_or_path) + " does not exist");
    } else {
        file = find_in(search_path, name_or_path, 0);
        if (!file)
            throw Error(not_found(name_or_path, search_path));
    }
    Problems problems;
    std::vector<ProfileFile> visiting;
    std::vector<std::string> sources;
    Tree tree = load_chain(*file, search_path, visiting, sources, problems);
    if (const Tree* extends = child(tree, "extends"); extends) {
        tree.entries.erase(std::find_if(tree.entries.begin(), tree.entries.end(),
                                        [](const TreeEntry& e) { return e.key == "extends"; }));
    }
    for (const Override& override : overrides)
        apply_override(tree, override, problems);
    return finish(tree, file->stem(), std::move(sources), std::move(problems));
}

core::Profile parse_profile(const std::string& text, const std::string& label) {
    Problems problems;
    Tree tree = parse_yaml(text, label, problems);
    if (const Tree* extends = child(tree, "extends"))
        problems.push_back({extends->origin, "a resolved profile has no 'extends'"});
    return finish(tree, stdfs::path(label).stem().string(), {label}, std::move(problems));
}

// ---- Profile -> YAML --------------------------------------------------------------------

std::string to_yaml(const core::Profile& p) {
    YAML::Emitter out;
    schema::write(out, profile_keys(), p);
    return std::string(out.c_str()) + "\n";
}

} // namespace rtprov::profile
