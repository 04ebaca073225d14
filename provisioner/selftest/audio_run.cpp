// SPDX-License-Identifier: Apache-2.0
#include "provisioner/selftest/audio_run.hpp"

#include "provisioner/core/error.hpp"
#include "provisioner/selftest/audio_params.hpp"
#include "provisioner/selftest/audio_tally.hpp"
#include "provisioner/selftest/libasound.hpp"
#include "provisioner/selftest/memory_lock.hpp"

#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <numbers>
#include <string_view>

namespace rtprov::selftest {

namespace {

constexpr std::int64_t k_ns_per_ms = 1'000'000;
constexpr std::size_t k_stack_bytes = 256 * 1024;
constexpr std::size_t k_prefault_bytes = 64 * 1024; // of the stack, touched before playing
constexpr std::size_t k_page_bytes = 4096;
// The playing thread waits for room in the ring in slices this long, so that a stop or an
// interrupt is seen within one even when the device has stopped taking audio.
constexpr int k_wait_slice_ms = 100;
// A device that takes no audio for this many buffer lengths (at least k_min_stall_ms) has
// stopped: a USB DAC unplugged mid-run may leave the stream waiting instead of failing.
constexpr std::int64_t k_stall_buffers = 4;
constexpr std::int64_t k_min_stall_ms = 1000;
// --tone: a sine at -30 dBFS (10^(-30/20) of full scale) and 440 Hz, quiet enough for a
// listener's ears and amplifier at any volume setting.
constexpr double k_tone_amplitude = 0.031622776601683794;
constexpr double k_tone_hz = 440.0;

std::string device_text(const std::string& device) {
    return "ALSA device " + quoted(device);
}

// An alsa-lib object freed by the function alsa-lib has for it.
template <class T> using AlsaPtr = std::unique_ptr<T, void (*)(T*)>;

class Pcm {
  public:
    Pcm(const LibAsound& alsa, const std::string& device) : m_alsa(alsa) {
        // Opened without blocking: in blocking mode alsa-lib waits until a busy device is
        // free (aplay(1), -N), and a player holds it for hours. Then blocking, for the
        // writes.
        int rc =
            alsa.snd_pcm_open(&m_pcm, device.c_str(), SND_PCM_STREAM_PLAYBACK, SND_PCM_NONBLOCK);
        if (rc == 0 && (rc = alsa.snd_pcm_nonblock(m_pcm, 0)) == 0)
            return;
        if (m_pcm)
            alsa.snd_pcm_close(m_pcm);
        m_pcm = nullptr;
        const int error = -rc;
        const std::string what = device_text(device);
        if (error == EBUSY)
            throw Error(what + " is busy: another program is playing to it; stop that "
                               "program for the test, or test another device");
        if (error == ENOENT || error == ENODEV || error == ENXIO)
            throw Error("cannot open " + what +
                        ": no such playback device; 'aplay -L' lists the devices and "
                        "'aplay -l' the cards");
        if (error == EACCES || error == EPERM)
            throw Error("cannot open " + what + ": " + errno_text(error) +
                        "; run rtprov as root or as a member of the 'audio' group");
        throw Error("cannot open " + what + ": " + errno_text(error) +
                    "; check the device name ('aplay -L' lists the devices)");
    }
    ~Pcm() {
        if (m_pcm)
            m_alsa.snd_pcm_close(m_pcm);
    }
    Pcm(const Pcm&) = delete;
    Pcm& operator=(const Pcm&) = delete;

    snd_pcm_t* get() const { return m_pcm; }

  private:
    const LibAsound& m_alsa;
    snd_pcm_t* m_pcm = nullptr;
};

// Refuses a PCM that writes what it plays to a file or a command: alsa-lib's file plugin
// (type file; the 'file' and 'tee' PCMs of its alsa.conf take the path as an argument, so
// a name such as 'file:"/etc/x",raw', or one nested in a plug's slave, names it). It
// creates or truncates its file, or starts its '|command' through popen, when the hardware
// parameters are set (src/pcm/pcm_file.c, snd_pcm_file_hw_params), which rtprov does as
// root, and from a name a profile may carry. Its snd_pcm_dump() names each PCM of the
// chain, this one as "File PCM" (snd_pcm_file_dump); read before the parameters are set.
void refuse_file_output(const LibAsound& alsa, snd_pcm_t* pcm, const std::string& device) {
    snd_output_t* raw = nullptr;
    if (alsa.snd_output_buffer_open(&raw) < 0)
        throw Error("cannot allocate an ALSA output buffer to check " + device_text(device) +
                    "; free memory");
    const AlsaPtr<snd_output_t> out(raw, [](snd_output_t* o) { libasound().snd_output_close(o); });
    char* text = nullptr;
    const int rc = alsa.snd_pcm_dump(pcm, raw);
    const std::size_t size = alsa.snd_output_buffer_string(raw, &text);
    if (rc < 0 || !text)
        throw Error("cannot tell what " + device_text(device) +
                    " plays to: " + errno_text(rc < 0 ? -rc : EINVAL) +
                    "; test the card itself (hw:CARD=NAME,DEV=0)");
    if (std::string_view(text, size).find("File PCM") != std::string_view::npos)
        throw Error(device_text(device) +
                    " writes what it plays to a file or a command, not to a sound card: rtprov "
                    "will not create, overwrite or run what a device name names; test the card "
                    "itself (hw:CARD=NAME,DEV=0 or its plughw: form, 'aplay -L' lists the "
                    "devices)");
}

// What the device took.
struct Setup {
    SampleFormat format = SampleFormat::s16_le;
    unsigned rate = 0;
    unsigned channels = 0;
    snd_pcm_uframes_t period = 0;
    snd_pcm_uframes_t buffer = 0;
};

snd_pcm_format_t alsa_format(SampleFormat format) {
    switch (format) {
    case SampleFormat::s32_le:
        return SND_PCM_FORMAT_S32_LE;
    case SampleFormat::s24_le:
        return SND_PCM_FORMAT_S24_LE;
    case SampleFormat::s24_3le:
        return SND_PCM_FORMAT_S24_3LE;
    case SampleFormat::s16_le:
        break;
    }
    return SND_PCM_FORMAT_S16_LE;
}

std::string sizes_text(const AudioOptions& options) {
    return "a period of " + quoted(options.period.to_string()) + " and a buffer of " +
           quoted(options.buffer.to_string());
}

// The hardware parameters, as a player sets them: interleaved writes, the device's widest
// format, its own rate, stereo, the period and buffer nearest those asked.
Setup set_hardware(const LibAsound& alsa, snd_pcm_t* pcm, const AudioOptions& options) {
    snd_pcm_hw_params_t* raw = nullptr;
    if (alsa.snd_pcm_hw_params_malloc(&raw) < 0)
        throw Error("cannot allocate ALSA hardware parameters; free memory");
    const AlsaPtr<snd_pcm_hw_params_t> params(raw, alsa.snd_pcm_hw_params_free);
    const std::string what = device_text(options.device);
    if (int rc = alsa.snd_pcm_hw_params_any(pcm, raw); rc < 0)
        throw Error("cannot read what " + what + " takes: " + errno_text(-rc) +
                    "; check that it is a playback device ('aplay -L')");
    // The device's own rates, not those a plug device would resample to.
    alsa.snd_pcm_hw_params_set_rate_resample(pcm, raw, 0);
    if (alsa.snd_pcm_hw_params_set_access(pcm, raw, SND_PCM_ACCESS_RW_INTERLEAVED) < 0)
        throw Error(what + " does not take interleaved writes; test its 'plughw:' form, "
                           "which converts");
    Setup setup;
    const std::optional<SampleFormat> format = choose_format([&](SampleFormat f) {
        return alsa.snd_pcm_hw_params_test_format(pcm, raw, alsa_format(f)) == 0;
    });
    if (!format)
        throw Error(what + " takes none of the formats S32_LE, S24_LE, S24_3LE, S16_LE; test "
                           "its 'plughw:' form, which converts");
    setup.format = *format;
    alsa.snd_pcm_hw_params_set_format(pcm, raw, alsa_format(*format));

    unsigned channels_min = 0;
    unsigned channels_max = 0;
    alsa.snd_pcm_hw_params_get_channels_min(raw, &channels_min);
    alsa.snd_pcm_hw_params_get_channels_max(raw, &channels_max);
    setup.channels = choose_channels(channels_min, channels_max);
    if (int rc = alsa.snd_pcm_hw_params_set_channels(pcm, raw, setup.channels); rc < 0)
        throw Error(what + " does not take " + std::to_string(setup.channels) +
                    " channels: " + errno_text(-rc) + "; test another device");

    unsigned rate_min = 0;
    unsigned rate_max = 0;
    int dir = 0;
    alsa.snd_pcm_hw_params_get_rate_min(raw, &rate_min, &dir);
    alsa.snd_pcm_hw_params_get_rate_max(raw, &rate_max, &dir);
    setup.rate = choose_rate(rate_min, rate_max, options.rate);
    dir = 0;
    if (int rc = alsa.snd_pcm_hw_params_set_rate_near(pcm, raw, &setup.rate, &dir); rc < 0)
        throw Error(what + " takes no rate near " + std::to_string(setup.rate) +
                    " Hz: " + errno_text(-rc) + "; test another device");

    const std::uint32_t period_frames = options.period.frames_at(setup.rate);
    const std::uint32_t buffer_frames = options.buffer.frames_at(setup.rate);
    if (buffer_frames < 2 * std::uint64_t{period_frames})
        throw Error("the buffer must hold at least two periods: " + sizes_text(options) + " are " +
                    std::to_string(period_frames) + " and " + std::to_string(buffer_frames) +
                    " frames at " + std::to_string(setup.rate) +
                    " Hz; choose a larger buffer or a shorter period");
    setup.period = period_frames;
    setup.buffer = buffer_frames;
    dir = 0;
    const int period_rc =
        alsa.snd_pcm_hw_params_set_period_size_near(pcm, raw, &setup.period, &dir);
    const int buffer_rc =
        period_rc < 0 ? period_rc
                      : alsa.snd_pcm_hw_params_set_buffer_size_near(pcm, raw, &setup.buffer);
    const int rc = buffer_rc < 0 ? buffer_rc : alsa.snd_pcm_hw_params(pcm, raw);
    const std::string asked = sizes_text(options) + " (" + std::to_string(period_frames) + " and " +
                              std::to_string(buffer_frames) + " frames at " +
                              std::to_string(setup.rate) + " Hz)";
    if (rc < 0)
        throw Error(what + " does not take " + asked + ": " + errno_text(-rc) +
                    "; choose other sizes");
    alsa.snd_pcm_hw_params_get_period_size(raw, &setup.period, &dir);
    alsa.snd_pcm_hw_params_get_buffer_size(raw, &setup.buffer);
    if (setup.period == 0 || setup.buffer < 2 * setup.period)
        throw Error(what + " took a buffer of " + std::to_string(setup.buffer) +
                    " frames for periods of " + std::to_string(setup.period) +
                    " frames when asked for " + asked +
                    ": less than two periods; choose a larger buffer");
    return setup;
}

// The software parameters, as a player sets them: start once the ring is full, wake the
// writer when a period has room.
void set_software(const LibAsound& alsa, snd_pcm_t* pcm, const Setup& setup,
                  const std::string& device) {
    snd_pcm_sw_params_t* raw = nullptr;
    if (alsa.snd_pcm_sw_params_malloc(&raw) < 0)
        throw Error("cannot allocate ALSA software parameters; free memory");
    const AlsaPtr<snd_pcm_sw_params_t> params(raw, alsa.snd_pcm_sw_params_free);
    int rc = alsa.snd_pcm_sw_params_current(pcm, raw);
    if (rc >= 0)
        rc = alsa.snd_pcm_sw_params_set_start_threshold(pcm, raw, setup.buffer);
    if (rc >= 0)
        rc = alsa.snd_pcm_sw_params_set_avail_min(pcm, raw, setup.period);
    if (rc >= 0)
        rc = alsa.snd_pcm_sw_params(pcm, raw);
    if (rc < 0)
        throw Error(device_text(device) + " refused its start threshold and wake-up size: " +
                    errno_text(-rc) + "; test another device");
}

// The card behind the PCM (snd_pcm_info names it; plugins pass it through) and whether it
// is snd-aloop's (its driver is "Loopback", sound/drivers/aloop.c). A server's PCM
// (pipewire, jack: an I/O plugin) or the null PCM has none.
void describe_card(const LibAsound& alsa, snd_pcm_t* pcm, AudioResult& result) {
    const snd_pcm_type_t type = alsa.snd_pcm_type(pcm);
    if (type == SND_PCM_TYPE_IOPLUG) {
        // 'pipewire', 'jack', 'pulse': the plugin's PCM as it is named
        result.through = result.device.substr(0, result.device.find(':'));
        return;
    }
    if (type == SND_PCM_TYPE_NULL)
        return; // its info says card 0 without one
    snd_pcm_info_t* raw = nullptr;
    if (alsa.snd_pcm_info_malloc(&raw) < 0)
        return;
    const AlsaPtr<snd_pcm_info_t> info(raw, alsa.snd_pcm_info_free);
    if (alsa.snd_pcm_info(pcm, raw) < 0)
        return;
    const int card = alsa.snd_pcm_info_get_card(raw);
    if (card < 0)
        return;
    if (char* name = nullptr; alsa.snd_card_get_name(card, &name) == 0 && name) {
        result.card = name;
        std::free(name); // strdup'd for the caller (snd_card_get_name(3))
    }
    snd_ctl_t* ctl = nullptr;
    const std::string control = "hw:" + std::to_string(card);
    if (alsa.snd_ctl_open(&ctl, control.c_str(), 0) < 0)
        return;
    snd_ctl_card_info_t* card_raw = nullptr;
    if (alsa.snd_ctl_card_info_malloc(&card_raw) == 0) {
        const AlsaPtr<snd_ctl_card_info_t> card_info(card_raw, alsa.snd_ctl_card_info_free);
        if (alsa.snd_ctl_card_info(ctl, card_raw) == 0)
            if (const char* driver = alsa.snd_ctl_card_info_get_driver(card_raw))
                result.loopback = std::string(driver) == "Loopback";
    }
    alsa.snd_ctl_close(ctl);
}

// Why the playing thread stopped before it was told to; worded after it ended (no
// allocation in the playing thread).
struct Stop {
    enum class Kind { none, stalled, failed } kind = Kind::none;
    int error = 0;         // -errno from alsa-lib, for 'failed'
    const char* call = ""; // the alsa-lib function that failed
    std::int64_t stall_ms = 0;
};

std::string stop_text(const Stop& stop, const std::string& device) {
    const std::string what = device_text(device);
    if (stop.kind == Stop::Kind::stalled)
        return what + " stopped taking audio: no room in its buffer for " +
               std::to_string(stop.stall_ms) +
               " ms; check that it is still connected and powered, and run the test again";
    switch (-stop.error) {
    case ENODEV:
        return what + " went away during the run (disconnected); reconnect it and run the test "
                      "again";
    case ESTRPIPE:
        return what + " was suspended during the run (the system or the device went to sleep); "
                      "run the test again";
    case EBADFD:
        return what + " stopped playing during the run (" + stop.call +
               ": file descriptor in bad state; it was likely disconnected); check it and run "
               "the test again";
    default:
        break;
    }
    return what + " failed during the run (" + stop.call + ": " + errno_text(-stop.error) +
           "); check it and run the test again";
}

// The playing thread's world: set up before it starts, its own while it runs, read by
// the controlling thread once it has ended.
struct Player {
    const LibAsound& alsa;
    snd_pcm_t* pcm;
    Setup setup;
    SampleFormat format;
    bool tone;
    std::vector<std::uint8_t> period_bytes; // one period of what is played
    double phase = 0;
    AudioTally& tally;
    AudioResult& result;
    std::atomic<bool>& stop;
    const std::atomic<bool>* interrupt;
    std::int64_t stall_ns;

    // filled in by the thread
    Stop stopped{};
    std::int64_t first_write_ns = 0;
    std::int64_t last_write_ns = 0;
    std::int64_t cpu_ns = 0;
    int policy = -1;
    int priority = 0;
    cpu_set_t affinity{};

    bool stopping() const {
        return stop.load(std::memory_order_relaxed) ||
               (interrupt && interrupt->load(std::memory_order_relaxed));
    }

    // The next period of the tone (silence was written once, before the start).
    void next_tone() noexcept {
        if (!tone)
            return;
        const unsigned bytes = sample_bytes(format);
        const double step = 2 * std::numbers::pi * k_tone_hz / setup.rate;
        std::uint8_t* at = period_bytes.data();
        for (snd_pcm_uframes_t frame = 0; frame < setup.period; ++frame) {
            const double value = k_tone_amplitude * std::sin(phase);
            phase = std::fmod(phase + step, 2 * std::numbers::pi);
            for (unsigned channel = 0; channel < setup.channels; ++channel, at += bytes)
                put_sample(at, format, value);
        }
    }

    bool fail(int error, const char* call) noexcept {
        stopped.kind = Stop::Kind::failed;
        stopped.error = error;
        stopped.call = call;
        return false;
    }

    // Writes a whole buffer (the start threshold) into the empty ring, and starts the
    // stream if that did not (a plugin whose ring never fills, as the null PCM's).
    bool fill_ring() noexcept {
        for (snd_pcm_uframes_t written = 0; written < setup.buffer;) {
            const snd_pcm_uframes_t frames = std::min(setup.period, setup.buffer - written);
            const snd_pcm_sframes_t n = alsa.snd_pcm_writei(pcm, period_bytes.data(), frames);
            if (n < 0)
                return fail(static_cast<int>(n), "snd_pcm_writei");
            written += static_cast<snd_pcm_uframes_t>(n);
            result.frames_written += static_cast<std::uint64_t>(n);
            next_tone();
        }
        if (alsa.snd_pcm_state(pcm) == SND_PCM_STATE_PREPARED)
            if (int rc = alsa.snd_pcm_start(pcm); rc < 0)
                return fail(rc, "snd_pcm_start");
        return true;
    }

    // An underrun at 'at_ns' (absolute): prepare, refill, play again; how long it took.
    bool recover(std::int64_t at_ns, std::int64_t start_ns) noexcept {
        if (int rc = alsa.snd_pcm_prepare(pcm); rc < 0)
            return fail(rc, "snd_pcm_prepare");
        if (!fill_ring())
            return false;
        const std::int64_t playing_ns = monotonic_ns();
        tally.underrun(at_ns - start_ns, playing_ns - at_ns);
        tally.resume(playing_ns - start_ns);
        return true;
    }

    void play() noexcept;
};

// Touches the stack the loop will use, so that its pages exist before the first write.
[[gnu::noinline]] void prefault_stack() {
    unsigned char pages[k_prefault_bytes];
    volatile unsigned char* touch = pages; // writes the compiler must not drop
    for (std::size_t i = 0; i < k_prefault_bytes; i += k_page_bytes)
        touch[i] = 0;
}

std::int64_t thread_cpu_ns() {
    timespec now{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return std::int64_t{now.tv_sec} * 1'000'000'000 + now.tv_nsec;
}

// The playing loop, as a player's output thread: wait for a period of room, write it. No
// allocation, no lock, no I/O but alsa-lib's.
void Player::play() noexcept {
    const std::int64_t cpu_start = thread_cpu_ns();
    policy = sched_getscheduler(0);
    sched_param param{};
    sched_getparam(0, &param);
    priority = param.sched_priority;
    sched_getaffinity(0, sizeof affinity, &affinity);
    prefault_stack();

    first_write_ns = monotonic_ns();
    last_write_ns = first_write_ns;
    if (fill_ring()) {
        const std::int64_t start_ns = monotonic_ns();
        tally.resume(0);
        std::int64_t waited_ns = 0;
        while (!stopping()) {
            int rc = alsa.snd_pcm_wait(pcm, k_wait_slice_ms);
            if (rc == 0) {
                waited_ns += k_wait_slice_ms * k_ns_per_ms;
                if (waited_ns >= stall_ns) {
                    stopped.kind = Stop::Kind::stalled;
                    stopped.stall_ms = waited_ns / k_ns_per_ms;
                    break;
                }
                continue;
            }
            waited_ns = 0;
            snd_pcm_sframes_t avail = 0;
            snd_pcm_sframes_t delay = 0;
            const char* call = "snd_pcm_wait";
            if (rc > 0) {
                rc = alsa.snd_pcm_avail_delay(pcm, &avail, &delay);
                call = "snd_pcm_avail_delay";
            }
            const std::int64_t now = monotonic_ns();
            if (rc == -EPIPE) {
                // found empty before the write: the write that would have come
                tally.write(now - start_ns, 0);
                if (!recover(now, start_ns))
                    break;
                continue;
            }
            if (rc < 0) {
                fail(rc, call);
                break;
            }
            if (avail < static_cast<snd_pcm_sframes_t>(setup.period))
                continue;
            tally.write(now - start_ns, delay);
            last_write_ns = now;
            const snd_pcm_sframes_t n = alsa.snd_pcm_writei(pcm, period_bytes.data(), setup.period);
            if (n == -EPIPE) {
                if (!recover(now, start_ns))
                    break;
                continue;
            }
            if (n < 0) {
                fail(static_cast<int>(n), "snd_pcm_writei");
                break;
            }
            result.frames_written += static_cast<std::uint64_t>(n);
            next_tone();
        }
    }
    cpu_ns = thread_cpu_ns() - cpu_start;
    // the controlling thread waits for this (or the end of the run)
    stop.store(true, std::memory_order_relaxed);
}

// Tells the playing thread to stop when the run ends, whatever way it ends.
class StopOnExit {
  public:
    explicit StopOnExit(std::atomic<bool>& stop) : m_stop(stop) {}
    ~StopOnExit() { m_stop.store(true); }
    StopOnExit(const StopOnExit&) = delete;
    StopOnExit& operator=(const StopOnExit&) = delete;

  private:
    std::atomic<bool>& m_stop;
};

void validate(const AudioOptions& options) {
    if (options.device.empty())
        throw Error("no ALSA device to play to; name one ('aplay -L' lists them)");
    if (options.period.value == 0 || options.buffer.value == 0)
        throw Error("the audio period and buffer must be at least 1ms or 1frames, not " +
                    quoted(options.period.to_string()) + " and " +
                    quoted(options.buffer.to_string()));
    if (options.duration.count() < 1)
        throw Error("the audio test must last at least 1 ms, not " +
                    quoted(std::to_string(options.duration.count()) + " ms"));
    if (core::has_static_priority(options.policy) &&
        (options.priority < 1 || options.priority > 99))
        throw Error(core::kernel_name(options.policy) + " priority " +
                    quoted(std::to_string(options.priority)) + " is out of range; use 1 to 99");
}

std::string cpu_list_text(const cpu_set_t& set) {
    std::vector<unsigned> cpus;
    for (unsigned cpu = 0; cpu < CPU_SETSIZE; ++cpu)
        if (CPU_ISSET(cpu, &set))
            cpus.push_back(cpu);
    return core::CpuList(std::move(cpus)).to_string();
}

} // namespace

AudioResult run_audio(const AudioOptions& options, const ProgressCallback& progress) {
    validate(options);
    const LibAsound& alsa = libasound();
    Pcm pcm(alsa, options.device);
    refuse_file_output(alsa, pcm.get(), options.device);
    const Setup setup = set_hardware(alsa, pcm.get(), options);
    set_software(alsa, pcm.get(), setup, options.device);

    AudioResult result;
    result.device = options.device;
    describe_card(alsa, pcm.get(), result);
    result.rate = setup.rate;
    result.format = format_name(setup.format);
    result.channels = setup.channels;
    result.period_frames = static_cast<unsigned>(setup.period);
    result.buffer_frames = static_cast<unsigned>(setup.buffer);
    result.policy = options.policy;
    result.priority = core::has_static_priority(options.policy) ? options.priority : 0;

    const auto duration_ns = std::chrono::nanoseconds(options.duration).count();
    AudioTally tally(result, static_cast<std::size_t>(duration_ns / 1'000'000'000) + 2,
                     options.live);
    std::atomic<bool> stop{false};
    const std::int64_t buffer_ns =
        static_cast<std::int64_t>(setup.buffer) * 1'000'000'000 / setup.rate;
    Player player{
        alsa,
        pcm.get(),
        setup,
        setup.format,
        options.tone,
        std::vector<std::uint8_t>(setup.period * setup.channels * sample_bytes(setup.format)),
        0,
        tally,
        result,
        stop,
        options.interrupt,
        std::max(k_stall_buffers * buffer_ns, k_min_stall_ms * k_ns_per_ms)};
    // Signed formats: silence is all zero bits.
    player.next_tone();

    const AwayFrom away(options.cpus); // this thread wakes every second; not there
    const MemoryLock memory_lock(MemoryLock::IfRefused::go_on);
    result.memory_locked = memory_lock.locked();
    {
        PinnedThread thread({"rtprov-audio", options.policy, result.priority, std::nullopt,
                             k_stack_bytes, options.cpus},
                            [&player] { player.play(); });
        if (options.live) // before its first underrun: that takes a whole buffer of audio
            options.live->player_tid.store(thread.tid());
        const StopOnExit stop_on_exit(stop); // before the thread is joined
        if (options.playing)
            options.playing->store(true);
        wait_with_progress(
            monotonic_ns(), duration_ns,
            [&](double elapsed_s, double total_s) {
                if (options.interrupt && options.interrupt->load())
                    stop.store(true);
                if (progress)
                    progress(elapsed_s, total_s);
            },
            &stop);
        stop.store(true);
        thread.join();
    }
    alsa.snd_pcm_drop(pcm.get());

    result.played_s = static_cast<double>(player.last_write_ns - player.first_write_ns) / 1e9;
    result.cpu_ms = static_cast<double>(player.cpu_ns) / 1e6;
    if (const auto policy = core::sched_policy_from_number(player.policy & ~SCHED_RESET_ON_FORK))
        result.policy = *policy;
    result.priority = player.priority;
    result.cpus = options.cpus.empty() ? "" : cpu_list_text(player.affinity);
    result.interrupted = options.interrupt && options.interrupt->load();
    if (player.stopped.kind != Stop::Kind::none)
        result.stopped_because = stop_text(player.stopped, options.device);
    return result;
}

} // namespace rtprov::selftest
