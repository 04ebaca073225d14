// SPDX-License-Identifier: Apache-2.0
#include "provisioner/selftest/timerlat_session.hpp"

#include "provisioner/core/error.hpp"
#include "provisioner/core/text.hpp"
#include "provisioner/fs/kernel_file.hpp"
#include "provisioner/selftest/pinned_thread.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <sstream>
#include <string_view>

namespace rtprov::selftest {

namespace {

// The osnoise settings the run changes (Documentation/trace/timerlat-tracer.rst). All are
// global: every instance running osnoise or timerlat shares them.
constexpr const char* k_osnoise_settings[] = {"cpus", "timerlat_period_us", "stop_tracing_us",
                                              "stop_tracing_total_us", "print_stack"};

// A tracefs value (or rtprov's saved settings), its trailing newlines and blanks dropped;
// nullopt when it cannot be read.
std::optional<std::string> read_text(const std::string& path) {
    return fs::read_kernel_value(path).value;
}

// Async-signal-safe: the guard process uses it after fork().
bool write_raw(const char* path, const char* value) noexcept {
    return fs::write_kernel_value(path, value, std::strlen(value)) == 0;
}

void write_setting(const std::string& path, const std::string& value) {
    if (const fs::KernelWrite wrote = fs::write_kernel_file(path, value); !wrote)
        throw Error(wrote.message + "; run rtprov as root, or measure without --trace");
}

// The saved settings' file: lines '<setting> <value>', each setting one of
// k_osnoise_settings, each value a CPU list or a number. Throws rtprov::Error naming the
// line of anything else.
std::vector<TimerlatSession::Undo>
parse_saved_settings(const std::string& text, const std::string& file, const std::string& tracefs) {
    std::vector<TimerlatSession::Undo> undo;
    std::istringstream in(text);
    std::string line;
    for (unsigned number = 1; std::getline(in, line); ++number) {
        const std::size_t space = line.find(' ');
        const std::string setting = line.substr(0, space);
        const std::string value = space == std::string::npos ? "" : line.substr(space + 1);
        const bool known = std::any_of(std::begin(k_osnoise_settings), std::end(k_osnoise_settings),
                                       [&](const char* s) { return setting == s; });
        const bool plain = value.size() <= 4096 && // an empty CPU list reads as ""
                           value.find_first_not_of("0123456789,-") == std::string::npos;
        const bool again = std::any_of(undo.begin(), undo.end(), [&](const auto& u) {
            return u.path == tracefs + "/osnoise/" + setting;
        });
        if (!known || !plain || again)
            throw Error(file + ":" + std::to_string(number) +
                        ": not an osnoise setting rtprov saved ('<setting> <number or CPU "
                        "list>', each once); it holds the settings a killed 'rtprov selftest "
                        "--trace' changed: check " +
                        tracefs + "/osnoise/ and remove the file ('" +
                        core::shell_command({"rm", file}) + "')");
        undo.push_back({tracefs + "/osnoise/" + setting, value});
    }
    return undo;
}

// Writes the saved settings' file atomically, its folder made if missing (0700: root's).
void write_saved_settings(const std::string& file, const std::string& text) {
    const std::string folder = file.substr(0, file.rfind('/'));
    if (!folder.empty() && ::mkdir(folder.c_str(), 0700) != 0 && errno != EEXIST)
        throw Error("cannot make " + rtprov::quoted(folder) + ": " + std::strerror(errno) +
                    "; run rtprov as root, or measure without --trace");
    const std::string temporary = file + ".new";
    const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    const bool ok = fd >= 0 &&
                    ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) &&
                    ::fsync(fd) == 0;
    const int error = errno;
    if (fd >= 0)
        ::close(fd);
    if (!ok || ::rename(temporary.c_str(), file.c_str()) != 0) {
        ::unlink(temporary.c_str());
        throw Error("cannot save the osnoise settings in " + rtprov::quoted(file) + ": " +
                    std::strerror(ok ? errno : error) +
                    "; run rtprov as root, or measure without --trace");
    }
}

// Stops and removes an instance: it must not be recording or open to be removed. Async-
// signal-safe (the guard). Retries removal a few times: a reader that just closed
// trace_pipe may still hold the instance for a moment.
void remove_instance(const char* instance) noexcept {
    char path[512];
    for (const auto& [file, value] :
         {std::pair{"/tracing_on", "0"}, {"/current_tracer", "nop"}, {"/events/enable", "0"}}) {
        if (std::strlen(instance) + std::strlen(file) + 1 > sizeof path)
            return;
        std::strcpy(path, instance);
        std::strcat(path, file);
        write_raw(path, value);
    }
    for (int attempt = 0; attempt < 50; ++attempt) {
        if (::rmdir(instance) == 0 || errno == ENOENT)
            return;
        const timespec pause{0, 20'000'000};
        ::nanosleep(&pause, nullptr);
    }
}

// Whether process 'pid' still runs.
bool alive(pid_t pid) {
    return ::kill(pid, 0) == 0 || errno == EPERM;
}

std::vector<std::string> folder_entries(const std::string& path) {
    std::vector<std::string> names;
    if (DIR* dir = ::opendir(path.c_str())) {
        while (const dirent* entry = ::readdir(dir))
            if (entry->d_name[0] != '.')
                names.emplace_back(entry->d_name);
        ::closedir(dir);
    }
    return names;
}

bool is_osnoise_tracer(const std::optional<std::string>& tracer) {
    return tracer && (*tracer == "timerlat" || *tracer == "osnoise");
}

// The kernel threads the tracer made ("timerlat/<cpu>", children of kthreadd).
std::vector<std::pair<pid_t, unsigned>> timerlat_threads(const core::CpuList& cpus) {
    std::vector<std::pair<pid_t, unsigned>> found;
    for (const std::string& name : folder_entries("/proc")) {
        pid_t pid = 0;
        if (name.find_first_not_of("0123456789") != std::string::npos ||
            !(std::istringstream(name) >> pid))
            continue;
        const auto comm = read_text("/proc/" + name + "/comm");
        if (!comm || comm->rfind("timerlat/", 0) != 0)
            continue;
        unsigned cpu = 0;
        if ((std::istringstream(comm->substr(9)) >> cpu) && cpus.contains(cpu))
            found.emplace_back(pid, cpu);
    }
    return found;
}

// Gives the tracer's thread 'pid' (on 'cpu') SCHED_FIFO 'priority' once it has made itself
// FIFO, and checks it holds. Throws rtprov::Error when it cannot, or the thread did not
// start within two seconds.
void give_priority(pid_t pid, unsigned cpu, int priority) {
    const std::string name = "the tracer's thread 'timerlat/" + std::to_string(cpu) + "'";
    const std::int64_t deadline = monotonic_ns() + 2'000'000'000;
    while (::sched_getscheduler(pid) != SCHED_FIFO) {
        if (monotonic_ns() > deadline)
            throw Error(name + " did not start within 2 s (it is not SCHED_FIFO yet); is CPU " +
                        std::to_string(cpu) + " busy with a higher priority?");
        const timespec pause{0, 1'000'000};
        ::nanosleep(&pause, nullptr);
    }
    sched_param param{};
    param.sched_priority = priority;
    if (::sched_setscheduler(pid, SCHED_FIFO, &param) != 0)
        throw Error("cannot give " + name + " SCHED_FIFO priority " + std::to_string(priority) +
                    ": " + errno_text(errno) + "; run rtprov as root");
    sched_param now{};
    if (::sched_getscheduler(pid) != SCHED_FIFO || ::sched_getparam(pid, &now) != 0 ||
        now.sched_priority != priority)
        throw Error(name + " does not keep SCHED_FIFO priority " + std::to_string(priority) +
                    " (it has " + std::to_string(now.sched_priority) +
                    "); something else sets it: stop it, or measure without --trace");
}

} // namespace

bool lists_tracer(const std::string& available_tracers, const std::string& tracer) {
    return core::has_word(available_tracers, tracer);
}

core::Result<std::string> find_timerlat(const std::string& root) {
    const std::string prefix = root == "/" ? "" : root;
    for (const char* folder : {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"}) {
        const std::string tracefs = prefix + folder;
        if (auto tracers = read_text(tracefs + "/available_tracers")) {
            if (lists_tracer(*tracers, "timerlat"))
                return {tracefs, ""};
            return core::Result<std::string>::failed(
                "this kernel has no timerlat tracer (CONFIG_TIMERLAT_TRACER; '" +
                std::string(folder) + "/available_tracers' lists " +
                (tracers->empty() ? std::string("none") : rtprov::quoted(*tracers)) +
                "); Debian's PREEMPT_RT kernels (linux-image-rt-amd64, linux-image-rt-arm64) "
                "and Raspberry Pi OS's linux-image-rpi-v8-rt have it");
        }
    }
    return core::Result<std::string>::failed(
        "tracefs is not mounted, or cannot be read ('/sys/kernel/tracing/available_tracers'): "
        "mount it ('mount -t tracefs tracefs /sys/kernel/tracing') and run as root",
        true);
}

TimerlatSession::TimerlatSession(const TimerlatSetup& setup) : m_tracefs(setup.tracefs) {
    const std::string instances = m_tracefs + "/instances";
    // One rtprov at a time: a lock on the instances folder, held by the guard too until
    // it has put everything back.
    m_lock = core::Fd(::open(instances.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!m_lock)
        throw Error("cannot open " + rtprov::quoted(instances) + ": " + std::strerror(errno) +
                    "; run rtprov as root, or measure without --trace");
    if (::flock(m_lock.get(), LOCK_EX | LOCK_NB) != 0)
        throw Error("another 'rtprov selftest --trace' is running (it holds a lock on " +
                    rtprov::quoted(instances) + "); wait for it to end");

    // Instances a killed rtprov left behind (its guard killed too) are removed; any other
    // user of the tracer is left alone and refused, since the settings are shared.
    std::vector<std::string> users;
    if (is_osnoise_tracer(read_text(m_tracefs + "/current_tracer")))
        users.push_back("the global tracer ('" + m_tracefs + "/current_tracer')");
    for (const std::string& name : folder_entries(instances)) {
        const std::string path = instances + "/" + name;
        // only rtprov's own names, 'rtprov-<pid>', nothing more
        pid_t owner = 0;
        const std::string_view digits =
            std::string_view(name).substr(std::min<std::size_t>(7, name.size()));
        const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), owner);
        if (name.rfind("rtprov-", 0) == 0 && ec == std::errc() &&
            end == digits.data() + digits.size() && owner > 0 && !alive(owner)) {
            remove_instance(path.c_str());
            continue;
        }
        if (is_osnoise_tracer(read_text(path + "/current_tracer")))
            users.push_back("the tracefs instance " + rtprov::quoted(path));
    }
    if (!users.empty())
        throw Error("the timerlat tracer is in use by " + core::join(users, ", ") +
                    " (rtla, or another tracing tool); its settings are shared by every "
                    "user, so rtprov does not run beside it: stop it ('echo nop > " +
                    (users.front().find("global") != std::string::npos
                         ? core::shell_command({m_tracefs + "/current_tracer"})
                         : "INSTANCE/current_tracer") +
                    "') or measure without --trace");
    if (auto options = read_text(m_tracefs + "/osnoise/options");
        options && core::has_word(*options, "NO_OSNOISE_WORKLOAD"))
        throw Error(rtprov::quoted(m_tracefs + "/osnoise/options") +
                    " has NO_OSNOISE_WORKLOAD (a user-space workload of rtla -u): the tracer "
                    "would start no threads to measure; 'echo OSNOISE_WORKLOAD > " +
                    core::shell_command({m_tracefs + "/osnoise/options"}) + "' turns them back on");

    // The instance first: a name taken (not by rtprov: its own are named by a live pid,
    // this one) is refused before anything is changed.
    m_instance = instances + "/rtprov-" + std::to_string(::getpid());
    if (::mkdir(m_instance.c_str(), 0700) != 0)
        throw Error("cannot make the tracefs instance " + rtprov::quoted(m_instance) + ": " +
                    std::strerror(errno) +
                    (errno == EEXIST ? "; this run did not make it (another tool did, or a killed "
                                       "run whose number this one has now): remove it "
                                       "('rmdir " +
                                           m_instance + "') or measure without --trace"
                                     : "; run rtprov as root, or measure without --trace"));

    // Save what will be changed, before changing anything; the settings a killed run left
    // changed are put back from its saved file.
    try {
        m_saved_file = setup.saved_file;
        if (auto saved = read_text(m_saved_file)) {
            m_undo = parse_saved_settings(*saved, m_saved_file, m_tracefs);
        } else {
            std::string text;
            for (const char* setting : k_osnoise_settings) {
                const std::string path = m_tracefs + "/osnoise/" + setting;
                if (auto old = read_text(path)) {
                    m_undo.push_back({path, *old});
                    text += std::string(setting) + " " + *old + "\n";
                }
            }
            write_saved_settings(m_saved_file, text);
        }
    } catch (...) {
        m_saved_file.clear(); // not ours to remove
        remove_instance(m_instance.c_str());
        throw;
    }

    // The guard: a child that waits for this process to end (its end of the channel
    // closes, whatever ended it), and puts everything back unless told it was done.
    int channel[2];
    if (::pipe2(channel, O_CLOEXEC) != 0) {
        const int error = errno;
        restore();
        throw Error(std::string("cannot make a pipe for the trace's guard: ") +
                    std::strerror(error));
    }
    const pid_t guard = ::fork();
    if (guard < 0) {
        const int error = errno;
        ::close(channel[0]);
        ::close(channel[1]);
        restore();
        throw Error(std::string("cannot start the trace's guard process: ") + std::strerror(error));
    }
    if (guard == 0) {
        // Only async-signal-safe calls from here: the parent may have threads.
        ::setsid(); // out of the terminal's process group: Ctrl-C and hang-ups pass it by
        struct sigaction ignore {};
        ignore.sa_handler = SIG_IGN;
        for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGTSTP, SIGPIPE})
            ::sigaction(sig, &ignore, nullptr);
        const int null = ::open("/dev/null", O_RDWR);
        if (null >= 0)
            for (int fd : {0, 1, 2})
                ::dup2(null, fd);
        // the channel on 3 and the lock on 4 (held until the guard ends), by way of
        // numbers above both so that neither overwrites the other
        const int channel_fd = ::fcntl(channel[0], F_DUPFD, 100);
        const int lock_fd = ::fcntl(m_lock.get(), F_DUPFD, 100);
        ::dup2(channel_fd, 3);
        ::dup2(lock_fd, 4);
        ::close_range(5, ~0U, 0);
        ::prctl(PR_SET_NAME, "rtprov-guard", 0, 0, 0);
        char done = 0;
        ssize_t n = 0;
        while ((n = ::read(3, &done, 1)) < 0 && errno == EINTR) {
        }
        if (n != 1 || done != 'd')
            restore();
        ::_exit(0);
    }
    ::close(channel[0]);
    m_guard_channel = core::Fd(channel[1]);
    m_guard = guard;

    try {
        write_setting(m_instance + "/tracing_on", "0");
        write_setting(m_instance + "/buffer_size_kb", std::to_string(setup.buffer_kb));
        write_setting(m_tracefs + "/osnoise/cpus", setup.cpus.to_string());
        write_setting(m_tracefs + "/osnoise/timerlat_period_us",
                      std::to_string(setup.period.count()));
        write_setting(m_tracefs + "/osnoise/stop_tracing_us", "0");
        write_setting(m_tracefs + "/osnoise/stop_tracing_total_us",
                      std::to_string(setup.stop_above_us));
        if (::access((m_tracefs + "/osnoise/print_stack").c_str(), F_OK) == 0)
            write_setting(m_tracefs + "/osnoise/print_stack", std::to_string(setup.print_stack_us));
        write_setting(m_instance + "/events/osnoise/enable", "1");
        write_setting(m_instance + "/current_tracer", "timerlat");
        // The tracer's threads measure at the priority asked for, as rtla's -P has them.
        // Each starts as a normal kernel thread and, when it first runs, makes itself
        // SCHED_FIFO 95 (timerlat_main() in kernel/trace/trace_osnoise.c): set earlier,
        // the priority would be undone by that. So each is given its priority once it is
        // FIFO, and it is read back (seen in the PREEMPT_RT guest: a thread that had not
        // run yet measured at 95, above a load at 60 it was meant to sit below).
        const auto threads = timerlat_threads(setup.cpus);
        if (threads.size() != setup.cpus.size())
            throw Error("the timerlat tracer started " + std::to_string(threads.size()) +
                        " thread(s) for CPUs " + rtprov::quoted(setup.cpus.to_string()) +
                        ", not one per CPU; is a CPU offline?");
        for (const auto& [pid, cpu] : threads)
            give_priority(pid, cpu, setup.priority);
        m_pipe = core::Fd(
            ::open((m_instance + "/trace_pipe").c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
        if (!m_pipe)
            throw Error("cannot open " + rtprov::quoted(m_instance + "/trace_pipe") + ": " +
                        std::strerror(errno));
    } catch (...) {
        restore();
        const char done = 'd';
        [[maybe_unused]] auto n = ::write(m_guard_channel.get(), &done, 1);
        m_guard_channel.reset();
        ::waitpid(m_guard, nullptr, 0);
        throw;
    }
}

TimerlatSession::~TimerlatSession() {
    restore();
    const char done = 'd';
    [[maybe_unused]] auto n = ::write(m_guard_channel.get(), &done, 1);
    m_guard_channel.reset();
    while (::waitpid(m_guard, nullptr, 0) < 0 && errno == EINTR) {
    }
}

void TimerlatSession::restore() noexcept {
    // A reader keeps the instance busy: close it first (in the guard it is already gone).
    m_pipe.reset();
    remove_instance(m_instance.c_str());
    bool all = true;
    for (const Undo& undo : m_undo)
        all = write_raw(undo.path.c_str(), undo.value.c_str()) && all;
    if (all && !m_saved_file.empty())
        ::unlink(m_saved_file.c_str());
}

void TimerlatSession::start() {
    write_setting(m_instance + "/tracing_on", "1");
}

void TimerlatSession::stop() {
    write_setting(m_instance + "/tracing_on", "0");
}

bool TimerlatSession::recording() const {
    auto on = read_text(m_instance + "/tracing_on");
    return on && *on == "1";
}

std::size_t TimerlatSession::read(std::string& out, int timeout_ms) {
    pollfd ready{m_pipe.get(), POLLIN, 0};
    if (::poll(&ready, 1, timeout_ms) <= 0)
        return 0;
    std::size_t total = 0;
    char buffer[65536];
    for (;;) {
        const ssize_t n = ::read(m_pipe.get(), buffer, sizeof buffer);
        if (n <= 0)
            break; // EAGAIN: nothing more for now; EINTR: the caller comes back
        out.append(buffer, std::size_t(n));
        total += std::size_t(n);
        if (total >= (std::size_t(1) << 22))
            break; // let the caller digest 4 MB at a time
    }
    return total;
}

} // namespace rtprov::selftest
