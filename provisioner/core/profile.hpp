// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/core/audio_size.hpp"
#include "provisioner/core/cpu_list.hpp"
#include "provisioner/core/origin.hpp"
#include "provisioner/core/sched_policy.hpp"

#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

// The typed board profile. The schema, with every key and default, is documented in
// docs/profile-format.md; the table of its keys (profile/profile_loader.cpp, with
// profile/schema.hpp) reads it from YAML and writes it back, and is the only code that
// knows YAML.
namespace rtprov::core {

// raspi_firmware: Debian's raspi-firmware package, whose kernel hook writes the Pi
// firmware's files itself (boot/raspi_firmware_loader.cpp); found in the target where a
// profile names rpi_firmware, or named.
enum class BootLoader { rpi_firmware, grub, systemd_boot, raspi_firmware };
enum class ReserveMethod { isolcpus, cpuset, none };
enum class KernelFeature { automatic, on, off }; // auto: only where every kernel has it
enum class MissingKernelConfig { require, assume };
enum class IoClass { none, realtime, best_effort, idle };
enum class MissingService { skip, write };
enum class CpuTargetKind { reserved, housekeeping, all, list };
enum class IrqCpus { housekeeping, reserved }; // where the sound path's IRQs are handled
// tuning.audio.buffers: what rtprov does with the players' ALSA buffers
// (docs/audio-buffers.md): leaves them ('keep'), says what the measurement supports
// ('advise'), or writes it into each player's configuration ('write').
enum class BufferMode { keep, advise, write };

// Facts about the hardware and its OS image.
struct BoardMatch {
    std::vector<std::string> device_tree_model; // globs against /proc/device-tree/model
    std::vector<std::string> dmi_product_name;  // globs against DMI product_name
    std::vector<std::string> os_id;             // ID or ID_LIKE from os-release
    std::optional<unsigned> cpu_count;
    friend bool operator==(const BoardMatch&, const BoardMatch&) = default;
};

struct BootConfig {
    BootLoader loader = BootLoader::grub;
    std::string firmware_dir = "/boot/firmware"; // rpi-firmware only
    std::string cmdline_file = "cmdline.txt";    // rpi-firmware only
    std::string config_filter = "pi4"; // rpi-firmware only: config.txt's model filter, [pi4]
    friend bool operator==(const BootConfig&, const BootConfig&) = default;
};

struct KernelPackages {
    std::vector<std::string> packages;    // the standard kernel
    std::vector<std::string> rt_packages; // the PREEMPT_RT variant
    std::string rt_image;                 // rpi-firmware: kernel= value, e.g. kernel8_rt.img
    friend bool operator==(const KernelPackages&, const KernelPackages&) = default;
};

struct Board {
    std::string model;
    BoardMatch match;
    std::optional<unsigned> cpus; // nullopt: 'auto', counted on the running machine
    BootConfig boot;
    KernelPackages kernel;
    friend bool operator==(const Board&, const Board&) = default;
};

// A CPU list, or nullopt for 'auto' (resolved from the CPU count).
struct CoreLayout {
    std::optional<CpuList> housekeeping;
    std::optional<CpuList> reserved;
    friend bool operator==(const CoreLayout&, const CoreLayout&) = default;
};

struct KernelParams {
    bool realtime = false;                                               // boot a PREEMPT_RT kernel
    std::vector<std::string> isolcpus_flags = {"managed_irq", "domain"}; // isolcpus= flags
    KernelFeature nohz_full = KernelFeature::automatic;
    KernelFeature rcu_nocbs = KernelFeature::automatic;
    bool irqaffinity = true; // irqaffinity= housekeeping cores
    MissingKernelConfig missing_config = MissingKernelConfig::require;
    std::vector<std::string> extra; // further tokens, written as given
    friend bool operator==(const KernelParams&, const KernelParams&) = default;
};

struct CpuTarget {
    CpuTargetKind kind = CpuTargetKind::reserved;
    CpuList list; // kind == list
    friend bool operator==(const CpuTarget&, const CpuTarget&) = default;
};

struct ServiceTuning {
    std::string name; // key in the profile; app knowledge is looked up by it
    std::string unit; // systemd unit, default '<name>.service'
    std::optional<CpuTarget> cpus;
    std::optional<SchedPolicy> policy; // nullopt: 'app', leave it to the app
    std::optional<int> priority;
    std::optional<bool> reset_on_fork;
    std::optional<int> limit_rtprio;
    std::optional<std::string> limit_memlock; // 'infinity' or a size like '512M'
    std::optional<int> nice;
    IoClass io_class = IoClass::none;
    bool force_priority = false; // allow a unit-wide priority that inverts the app's own
    // The player's ALSA period and buffer as its stack says them (core/buffer_rule.hpp),
    // written where it reads them when tuning.audio.buffers is 'write'; nullopt: 'auto',
    // chosen from the measurement at first boot.
    std::optional<AudioSize> period;
    std::optional<AudioSize> buffer;
    MissingService if_missing = MissingService::skip;
    Origin origin; // the service's key
    friend bool operator==(const ServiceTuning&, const ServiceTuning&) = default;
};

// The longest self-test run per idle policy: a week. Soak runs of 12 to 24 hours are
// usual with cyclictest; each second costs 8 bytes per core (the per-second maximum and
// missed wake-ups), 4.8 MB a week.
inline constexpr unsigned k_max_selftest_duration_s = 7 * 24 * 3600;

struct SelftestThresholds {
    unsigned duration_s = 10;
    unsigned interval_us = 100;
    unsigned max_latency_reserved_us = 500;
    unsigned max_latency_housekeeping_us = 10000;
    // Planned wake-ups a core may miss (skipped because a sample came a whole interval
    // late), per mille: whole numbers like every profile number, and 0.1 % steps, since a
    // healthy box misses none at all.
    unsigned max_missed_per_mille = 10;
    // The underrun test (rtprov selftest --audio): whether first boot and the trial run it,
    // on which ALSA device ("": the only playback card), and the least audio that must be
    // left in the buffer at every write, in percent of the buffer.
    bool audio = false;
    std::optional<std::string> audio_device;
    unsigned audio_min_headroom_percent = 25;
    friend bool operator==(const SelftestThresholds&, const SelftestThresholds&) = default;
};

// A priority of IRQ threads: leave them as the kernel has them ('off' for the sound
// path's, 'keep' for the others), 'auto' (worked out from the audio apps' priorities,
// core/irq_layout.hpp), or a number.
struct IrqPriority {
    enum class Mode { leave, automatic, value };
    Mode mode = Mode::leave;
    int value = 0; // mode == value
    friend bool operator==(const IrqPriority&, const IrqPriority&) = default;
};

// tuning.irqs: the interrupts of the sound path and the others, applied at boot and when
// a sound card appears (rtprov-irqs@.service).
struct IrqTuning {
    IrqPriority sound; // off: no IRQ tuning at all
    IrqCpus sound_cpus = IrqCpus::housekeeping;
    std::vector<std::string> sound_names; // fnmatch(3) globs for IRQ handler names, added
                                          // to the IRQs found from the cards
    IrqPriority others{IrqPriority::Mode::automatic, 0};
    KernelFeature threaded = KernelFeature::automatic; // threadirqs on non-RT kernels
    bool timer_threads = true; // PREEMPT_RT: ktimers/N above the sound path's IRQs
    bool enabled() const { return sound.mode != IrqPriority::Mode::leave; }
    friend bool operator==(const IrqTuning&, const IrqTuning&) = default;
};

struct Tuning {
    CoreLayout cores;
    ReserveMethod reserve_method = ReserveMethod::isolcpus;
    KernelParams kernel;
    std::vector<ServiceTuning> services;
    bool rt_push_ipi_guard = true;
    bool hold_cpu_dma_latency = false;
    // cpuset method: make rtprov.slice an isolated cpuset partition at boot
    bool cpuset_partition = false;
    std::optional<std::string> cpu_governor;
    IrqTuning irqs;
    // unbound workqueues (/sys/devices/virtual/workqueue/cpumask) on the housekeeping cores
    bool housekeeping_workqueues = false;
    SelftestThresholds selftest;
    BufferMode audio_buffers = BufferMode::advise;
    // rtprov-health.service, required by boot-complete.target: 'rtprov health' gates
    // every boot, and the update frameworks that wait for that target (docs/update-gate.md)
    bool health_gate = false;
    friend bool operator==(const Tuning&, const Tuning&) = default;
};

struct Profile {
    std::string name;
    std::string description;
    std::vector<std::string> sources; // files read, base first (extends chain)
    Board board;
    Tuning tuning;
    // Where each value was read, by its dotted key ('tuning.services.mpd.priority'): the
    // origin a problem that spans keys points at. Empty for a profile built in code.
    std::map<std::string, Origin, std::less<>> origins;
    friend bool operator==(const Profile&, const Profile&) = default;

    // The origin of key 'path', or 'fallback' where it was not read from a file.
    const Origin& origin_of(std::string_view path, const Origin& fallback) const {
        auto found = origins.find(path);
        return found == origins.end() ? fallback : found->second;
    }
};

// The two CPU sets a profile resolves to on a machine with a known CPU count.
struct ResolvedCores {
    CpuList housekeeping;
    CpuList reserved;
    friend bool operator==(const ResolvedCores&, const ResolvedCores&) = default;
};

// One validation problem, pointing at the value to change.
struct ProfileProblem {
    Origin origin;
    std::string message;
};

// Checks the rules that span keys: CPU lists that overlap, leave a CPU out, leave no
// housekeeping core or go beyond the CPU count ('cpu_count', when known, else the
// profile's own board.cpus); priorities and policies that do not fit together.
// Pure; returns every problem found, in profile order.
std::vector<ProfileProblem> validate(const Profile& profile,
                                     std::optional<unsigned> cpu_count = std::nullopt);

// Resolves 'auto' core lists on 'cpu_count' CPUs: the upper half (at least one core) is
// reserved, the rest is housekeeping; given lists are kept and the other list is
// their complement. Returns nullopt when the count is unknown (board.cpus 'auto' and no
// count given). Call validate() first: this does not check the layout.
std::optional<ResolvedCores> resolve_cores(const Profile& profile,
                                           std::optional<unsigned> cpu_count);

// The words of each enum in profiles, in the order the docs list them: the one table the
// loader reads them by and to_string() writes them with.
template <typename Enum> using Words = std::span<const std::pair<std::string_view, Enum>>;
Words<BootLoader> words(BootLoader);
Words<ReserveMethod> words(ReserveMethod);
Words<KernelFeature> words(KernelFeature);
Words<MissingKernelConfig> words(MissingKernelConfig);
Words<IoClass> words(IoClass);
Words<MissingService> words(MissingService);
Words<IrqCpus> words(IrqCpus);
Words<BufferMode> words(BufferMode);

// Names used in the YAML schema and messages.
std::string to_string(BootLoader value);
std::string to_string(ReserveMethod value);
std::string to_string(KernelFeature value);
std::string to_string(MissingKernelConfig value);
// A service's policy: 'app' for nullopt, else the policy's word ('fifo').
std::string service_policy_word(const std::optional<SchedPolicy>& policy);
std::string to_string(IoClass value);
std::string to_string(MissingService value);
std::string to_string(IrqCpus value);
std::string to_string(BufferMode value);
std::string to_string(const CpuTarget& value);

} // namespace rtprov::core
