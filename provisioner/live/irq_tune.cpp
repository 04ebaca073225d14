// SPDX-License-Identifier: Apache-2.0
#include "provisioner/live/irq_tune.hpp"

#include "provisioner/core/error.hpp"
#include "provisioner/core/fd.hpp"
#include "provisioner/core/text.hpp"
#include "provisioner/fs/kernel_file.hpp"
#include "provisioner/fs/root.hpp"

#include <fcntl.h>
#include <sched.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>

namespace rtprov::live {

namespace stdfs = std::filesystem;

namespace {

constexpr int k_fifo = SCHED_FIFO;
constexpr const char* k_workqueue_mask = "/sys/devices/virtual/workqueue/cpumask";
constexpr long k_max_state_bytes = 1 << 20;

std::optional<long> to_number(std::string_view text) {
    long value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size())
        return std::nullopt;
    return value;
}

// A kernel thread of the running system that rtprov may re-prioritise.
struct KernelThread {
    int pid = 0;
    std::string comm;
    std::optional<unsigned> irq; // irq/N-name: N
};

std::vector<KernelThread> kernel_threads(const system::SysRoot& r) {
    std::vector<KernelThread> out;
    auto pids = r.numbered("/proc");
    if (!pids)
        return out;
    for (int pid : *pids) {
        const std::string dir = "/proc/" + std::to_string(pid);
        auto comm = r.text(dir + "/comm");
        auto status = r.text(dir + "/status");
        // a child of kthreadd (pid 2): a kernel thread ('Name:' above it is escaped, so a
        // name cannot forge the line)
        if (!comm || !status || status->find("\nPPid:\t2\n") == std::string::npos)
            continue;
        // The name as the kernel holds it: /proc/PID/comm is its bytes and one newline
        // (comm_show, proc_task_name in fs/proc/array.c), any byte but NUL, spaces and line
        // breaks too, up to 63 for a kernel thread (its full name, not TASK_COMM_LEN's 15).
        std::string name = *comm;
        if (name.ends_with('\n'))
            name.pop_back();
        if (name.empty())
            continue;
        out.push_back({pid, name, system::irq_of_thread(name)});
    }
    return out;
}

std::string sched_text(const ThreadSched& s) {
    static const char* k_names[] = {"other", "fifo", "rr", "batch", "iso", "idle", "deadline"};
    const std::string name =
        s.policy >= 0 && s.policy <= 6 ? k_names[s.policy] : "policy " + std::to_string(s.policy);
    return s.policy == SCHED_FIFO || s.policy == SCHED_RR ? name + " " + std::to_string(s.priority)
                                                          : name;
}

// ---- the state file: what was there before rtprov ------------------------------------

struct SavedState {
    std::map<int, std::pair<std::string, ThreadSched>> threads; // pid → comm, sched
    std::map<unsigned, std::string> affinities;                 // irq → smp_affinity_list
    std::optional<std::string> workqueue_mask;
};

// What a damaged or untrusted state file costs, and what to do about it.
std::string state_refused(const std::string& what) {
    return what +
           "; the values it saved cannot be trusted, so nothing was changed or put back. A "
           "reboot brings back the kernel's defaults; or, once the IRQ threads are as you want "
           "them, remove the file and run again";
}

// The state file, format 2 (this release's): a header comment, then
//
//   format 2
//   thread PID NAME POLICY PRIORITY     (one per thread changed)
//   affinity IRQ LIST                   (one per IRQ moved)
//   workqueue MASK
//   end COUNT
//
// with one space between fields. NAME is the thread's name with every byte outside '!'..'~'
// and the backslash written \xNN (lower-case hex), so that no byte of it is a space or a
// line break: a kernel thread's name may hold any byte but NUL (the PCIe port driver's
// IRQ thread is 'irq/122-PCIe PME', drivers/pci/pcie/pme.c; a driver may name its
// handler after what its device says). COUNT is the number of values: a file cut short
// (a full /run, a crash) lacks the line.
//
// Format 1, the earlier release's, had no 'format' line and wrote NAME as it was. It is
// still read, since a package upgrade meets it in /run until the next reboot: its PID,
// POLICY and PRIORITY hold no space and it put one space between fields, so NAME is what
// lies between PID and the last two fields, spaces and all (that release refused its own
// file when a name held one; this reads it). A name with a line break in it split its
// line and cannot be read back: any line that release would not have written is refused.
constexpr int k_state_format = 2;

std::string state_name(const std::string& name) {
    static const char k_hex[] = "0123456789abcdef";
    std::string out;
    for (char ch : name) {
        const auto c = static_cast<unsigned char>(ch);
        if (c > ' ' && c < 0x7f && c != '\\')
            out += ch;
        else
            out += {'\\', 'x', k_hex[c >> 4], k_hex[c & 15]};
    }
    return out;
}

// The name a format-2 NAME field holds, or nullopt when state_name would not write it so.
std::optional<std::string> name_of_field(const std::string& field) {
    std::string name;
    for (std::size_t i = 0; i < field.size(); ++i) {
        if (field[i] != '\\') {
            name += field[i];
            continue;
        }
        if (i + 4 > field.size() || field[i + 1] != 'x')
            return std::nullopt;
        unsigned value = 0;
        const char* digits = field.data() + i + 2;
        if (std::from_chars(digits, digits + 2, value, 16).ptr != digits + 2)
            return std::nullopt;
        name += static_cast<char>(value);
        i += 3;
    }
    // one way to write each name: no NUL, nothing escaped that need not be, lower case
    if (name.empty() || name.find('\0') != std::string::npos || state_name(name) != field)
        return std::nullopt;
    return name;
}

// A 'thread', 'affinity' or 'workqueue' line of the given format into 's'; false when it
// is not one rtprov writes.
bool parse_value(const std::string& line, int format, SavedState& s) {
    const std::vector<std::string> f = core::split(line, ' ');
    if (f[0] == "thread" && (f.size() == 5 || (format == 1 && f.size() > 5))) {
        std::optional<std::string> name;
        if (format == 1) {
            const std::size_t from = f[0].size() + f[1].size() + 2;
            const std::size_t to = line.size() - f[f.size() - 2].size() - f.back().size() - 2;
            name = line.substr(from, to - from);
            if (name->empty())
                name.reset();
        } else {
            name = name_of_field(f[2]);
        }
        auto pid = to_number(f[1]), policy = to_number(f[f.size() - 2]),
             priority = to_number(f.back());
        if (!name || !pid || !policy || !priority || *pid <= 0 || *pid > 1 << 22 || *policy < 0 ||
            *policy > 6 || *priority < 0 || *priority > 99 ||
            !(system::irq_of_thread(*name) || name->starts_with("ktimers/")))
            return false;
        s.threads[int(*pid)] = {*name, {int(*policy), int(*priority)}};
        return true;
    }
    if (f[0] == "affinity" && f.size() == 3) {
        auto irq = to_number(f[1]);
        if (!irq || *irq < 0 || !core::parse_cpu_list(f[2]))
            return false;
        s.affinities[unsigned(*irq)] = f[2];
        return true;
    }
    if (f[0] == "workqueue" && f.size() == 2 && !f[1].empty() &&
        f[1].find_first_not_of("0123456789abcdefABCDEF,") == std::string::npos) {
        s.workqueue_mask = f[1];
        return true;
    }
    return false;
}

// The file says which threads get which priority back, so it is read only when it is a
// regular file of this user's that no one else may write, and only whole: a line that
// does not parse refuses it (the values lost with it cannot be guessed, and a tune over it
// would save the tuned values as the originals). "" or the problem, with the fix.
std::string read_state(const std::string& path, SavedState& s) {
    core::Fd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    if (!fd)
        return errno == ENOENT ? ""
                               : state_refused("cannot read " + quoted(path) + ": " +
                                               (errno == ELOOP ? std::string("it is a symlink")
                                                               : std::strerror(errno)));
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0)
        return state_refused("cannot read " + quoted(path) + ": " + std::strerror(errno));
    if (!S_ISREG(st.st_mode))
        return state_refused(quoted(path) + " is " + fs::file_type_name(st.st_mode) +
                             ", not rtprov's state file");
    if (st.st_uid != ::geteuid() || (st.st_mode & 022) != 0)
        return state_refused(quoted(path) + " is owned by uid " + std::to_string(st.st_uid) +
                             " with mode " + core::octal(st.st_mode & 07777) +
                             ": rtprov writes it as uid " + std::to_string(::geteuid()) +
                             ", writable by no one else");
    if (st.st_size > k_max_state_bytes)
        return state_refused(quoted(path) + " is " + std::to_string(st.st_size) +
                             " bytes, more than rtprov writes (" +
                             std::to_string(k_max_state_bytes) + ")");
    std::string text(static_cast<std::size_t>(st.st_size), '\0');
    if (::read(fd.get(), text.data(), text.size()) != static_cast<ssize_t>(text.size()))
        return state_refused("cannot read " + quoted(path) + ": " + std::strerror(errno));
    // Each line ends in a newline: the last field is what follows the last one, empty in a
    // whole file, the rest of a line cut short otherwise.
    const std::vector<std::string> lines = core::split(text, '\n');
    int format = 1;
    std::size_t values = 0, seen = 0;
    bool end = false;
    for (std::size_t i = 0; i + 1 < lines.size(); ++i) {
        const std::string& line = lines[i];
        const std::string where = path + ":" + std::to_string(i + 1) + ": ";
        const std::vector<std::string> f = core::split(line, ' ');
        bool good = false;
        if (line.starts_with('#')) {
            good = i == 0; // the header; a '#' further down is a split name's rest
        } else if (end) {
            good = false; // nothing after the end line
        } else if (f[0] == "format" && f.size() == 2 && seen == 0) {
            if (f[1] != std::to_string(k_state_format))
                return state_refused(where + "a state format this rtprov does not read (it reads " +
                                     std::to_string(k_state_format) +
                                     ", and an earlier rtprov's without a 'format' line): a "
                                     "newer rtprov wrote it");
            format = k_state_format;
            good = true;
        } else if (f[0] == "end" && f.size() == 2) {
            auto n = to_number(f[1]);
            good = n && *n == long(values);
            end = true;
        } else {
            good = parse_value(line, format, s);
            ++values;
        }
        seen += line.starts_with('#') ? 0 : 1;
        // the line itself is not quoted: whatever the file holds stays out of the journal
        if (!good)
            return state_refused(where + "not a line rtprov writes" +
                                 (format == 1 ? " (the file has no 'format' line: an earlier "
                                                "rtprov's, whose thread names could not hold a "
                                                "line break)"
                                              : ""));
    }
    if (!end || !lines.back().empty())
        return state_refused(path + " ends at line " +
                             std::to_string(lines.size() - (lines.back().empty() ? 1 : 0)) +
                             " without the 'end' line rtprov writes last: it was cut short");
    return "";
}

// Serialises the runs on one state file (at boot the boot instance and each card's start
// together): waits up to 10 s for another run to finish. The folder and the lock must be
// ours and closed to others, as the root lock's /run/rtprov (target/root_lock.cpp): who
// may rename files there may take the state away or hold a lock of their own. "" or the
// problem, with the fix.
stdfs::path state_folder(const std::string& path) {
    const stdfs::path folder = stdfs::path(path).parent_path();
    return folder.empty() ? stdfs::path(".") : folder;
}

// "" when 'folder' is a folder of ours closed to others, else why not, with the fix.
std::string folder_problem(const stdfs::path& folder) {
    struct stat dir {};
    if (::lstat(folder.c_str(), &dir) != 0)
        return "cannot use the folder " + quoted(folder.string()) +
               " for the state: " + std::strerror(errno) + "; nothing changed";
    if (S_ISDIR(dir.st_mode) && dir.st_uid == ::geteuid() && (dir.st_mode & 077) == 0)
        return "";
    return "the state's folder " + quoted(folder.string()) + " is " +
           (S_ISDIR(dir.st_mode) ? "owned by uid " + std::to_string(dir.st_uid) + " with mode " +
                                       core::octal(dir.st_mode & 07777)
                                 : fs::file_type_name(dir.st_mode)) +
           ": it must be a folder of uid " + std::to_string(::geteuid()) +
           " closed to others (mode 0700); nothing changed: give a --state in such a folder";
}

std::string lock_state(const std::string& path, core::Fd& lock) {
    const stdfs::path folder = state_folder(path);
    std::error_code ec;
    stdfs::create_directories(folder.parent_path(), ec);
    ::mkdir(folder.c_str(), 0700);
    if (std::string problem = folder_problem(folder); !problem.empty())
        return problem;
    const std::string name = path + ".lock";
    lock = core::Fd(
        ::open(name.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600));
    struct stat file {};
    if (!lock)
        return "cannot open the lock " + quoted(name) + ": " +
               (errno == ELOOP ? std::string("it is a symlink") : std::strerror(errno)) +
               "; nothing changed: remove it and run again";
    if (::fstat(lock.get(), &file) != 0 || !S_ISREG(file.st_mode) || file.st_uid != ::geteuid())
        return "the lock " + quoted(name) + " is not a regular file of uid " +
               std::to_string(::geteuid()) + "; nothing changed: remove it and run again";
    for (int i = 0; i < 200; ++i) {
        if (::flock(lock.get(), LOCK_EX | LOCK_NB) == 0)
            return "";
        if (errno != EWOULDBLOCK)
            return "cannot lock " + quoted(name) + ": " + std::strerror(errno) +
                   "; nothing changed";
        ::usleep(50000);
    }
    return "another 'rtprov irq-tune' has held " + quoted(name) +
           " for 10 s; nothing changed: run again when it has finished";
}

bool lock_and_read_state(const std::string& path, core::Fd& lock, SavedState& s,
                         IrqTuneResult& result) {
    std::string problem = lock_state(path, lock);
    if (problem.empty())
        problem = read_state(path, s);
    if (!problem.empty()) {
        result.findings.push_back(problem);
        result.ok = false;
    }
    return problem.empty();
}

std::string write_state(const std::string& path, const SavedState& s) {
    std::string text = "# rtprov irq-tune: the values before rtprov changed them "
                       "('rtprov rollback --live' puts them back)\n"
                       "format " +
                       std::to_string(k_state_format) + "\n";
    for (const auto& [pid, saved] : s.threads)
        text += "thread " + std::to_string(pid) + " " + state_name(saved.first) + " " +
                std::to_string(saved.second.policy) + " " + std::to_string(saved.second.priority) +
                "\n";
    for (const auto& [irq, list] : s.affinities)
        text += "affinity " + std::to_string(irq) + " " + list + "\n";
    if (s.workqueue_mask)
        text += "workqueue " + *s.workqueue_mask + "\n";
    // the last line: a file cut short (a full /run, a crash of the file system) lacks it
    text += "end " +
            std::to_string(s.threads.size() + s.affinities.size() + (s.workqueue_mask ? 1 : 0)) +
            "\n";
    const std::string temp = path + ".new"; // lock_state made the folder
    // a fresh file of ours: whatever was left at that name (a crash, or planted) goes first
    if (::unlink(temp.c_str()) != 0 && errno != ENOENT)
        return "cannot remove " + quoted(temp) + ": " + std::strerror(errno);
    core::Fd fd(::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600));
    if (!fd)
        return "cannot write " + quoted(temp) + ": " + std::strerror(errno);
    if (::write(fd.get(), text.data(), text.size()) != static_cast<ssize_t>(text.size()) ||
        ::fsync(fd.get()) != 0)
        return "cannot write " + quoted(temp) + ": " + std::strerror(errno);
    fd.reset();
    if (::rename(temp.c_str(), path.c_str()) != 0)
        return "cannot rename " + quoted(temp) + ": " + std::strerror(errno);
    return "";
}

} // namespace

KernelCalls real_kernel_calls() {
    KernelCalls calls;
    calls.get_sched = [](int pid) -> std::optional<ThreadSched> {
        const int policy = ::sched_getscheduler(pid);
        sched_param param{};
        if (policy < 0 || ::sched_getparam(pid, &param) != 0)
            return std::nullopt;
        return ThreadSched{policy & ~SCHED_RESET_ON_FORK, param.sched_priority};
    };
    calls.set_sched = [](int pid, const ThreadSched& s) -> std::string {
        sched_param param{};
        param.sched_priority = s.priority;
        if (::sched_setscheduler(pid, s.policy, &param) != 0)
            return std::strerror(errno);
        return "";
    };
    calls.write = [](const std::string& path, const std::string& value) -> int {
        // the messages say what was there before: the errno is what they need
        return fs::write_kernel_value(path.c_str(), value.data(), value.size());
    };
    return calls;
}

IrqTuneResult tune_irqs(const std::string& root, const IrqTuneRequest& request,
                        const KernelCalls& calls, const std::string& state_path) {
    IrqTuneResult result;
    const system::SysRoot r(root);
    const std::string prefix = root == "/" ? "" : root;
    core::Fd lock;
    SavedState saved;
    if (!lock_and_read_state(state_path, lock, saved, result))
        return result;
    const SavedState before = saved;

    // CPUs that are not online: the kernel would refuse them half-way (ERANGE, EINVAL)
    std::vector<std::pair<std::string, const core::CpuList*>> wanted = {
        {"the sound IRQs' CPUs", &request.sound_cpus}};
    if (request.workqueue_cpus)
        wanted.emplace_back("the workqueues' CPUs", &*request.workqueue_cpus);
    if (auto online = r.cpu_list("/sys/devices/system/cpu/online")) {
        for (const auto& [what, cpus] : wanted)
            if (!cpus->minus(*online).empty()) {
                result.findings.push_back(
                    what + " " + cpus->to_string() + " include CPUs that are not online (" +
                    cpus->minus(*online).to_string() +
                    "; /sys/devices/system/cpu/online: " + online->to_string() +
                    "); nothing changed: plan for this machine's CPUs (board.cpus)");
                result.ok = false;
                return result;
            }
    } else {
        result.findings.push_back("cannot see which CPUs are online (" + online.problem +
                                  "): the CPUs given are not checked against them");
    }

    // Which IRQs feed the sound path: those the cards are found to use, and those the
    // profile names.
    system::Fact<std::vector<system::IrqLine>> lines = system::read_irq_lines(r);
    if (!lines) {
        result.findings.push_back("cannot see the IRQs: " + lines.problem);
        result.ok = false;
        return result;
    }
    if (auto cards = system::read_sound_cards(r, *lines)) {
        result.cards = *cards;
        for (const system::SoundCard& card : *cards)
            if (card.irqs.empty())
                result.findings.push_back("card " + std::to_string(card.number) + " (" +
                                          quoted(card.id) + "): " + card.problem);
    } else {
        result.findings.push_back(cards.absent ? "no ALSA in this kernel (/proc/asound/cards "
                                                 "is missing): no sound card to find"
                                               : cards.problem);
    }
    std::vector<std::string> unmatched;
    const std::set<unsigned> sound_irqs =
        system::sound_path_irqs(result.cards, *lines, request.sound_names, &unmatched);
    for (const std::string& glob : unmatched)
        result.findings.push_back("tuning.irqs.sound_names: '" + glob +
                                  "' matches no IRQ's handler (/sys/kernel/irq/*/actions)");

    // Threads: the sound path's IRQ threads, every other IRQ thread, the timer threads.
    std::vector<KernelThread> threads = kernel_threads(r);
    std::set<unsigned> threaded;
    std::vector<std::pair<const KernelThread*, ThreadSched>> changes;
    for (const KernelThread& t : threads) {
        std::optional<ThreadSched> want;
        if (t.irq) {
            threaded.insert(*t.irq);
            if (sound_irqs.count(*t.irq))
                want = ThreadSched{k_fifo, request.sound_priority};
            else if (request.other_priority)
                want = ThreadSched{k_fifo, *request.other_priority};
        } else if (request.timer_priority && t.comm.starts_with("ktimers/")) {
            want = ThreadSched{k_fifo, *request.timer_priority};
        }
        if (want)
            changes.emplace_back(&t, *want);
    }
    for (unsigned irq : sound_irqs)
        if (!threaded.count(irq))
            result.findings.push_back(
                "IRQ " + std::to_string(irq) + " feeds a sound card but has no thread (irq/" +
                std::to_string(irq) +
                "-…): its handler runs in hard interrupt context, above every thread, and has "
                "no priority to set; boot with threadirqs or a PREEMPT_RT kernel to order it");

    // Save what is about to change, once: before the first change, so a crash in between
    // still leaves what to restore.
    struct ThreadChange {
        const KernelThread* thread;
        ThreadSched want, now;
    };
    std::vector<ThreadChange> to_set;
    for (const auto& [t, want] : changes) {
        std::optional<ThreadSched> now = calls.get_sched(t->pid);
        if (!now) {
            result.findings.push_back("cannot read the scheduling of " + quoted(t->comm) +
                                      " (pid " + std::to_string(t->pid) + "): it ended");
            continue;
        }
        if (*now == want)
            continue;
        if (!saved.threads.count(t->pid))
            saved.threads[t->pid] = {t->comm, *now};
        to_set.push_back({t, want, *now});
    }
    std::vector<std::pair<unsigned, std::string>> to_move; // IRQ, its CPUs now
    const std::string sound_list = request.sound_cpus.to_string();
    for (unsigned irq : sound_irqs) {
        const std::string file = "/proc/irq/" + std::to_string(irq) + "/smp_affinity_list";
        auto now = r.cpu_list(file);
        if (!now) {
            result.findings.push_back("cannot read " + file + ": " + now.problem);
            continue;
        }
        if (*now == request.sound_cpus)
            continue;
        if (!saved.affinities.count(irq))
            saved.affinities[irq] = now->to_string();
        to_move.emplace_back(irq, now->to_string());
    }
    std::optional<std::string> new_mask, old_mask;
    if (request.workqueue_cpus) {
        auto now = r.value(k_workqueue_mask);
        const std::string want = request.workqueue_cpus->to_mask();
        if (!now) {
            result.findings.push_back("cannot read " + std::string(k_workqueue_mask) + ": " +
                                      now.problem);
        } else if (*now != want) {
            if (!saved.workqueue_mask)
                saved.workqueue_mask = *now;
            new_mask = want;
            old_mask = *now;
        }
    }
    if (saved.threads != before.threads || saved.affinities != before.affinities ||
        saved.workqueue_mask != before.workqueue_mask) {
        if (std::string error = write_state(state_path, saved); !error.empty()) {
            result.findings.push_back(error + "; nothing changed, since it could not be undone");
            result.ok = false;
            return result;
        }
    }

    for (const ThreadChange& c : to_set) {
        if (std::string error = calls.set_sched(c.thread->pid, c.want); !error.empty()) {
            result.findings.push_back("cannot set " + quoted(c.thread->comm) + " (pid " +
                                      std::to_string(c.thread->pid) + ") to " + sched_text(c.want) +
                                      ": " + error);
            result.ok = false;
        } else {
            result.done.push_back(quoted(c.thread->comm) + " " + sched_text(c.now) + " -> " +
                                  sched_text(c.want));
        }
    }
    for (const auto& [irq, now] : to_move) {
        const std::string file = "/proc/irq/" + std::to_string(irq) + "/smp_affinity_list";
        const int error = calls.write(prefix + file, sound_list + "\n");
        if (error == 0)
            result.done.push_back("IRQ " + std::to_string(irq) + " CPUs " + now + " -> " +
                                  sound_list);
        else if (error == EIO)
            // Some interrupt controllers do not move an IRQ (a Pi's refuse with EIO): a
            // fact about the board, not a failure of the tuning.
            result.findings.push_back("IRQ " + std::to_string(irq) + " stays on CPUs " + now +
                                      ": writing " + sound_list + " to " + file + " failed (" +
                                      std::strerror(error) +
                                      "); its interrupt controller does not move it");
        else if (error == ENOENT)
            result.findings.push_back("IRQ " + std::to_string(irq) +
                                      " went away with its device before its CPUs were set");
        else {
            result.findings.push_back("cannot write " + sound_list + " to " + file + ": " +
                                      std::strerror(error));
            result.ok = false;
        }
    }
    if (new_mask) {
        if (const int error = calls.write(prefix + k_workqueue_mask, *new_mask + "\n")) {
            result.findings.push_back("cannot set the unbound workqueues to CPUs " +
                                      request.workqueue_cpus->to_string() + " (" + *new_mask +
                                      " to " + std::string(k_workqueue_mask) +
                                      "): " + std::strerror(error));
            result.ok = false;
        } else {
            result.done.push_back("unbound workqueues cpumask " + *old_mask + " -> " + *new_mask);
        }
    }
    return result;
}

IrqTuneResult restore_irqs(const std::string& root, const KernelCalls& calls,
                           const std::string& state_path) {
    IrqTuneResult result;
    std::error_code ec;
    // Nothing to put back where no tune ever ran: neither its lock (a tune makes that
    // first) nor a state; and nothing made here then (a rollback leaves such a root as it
    // was). Where either is, the lock is taken first: a tune holding it may be saving one.
    bool any = false;
    for (const std::string& file : {state_path, state_path + ".lock"}) {
        const stdfs::file_status status = stdfs::symlink_status(file, ec);
        // libstdc++ sets 'ec' for a missing file too, with the type not_found
        if (ec && status.type() != stdfs::file_type::not_found) {
            result.findings.push_back("cannot see " + quoted(file) + ": " + ec.message() +
                                      "; nothing put back");
            result.ok = false;
            return result;
        }
        any = any || stdfs::exists(status);
    }
    if (!any) {
        // ...unless others could have removed them
        const stdfs::path folder = state_folder(state_path);
        if (stdfs::exists(stdfs::symlink_status(folder, ec)))
            if (std::string problem = folder_problem(folder); !problem.empty()) {
                result.findings.push_back(problem);
                result.ok = false;
            }
        return result;
    }
    core::Fd lock;
    SavedState saved;
    if (!lock_and_read_state(state_path, lock, saved, result))
        return result;
    const system::SysRoot r(root);
    const std::string prefix = root == "/" ? "" : root;
    std::map<int, std::string> kernel; // pid → comm of each kernel thread now
    for (const KernelThread& t : kernel_threads(r))
        kernel[t.pid] = t.comm;
    for (const auto& [pid, thread] : saved.threads) {
        // Only the same kernel thread: a pid the kernel gave to another since is left alone.
        const auto now = kernel.find(pid);
        if (now == kernel.end() || now->second != thread.first) {
            result.findings.push_back(quoted(thread.first) + " (pid " + std::to_string(pid) +
                                      ") has ended: nothing of it to put back");
            continue;
        }
        if (std::string error = calls.set_sched(pid, thread.second); !error.empty()) {
            result.findings.push_back("cannot put " + quoted(thread.first) + " (pid " +
                                      std::to_string(pid) + ") back to " +
                                      sched_text(thread.second) + ": " + error);
            result.ok = false;
        } else {
            result.done.push_back(quoted(thread.first) + " back to " + sched_text(thread.second));
        }
    }
    for (const auto& [irq, list] : saved.affinities) {
        const std::string file = "/proc/irq/" + std::to_string(irq) + "/smp_affinity_list";
        if (!r.exists(file))
            continue; // the IRQ went with its device
        if (const int error = calls.write(prefix + file, list + "\n")) {
            result.findings.push_back("cannot put IRQ " + std::to_string(irq) + " back on CPUs " +
                                      list + ": " + std::strerror(error));
            result.ok = false;
        } else {
            result.done.push_back("IRQ " + std::to_string(irq) + " back on CPUs " + list);
        }
    }
    if (saved.workqueue_mask) {
        if (const int error =
                calls.write(prefix + k_workqueue_mask, *saved.workqueue_mask + "\n")) {
            result.findings.push_back("cannot put the unbound workqueues' cpumask back to " +
                                      *saved.workqueue_mask + ": " + std::strerror(error));
            result.ok = false;
        } else {
            result.done.push_back("unbound workqueues cpumask back to " + *saved.workqueue_mask);
        }
    }
    // Kept while something could not be put back: a second try may.
    if (result.ok && !stdfs::remove(state_path, ec) && ec)
        result.findings.push_back("cannot remove " + quoted(state_path) + ": " + ec.message());
    return result;
}

} // namespace rtprov::live
