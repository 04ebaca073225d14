#include "provisioner/profile/profile_loader.hpp"

#include "provisioner/core/error.hpp"
#include "provisioner/core/grammar.hpp"
#include "provisioner/profile/yaml_tree.hpp"
#include "provisioner/target/root.hpp"

#include <yaml-cpp/yaml.h> // the emitter: to_yaml()

#include <algorithm>
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
namespace fs = std::filesystem;

namespace {

using Problems = std::vector<ProfileProblem>;

class HostFiles : public FileSource {
  public:
    // A folder of that name is not a profile; a FIFO or device is refused by its type.
    std::optional<std::string> read(const std::string& path) const override {
        std::error_code ec;
        if (fs::is_directory(path, ec))
            return std::nullopt;
        return target::read_host_file(path, target::caps::k_config);
    }
    std::vector<std::string> list(const std::string& dir) const override {
        std::vector<std::string> names;
        std::error_code ec;
        for (const auto& entry : fs::directory_iterator(dir, ec))
            names.push_back(entry.path().filename().string());
        return names;
    }
    std::string identity(const std::string& path) const override {
        std::error_code ec;
        return fs::weakly_canonical(path, ec).string();
    }
    std::string display(const std::string& path) const override { return path; }
};

// A file of a profile folder: where it is read from and its path there.
struct ProfileFile {
    std::shared_ptr<const FileSource> files;
    std::string path;

    std::string shown() const { return files->display(path); }
    std::string stem() const { return fs::path(path).stem().string(); }
    std::string identity() const { return files->identity(path); }
    bool same_as(const ProfileFile& other) const {
        return files == other.files && identity() == other.identity();
    }
};

// 'value' quoted for a message, control characters written as escapes so that a
// newline in a hostile value cannot start a line of its own.
std::string shown(const std::string& value) {
    // A long value is cut: the message names it, it need not repeat 100 KB of it.
    constexpr std::size_t k_max_shown = 160;
    std::string out = "'";
    for (char ch : value.substr(0, k_max_shown)) {
        auto c = static_cast<unsigned char>(ch);
        if (c == '\n')
            out += "\\n";
        else if (c < 0x20 || c == 0x7f) {
            static const char k_hex[] = "0123456789abcdef";
            out += "\\x";
            out += k_hex[c >> 4];
            out += k_hex[c & 15];
        } else
            out += char(c);
    }
    return out + (value.size() > k_max_shown ? "...'" : "'");
}

// ---- Tree -> Profile --------------------------------------------------------------------

class Converter {
  public:
    explicit Converter(Problems& problems) : m_problems(problems) {}

    void fail(const Origin& origin, std::string message) {
        m_problems.push_back({origin, std::move(message)});
    }

    // Checks 'value' of key 'path' against its kind's rule (core::grammar): whatever
    // reaches a file, a unit, a path or a command must follow one.
    bool follows(const Origin& origin, const std::string& path, const std::string& value,
                 std::optional<std::string> (*rule)(const std::string&)) {
        std::optional<std::string> broken = rule(value);
        if (broken)
            fail(origin, "'" + path + "' holds " + shown(value) + ": " + *broken);
        return !broken;
    }

    // Every item of a list read with strings().
    void all_follow(const Tree* tree, const std::string& path,
                    const std::vector<std::string>& values,
                    std::optional<std::string> (*rule)(const std::string&)) {
        if (tree)
            for (const std::string& value : values)
                if (!follows(tree->origin, path, value, rule))
                    return;
    }

    // True when 'tree' is a map (null counts as an empty one); reports unknown keys.
    bool map(const Tree& tree, const std::string& path, const std::vector<std::string_view>& keys) {
        if (tree.kind == Tree::Kind::null)
            return true;
        if (tree.kind != Tree::Kind::map) {
            fail(tree.origin, "'" + path + "' must be a map of keys");
            return false;
        }
        for (const TreeEntry& entry : tree.entries)
            if (std::find(keys.begin(), keys.end(), entry.key) == keys.end())
                fail(entry.key_origin, unknown_key(entry.key, keys));
        return true;
    }

    const std::string* scalar(const Tree& tree, const std::string& path, const char* expected) {
        if (tree.kind != Tree::Kind::scalar) {
            fail(tree.origin, "'" + path + "' must be " + expected);
            return nullptr;
        }
        return &tree.scalar;
    }

    void text(const Tree* tree, const std::string& path, std::string& out) {
        if (!tree)
            return;
        if (const std::string* value = scalar(*tree, path, "a string"))
            out = *value;
    }

    void boolean(const Tree* tree, const std::string& path, bool& out) {
        if (!tree)
            return;
        const std::string* value = scalar(*tree, path, "true or false");
        if (!value)
            return;
        if (*value == "true")
            out = true;
        else if (*value == "false")
            out = false;
        else
            fail(tree->origin, "'" + path + "' must be true or false, not '" + *value + "'");
    }

    std::optional<long> integer(const Tree& tree, const std::string& path, long min, long max) {
        const std::string* value = scalar(tree, path, "a whole number");
        if (!value)
            return std::nullopt;
        long number = 0;
        auto [end, ec] = std::from_chars(value->data(), value->data() + value->size(), number);
        if (value->empty() || ec != std::errc() || end != value->data() + value->size()) {
            fail(tree.origin, "'" + path + "' must be a whole number, not '" + *value + "'");
            return std::nullopt;
        }
        if (number < min || number > max) {
            fail(tree.origin, "'" + path + "' is " + *value + ", outside " + std::to_string(min) +
                                  "-" + std::to_string(max));
            return std::nullopt;
        }
        return number;
    }

    template <typename Int>
    void number(const Tree* tree, const std::string& path, long min, long max, Int& out) {
        if (!tree)
            return;
        if (auto value = integer(*tree, path, min, max))
            out = static_cast<Int>(*value);
    }

    template <typename Int>
    void number(const Tree* tree, const std::string& path, long min, long max,
                std::optional<Int>& out) {
        if (!tree)
            return;
        if (auto value = integer(*tree, path, min, max))
            out = static_cast<Int>(*value);
    }

    // A list of strings; a single string counts as a list of one.
    void strings(const Tree* tree, const std::string& path, std::vector<std::string>& out) {
        if (!tree)
            return;
        std::vector<std::string> values;
        if (tree->kind == Tree::Kind::scalar) {
            values.push_back(tree->scalar);
        } else if (tree->kind == Tree::Kind::sequence) {
            for (const Tree& item : tree->items)
                if (const std::string* value = scalar(item, path, "a list of strings"))
                    values.push_back(*value);
        } else if (tree->kind != Tree::Kind::null) {
            fail(tree->origin, "'" + path + "' must be a list of strings");
            return;
        }
        out = std::move(values);
    }

    template <typename Enum>
    void choice(const Tree* tree, const std::string& path,
                const std::vector<std::pair<std::string_view, Enum>>& choices, Enum& out) {
        if (!tree)
            return;
        std::string names;
        for (const auto& [name, value] : choices)
            names += (names.empty() ? "'" : ", '") + std::string(name) + "'";
        const std::string* value = scalar(*tree, path, ("one of " + names).c_str());
        if (!value)
            return;
        for (const auto& [name, e] : choices)
            if (*value == name) {
                out = e;
                return;
            }
        fail(tree->origin, "'" + path + "' must be one of " + names + ", not '" + *value + "'");
    }

    // A CPU list: '0-2,5', a list of numbers and ranges, or '' / [] for none.
    std::optional<core::CpuList> cpu_list(const Tree& tree, const std::string& path) {
        std::vector<const Tree*> parts;
        if (tree.kind == Tree::Kind::scalar)
            parts.push_back(&tree);
        else if (tree.kind == Tree::Kind::sequence)
            for (const Tree& item : tree.items)
                parts.push_back(&item);
        else if (tree.kind != Tree::Kind::null) {
            fail(tree.origin, "'" + path + "' must be a CPU list such as '2-3' or '0,2'");
            return std::nullopt;
        }
        core::CpuList list;
        for (const Tree* part : parts) {
            const std::string* value = scalar(*part, path, "a CPU list such as '2-3'");
            if (!value)
                return std::nullopt;
            std::string error;
            auto parsed = core::parse_cpu_list(*value, error);
            if (!parsed) {
                fail(part->origin, "malformed CPU list in '" + path + "': " + error);
                return std::nullopt;
            }
            list = list.union_with(*parsed);
        }
        return list;
    }

    // 'auto' or a CPU list.
    void auto_cpu_list(const Tree* tree, const std::string& path, std::optional<core::CpuList>& out,
                       Origin& origin) {
        if (!tree)
            return;
        origin = tree->origin;
        if (tree->kind == Tree::Kind::scalar && tree->scalar == "auto") {
            out.reset();
            return;
        }
        if (auto list = cpu_list(*tree, path))
            out = *list;
    }

  private:
    Problems& m_problems;
};

const Tree* child(const Tree& map, const char* key) {
    return map.kind == Tree::Kind::map ? map.find(key) : nullptr;
}

const Tree& child_or_empty(const Tree& map, const char* key) {
    static const Tree k_empty{Tree::Kind::null, {}, {}, {}, {}};
    const Tree* found = child(map, key);
    return found ? *found : k_empty;
}

void read_board(Converter& c, const Tree& tree, core::Board& board) {
    if (!c.map(tree, "board", {"model", "match", "cpus", "boot", "kernel"}))
        return;
    c.text(child(tree, "model"), "board.model", board.model);
    if (const Tree* model = child(tree, "model"))
        c.follows(model->origin, "board.model", board.model, core::grammar::text_line);
    if (const Tree* cpus = child(tree, "cpus")) {
        board.cpus_origin = cpus->origin;
        if (cpus->kind == Tree::Kind::scalar && cpus->scalar == "auto")
            board.cpus.reset();
        else if (cpus->kind == Tree::Kind::scalar) {
            if (auto n = c.integer(*cpus, "board.cpus", 1, core::CpuList::k_max_cpu + 1))
                board.cpus = unsigned(*n);
        } else
            c.fail(cpus->origin, "'board.cpus' must be a whole number or 'auto'");
    }

    const Tree& match = child_or_empty(tree, "match");
    if (c.map(match, "board.match",
              {"device_tree_model", "dmi_product_name", "os_id", "cpu_count"})) {
        c.strings(child(match, "device_tree_model"), "board.match.device_tree_model",
                  board.match.device_tree_model);
        c.strings(child(match, "dmi_product_name"), "board.match.dmi_product_name",
                  board.match.dmi_product_name);
        c.strings(child(match, "os_id"), "board.match.os_id", board.match.os_id);
        c.all_follow(child(match, "device_tree_model"), "board.match.device_tree_model",
                     board.match.device_tree_model, core::grammar::text_line);
        c.all_follow(child(match, "dmi_product_name"), "board.match.dmi_product_name",
                     board.match.dmi_product_name, core::grammar::text_line);
        c.all_follow(child(match, "os_id"), "board.match.os_id", board.match.os_id,
                     core::grammar::text_line);
        c.number(child(match, "cpu_count"), "board.match.cpu_count", 1,
                 core::CpuList::k_max_cpu + 1, board.match.cpu_count);
    }

    const Tree& boot = child_or_empty(tree, "boot");
    if (c.map(boot, "board.boot", {"loader", "firmware_dir", "cmdline_file"})) {
        c.choice(child(boot, "loader"), "board.boot.loader",
                 std::vector<std::pair<std::string_view, core::BootLoader>>{
                     {"rpi-firmware", core::BootLoader::rpi_firmware},
                     {"grub", core::BootLoader::grub},
                     {"systemd-boot", core::BootLoader::systemd_boot}},
                 board.boot.loader);
        c.text(child(boot, "firmware_dir"), "board.boot.firmware_dir", board.boot.firmware_dir);
        c.text(child(boot, "cmdline_file"), "board.boot.cmdline_file", board.boot.cmdline_file);
        if (const Tree* dir = child(boot, "firmware_dir"))
            c.follows(dir->origin, "board.boot.firmware_dir", board.boot.firmware_dir,
                      core::grammar::absolute_folder);
        if (const Tree* file = child(boot, "cmdline_file"))
            c.follows(file->origin, "board.boot.cmdline_file", board.boot.cmdline_file,
                      core::grammar::file_name);
    }

    const Tree& kernel = child_or_empty(tree, "kernel");
    if (c.map(kernel, "board.kernel", {"packages", "rt_packages", "rt_image"})) {
        c.strings(child(kernel, "packages"), "board.kernel.packages", board.kernel.packages);
        c.strings(child(kernel, "rt_packages"), "board.kernel.rt_packages",
                  board.kernel.rt_packages);
        c.text(child(kernel, "rt_image"), "board.kernel.rt_image", board.kernel.rt_image);
        c.all_follow(child(kernel, "packages"), "board.kernel.packages", board.kernel.packages,
                     core::grammar::debian_package);
        c.all_follow(child(kernel, "rt_packages"), "board.kernel.rt_packages",
                     board.kernel.rt_packages, core::grammar::debian_package);
        if (const Tree* image = child(kernel, "rt_image"); image && !board.kernel.rt_image.empty())
            c.follows(image->origin, "board.kernel.rt_image", board.kernel.rt_image,
                      core::grammar::file_name);
    }
}

// The words of a service's 'policy': 'app', then every kernel policy but deadline, which
// systemd's CPUSchedulingPolicy= does not take (systemd.exec(5): other, batch, idle, fifo,
// rr); SCHED_DEADLINE needs a runtime, deadline and period that a unit cannot give.
std::vector<std::pair<std::string_view, std::optional<core::SchedPolicy>>> service_policies() {
    std::vector<std::pair<std::string_view, std::optional<core::SchedPolicy>>> out = {
        {"app", std::nullopt}};
    for (const core::SchedPolicyName& name : core::sched_policy_names())
        if (name.policy != core::SchedPolicy::deadline)
            out.emplace_back(name.word, name.policy);
    return out;
}

void read_service(Converter& c, const TreeEntry& entry, core::ServiceTuning& service) {
    const std::string path = "tuning.services." + entry.key;
    service.name = entry.key;
    service.unit = entry.key + ".service";
    service.origin = entry.key_origin;
    service.priority_origin = entry.key_origin;
    if (!c.follows(entry.key_origin, "tuning.services", entry.key, core::grammar::service_key))
        return;
    const Tree& tree = entry.value;
    if (!c.map(tree, path,
               {"unit", "cpus", "policy", "priority", "reset_on_fork", "limit_rtprio",
                "limit_memlock", "nice", "io_class", "force_priority", "if_missing"}))
        return;
    c.text(child(tree, "unit"), path + ".unit", service.unit);
    const Tree* unit = child(tree, "unit");
    c.follows(unit ? unit->origin : entry.key_origin, path + ".unit", service.unit,
              core::grammar::service_unit);
    if (const Tree* cpus = child(tree, "cpus")) {
        core::CpuTarget target;
        if (cpus->kind == Tree::Kind::scalar && cpus->scalar == "reserved")
            target.kind = core::CpuTargetKind::reserved;
        else if (cpus->kind == Tree::Kind::scalar && cpus->scalar == "housekeeping")
            target.kind = core::CpuTargetKind::housekeeping;
        else if (cpus->kind == Tree::Kind::scalar && cpus->scalar == "all")
            target.kind = core::CpuTargetKind::all;
        else if (auto list = c.cpu_list(*cpus, path + ".cpus")) {
            target.kind = core::CpuTargetKind::list;
            target.list = *list;
        }
        service.cpus = target;
    }
    c.choice(child(tree, "policy"), path + ".policy", service_policies(), service.policy);
    if (const Tree* priority = child(tree, "priority")) {
        service.priority_origin = priority->origin;
        // The range 1-99 is checked by core::validate() with a message about scheduling.
        c.number(priority, path + ".priority", -100000, 100000, service.priority);
    }
    if (const Tree* reset = child(tree, "reset_on_fork")) {
        bool value = false;
        c.boolean(reset, path + ".reset_on_fork", value);
        service.reset_on_fork = value;
    }
    c.number(child(tree, "limit_rtprio"), path + ".limit_rtprio", -100000, 100000,
             service.limit_rtprio);
    if (const Tree* memlock = child(tree, "limit_memlock")) {
        std::string value;
        c.text(memlock, path + ".limit_memlock", value);
        if (memlock->kind == Tree::Kind::scalar &&
            c.follows(memlock->origin, path + ".limit_memlock", value, core::grammar::memlock_size))
            service.limit_memlock = value;
    }
    c.number(child(tree, "nice"), path + ".nice", -100000, 100000, service.nice);
    c.choice(child(tree, "io_class"), path + ".io_class",
             std::vector<std::pair<std::string_view, core::IoClass>>{
                 {"none", core::IoClass::none},
                 {"realtime", core::IoClass::realtime},
                 {"best-effort", core::IoClass::best_effort},
                 {"idle", core::IoClass::idle}},
             service.io_class);
    c.boolean(child(tree, "force_priority"), path + ".force_priority", service.force_priority);
    c.choice(child(tree, "if_missing"), path + ".if_missing",
             std::vector<std::pair<std::string_view, core::MissingService>>{
                 {"skip", core::MissingService::skip}, {"write", core::MissingService::write}},
             service.if_missing);
}

void read_tuning(Converter& c, const Tree& tree, core::Tuning& tuning) {
    if (!c.map(tree, "tuning",
               {"cores", "reserve_method", "kernel", "services", "rt_push_ipi_guard",
                "hold_cpu_dma_latency", "cpu_governor", "cpuset_partition", "selftest"}))
        return;

    const Tree& cores = child_or_empty(tree, "cores");
    if (c.map(cores, "tuning.cores", {"housekeeping", "reserved"})) {
        c.auto_cpu_list(child(cores, "housekeeping"), "tuning.cores.housekeeping",
                        tuning.cores.housekeeping, tuning.cores.housekeeping_origin);
        c.auto_cpu_list(child(cores, "reserved"), "tuning.cores.reserved", tuning.cores.reserved,
                        tuning.cores.reserved_origin);
    }
    c.choice(child(tree, "reserve_method"), "tuning.reserve_method",
             std::vector<std::pair<std::string_view, core::ReserveMethod>>{
                 {"isolcpus", core::ReserveMethod::isolcpus},
                 {"cpuset", core::ReserveMethod::cpuset},
                 {"none", core::ReserveMethod::none}},
             tuning.reserve_method);

    const Tree& kernel = child_or_empty(tree, "kernel");
    if (c.map(kernel, "tuning.kernel",
              {"realtime", "isolcpus", "nohz_full", "rcu_nocbs", "irqaffinity", "missing_config",
               "extra"})) {
        c.boolean(child(kernel, "realtime"), "tuning.kernel.realtime", tuning.kernel.realtime);
        c.strings(child(kernel, "isolcpus"), "tuning.kernel.isolcpus",
                  tuning.kernel.isolcpus_flags);
        // isolcpus= flags the kernel knows (Documentation/admin-guide/kernel-parameters.txt).
        static const std::set<std::string> k_flags = {"nohz", "domain", "managed_irq"};
        if (const Tree* flags = child(kernel, "isolcpus"))
            for (const std::string& flag : tuning.kernel.isolcpus_flags)
                if (!k_flags.count(flag))
                    c.fail(flags->origin,
                           "unknown isolcpus flag '" + flag +
                               "'; the kernel knows 'nohz', 'domain', 'managed_irq'");
        const std::vector<std::pair<std::string_view, core::KernelFeature>> features = {
            {"auto", core::KernelFeature::automatic},
            {"on", core::KernelFeature::on},
            {"off", core::KernelFeature::off}};
        c.choice(child(kernel, "nohz_full"), "tuning.kernel.nohz_full", features,
                 tuning.kernel.nohz_full);
        c.choice(child(kernel, "rcu_nocbs"), "tuning.kernel.rcu_nocbs", features,
                 tuning.kernel.rcu_nocbs);
        c.boolean(child(kernel, "irqaffinity"), "tuning.kernel.irqaffinity",
                  tuning.kernel.irqaffinity);
        c.choice(child(kernel, "missing_config"), "tuning.kernel.missing_config",
                 std::vector<std::pair<std::string_view, core::MissingKernelConfig>>{
                     {"require", core::MissingKernelConfig::require},
                     {"assume", core::MissingKernelConfig::assume}},
                 tuning.kernel.missing_config);
        c.strings(child(kernel, "extra"), "tuning.kernel.extra", tuning.kernel.extra);
        c.all_follow(child(kernel, "extra"), "tuning.kernel.extra", tuning.kernel.extra,
                     core::grammar::kernel_parameter);
    }

    const Tree& services = child_or_empty(tree, "services");
    if (services.kind == Tree::Kind::map) {
        tuning.services.clear();
        for (const TreeEntry& entry : services.entries) {
            core::ServiceTuning service;
            read_service(c, entry, service);
            tuning.services.push_back(std::move(service));
        }
    } else if (services.kind != Tree::Kind::null) {
        c.fail(services.origin, "'tuning.services' must be a map of service names");
    }

    c.boolean(child(tree, "rt_push_ipi_guard"), "tuning.rt_push_ipi_guard",
              tuning.rt_push_ipi_guard);
    c.boolean(child(tree, "hold_cpu_dma_latency"), "tuning.hold_cpu_dma_latency",
              tuning.hold_cpu_dma_latency);
    c.boolean(child(tree, "cpuset_partition"), "tuning.cpuset_partition", tuning.cpuset_partition);
    if (const Tree* governor = child(tree, "cpu_governor")) {
        std::string value;
        c.text(governor, "tuning.cpu_governor", value);
        if (governor->kind == Tree::Kind::scalar &&
            c.follows(governor->origin, "tuning.cpu_governor", value, core::grammar::cpu_governor))
            tuning.cpu_governor = value;
    }

    const Tree& selftest = child_or_empty(tree, "selftest");
    if (c.map(selftest, "tuning.selftest",
              {"duration_s", "interval_us", "max_latency_us", "max_missed_per_mille"})) {
        c.number(child(selftest, "duration_s"), "tuning.selftest.duration_s", 1, 3600,
                 tuning.selftest.duration_s);
        c.number(child(selftest, "interval_us"), "tuning.selftest.interval_us", 20, 1000000,
                 tuning.selftest.interval_us);
        c.number(child(selftest, "max_missed_per_mille"), "tuning.selftest.max_missed_per_mille", 0,
                 1000, tuning.selftest.max_missed_per_mille);
        const Tree& max = child_or_empty(selftest, "max_latency_us");
        if (c.map(max, "tuning.selftest.max_latency_us", {"reserved", "housekeeping"})) {
            c.number(child(max, "reserved"), "tuning.selftest.max_latency_us.reserved", 1, 10000000,
                     tuning.selftest.max_latency_reserved_us);
            c.number(child(max, "housekeeping"), "tuning.selftest.max_latency_us.housekeeping", 1,
                     10000000, tuning.selftest.max_latency_housekeeping_us);
        }
    }
}

core::Profile convert(const Tree& tree, const std::string& default_name, const Origin& name_origin,
                      Problems& problems) {
    Converter c(problems);
    core::Profile profile;
    profile.name = default_name;
    if (!c.map(tree, "profile", {"name", "description", "extends", "board", "tuning"}))
        return profile;
    c.text(child(tree, "name"), "name", profile.name);
    // Without a 'name' key the name is the file's: the file is what to rename.
    c.follows(child(tree, "name") ? child(tree, "name")->origin : name_origin, "name", profile.name,
              core::grammar::profile_name);
    c.text(child(tree, "description"), "description", profile.description);
    if (const Tree* description = child(tree, "description"))
        c.follows(description->origin, "description", profile.description,
                  core::grammar::text_line);
    read_board(c, child_or_empty(tree, "board"), profile.board);
    read_tuning(c, child_or_empty(tree, "tuning"), profile.tuning);
    return profile;
}

[[noreturn]] void throw_problems(const Problems& problems) {
    std::string message;
    for (const ProfileProblem& problem : problems)
        message +=
            (message.empty() ? "" : "\n") + problem.origin.to_string() + ": " + problem.message;
    throw Error(message);
}

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
    std::string parent = file.files->identity(fs::path(file.path).parent_path().string());
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
                                             : fs::path(file.path).parent_path().string() + "/" +
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
    return finish(tree, fs::path(label).stem().string(), {label}, std::move(problems));
}

// ---- Profile -> YAML --------------------------------------------------------------------

namespace {

void emit_list(YAML::Emitter& out, const char* key, const std::vector<std::string>& values) {
    out << YAML::Key << key << YAML::Value << YAML::Flow << YAML::BeginSeq;
    for (const std::string& value : values)
        out << value;
    out << YAML::EndSeq;
}

std::string cpus_or_auto(const std::optional<core::CpuList>& list) {
    return list ? list->to_string() : "auto";
}

} // namespace

std::string to_yaml(const core::Profile& p) {
    YAML::Emitter out;
    out << YAML::BeginMap;
    out << YAML::Key << "name" << YAML::Value << p.name;
    out << YAML::Key << "description" << YAML::Value << p.description;

    out << YAML::Key << "board" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "model" << YAML::Value << p.board.model;
    out << YAML::Key << "match" << YAML::Value << YAML::BeginMap;
    emit_list(out, "device_tree_model", p.board.match.device_tree_model);
    emit_list(out, "dmi_product_name", p.board.match.dmi_product_name);
    emit_list(out, "os_id", p.board.match.os_id);
    if (p.board.match.cpu_count)
        out << YAML::Key << "cpu_count" << YAML::Value << *p.board.match.cpu_count;
    out << YAML::EndMap;
    out << YAML::Key << "cpus" << YAML::Value
        << (p.board.cpus ? std::to_string(*p.board.cpus) : std::string("auto"));
    out << YAML::Key << "boot" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "loader" << YAML::Value << core::to_string(p.board.boot.loader);
    out << YAML::Key << "firmware_dir" << YAML::Value << p.board.boot.firmware_dir;
    out << YAML::Key << "cmdline_file" << YAML::Value << p.board.boot.cmdline_file;
    out << YAML::EndMap;
    out << YAML::Key << "kernel" << YAML::Value << YAML::BeginMap;
    emit_list(out, "packages", p.board.kernel.packages);
    emit_list(out, "rt_packages", p.board.kernel.rt_packages);
    out << YAML::Key << "rt_image" << YAML::Value << p.board.kernel.rt_image;
    out << YAML::EndMap;
    out << YAML::EndMap;

    const core::Tuning& t = p.tuning;
    out << YAML::Key << "tuning" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "cores" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "housekeeping" << YAML::Value << cpus_or_auto(t.cores.housekeeping);
    out << YAML::Key << "reserved" << YAML::Value << cpus_or_auto(t.cores.reserved);
    out << YAML::EndMap;
    out << YAML::Key << "reserve_method" << YAML::Value << core::to_string(t.reserve_method);
    out << YAML::Key << "kernel" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "realtime" << YAML::Value << t.kernel.realtime;
    emit_list(out, "isolcpus", t.kernel.isolcpus_flags);
    out << YAML::Key << "nohz_full" << YAML::Value << core::to_string(t.kernel.nohz_full);
    out << YAML::Key << "rcu_nocbs" << YAML::Value << core::to_string(t.kernel.rcu_nocbs);
    out << YAML::Key << "irqaffinity" << YAML::Value << t.kernel.irqaffinity;
    out << YAML::Key << "missing_config" << YAML::Value << core::to_string(t.kernel.missing_config);
    emit_list(out, "extra", t.kernel.extra);
    out << YAML::EndMap;

    out << YAML::Key << "services" << YAML::Value << YAML::BeginMap;
    for (const core::ServiceTuning& s : t.services) {
        out << YAML::Key << s.name << YAML::Value << YAML::BeginMap;
        out << YAML::Key << "unit" << YAML::Value << s.unit;
        if (s.cpus)
            out << YAML::Key << "cpus" << YAML::Value << core::to_string(*s.cpus);
        out << YAML::Key << "policy" << YAML::Value << core::service_policy_word(s.policy);
        if (s.priority)
            out << YAML::Key << "priority" << YAML::Value << *s.priority;
        if (s.reset_on_fork)
            out << YAML::Key << "reset_on_fork" << YAML::Value << *s.reset_on_fork;
        if (s.limit_rtprio)
            out << YAML::Key << "limit_rtprio" << YAML::Value << *s.limit_rtprio;
        if (s.limit_memlock)
            out << YAML::Key << "limit_memlock" << YAML::Value << *s.limit_memlock;
        if (s.nice)
            out << YAML::Key << "nice" << YAML::Value << *s.nice;
        out << YAML::Key << "io_class" << YAML::Value << core::to_string(s.io_class);
        out << YAML::Key << "force_priority" << YAML::Value << s.force_priority;
        out << YAML::Key << "if_missing" << YAML::Value << core::to_string(s.if_missing);
        out << YAML::EndMap;
    }
    out << YAML::EndMap;

    out << YAML::Key << "rt_push_ipi_guard" << YAML::Value << t.rt_push_ipi_guard;
    out << YAML::Key << "hold_cpu_dma_latency" << YAML::Value << t.hold_cpu_dma_latency;
    out << YAML::Key << "cpuset_partition" << YAML::Value << t.cpuset_partition;
    if (t.cpu_governor)
        out << YAML::Key << "cpu_governor" << YAML::Value << *t.cpu_governor;
    out << YAML::Key << "selftest" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "duration_s" << YAML::Value << t.selftest.duration_s;
    out << YAML::Key << "interval_us" << YAML::Value << t.selftest.interval_us;
    out << YAML::Key << "max_latency_us" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "reserved" << YAML::Value << t.selftest.max_latency_reserved_us;
    out << YAML::Key << "housekeeping" << YAML::Value << t.selftest.max_latency_housekeeping_us;
    out << YAML::EndMap;
    out << YAML::Key << "max_missed_per_mille" << YAML::Value << t.selftest.max_missed_per_mille;
    out << YAML::EndMap;
    out << YAML::EndMap;
    out << YAML::EndMap;
    return std::string(out.c_str()) + "\n";
}

} // namespace rtprov::profile
