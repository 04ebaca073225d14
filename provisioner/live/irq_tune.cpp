#include "provisioner/live/irq_tune.hpp"

#include "provisioner/core/error.hpp"
#include "provisioner/core/fd.hpp"
#include "provisioner/core/text.hpp"
#include "provisioner/target/root.hpp"

#include <fcntl.h>
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>

namespace rtprov::live {

namespace fs = std::filesystem;

namespace {

constexpr int k_fifo = SCHED_FIFO;
constexpr const char* k_workqueue_mask = "/sys/devices/virtual/workqueue/cpumask";
constexpr std::size_t k_max_state_lines = 65536;

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
        auto comm = r.value(dir + "/comm");
        auto status = r.text(dir + "/status");
        // a child of kthreadd (pid 2): a kernel thread
        if (!comm || !status || status->find("\nPPid:\t2\n") == std::string::npos)
            continue;
        out.push_back({pid, *comm, system::irq_of_thread(*comm)});
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

// One line per value: 'thread PID COMM POLICY PRIORITY' (COMM without spaces: kernel
// threads' names have none), 'affinity IRQ LIST', 'workqueue MASK'. A line that does not
// parse is a problem: the file is rtprov's own, in /run, root's.
SavedState read_state(const std::string& path, std::vector<std::string>& problems) {
    SavedState s;
    std::error_code ec;
    if (!fs::exists(path, ec))
        return s;
    std::optional<std::string> text = target::read_host_file(path, target::caps::k_config, path);
    if (!text)
        return s;
    std::size_t number = 0;
    for (const std::string& line : core::split(*text, '\n')) {
        if (++number > k_max_state_lines)
            break;
        if (line.empty() || line.starts_with('#'))
            continue;
        const std::vector<std::string> w = core::words(line);
        bool good = false;
        if (w.size() == 5 && w[0] == "thread") {
            auto pid = to_number(w[1]), policy = to_number(w[3]), priority = to_number(w[4]);
            if (pid && policy && priority && *pid > 0 && *pid <= 1 << 22 && *policy >= 0 &&
                *policy <= 6 && *priority >= 0 && *priority <= 99) {
                s.threads[int(*pid)] = {w[2], {int(*policy), int(*priority)}};
                good = true;
            }
        } else if (w.size() == 3 && w[0] == "affinity") {
            auto irq = to_number(w[1]);
            if (irq && *irq >= 0 && core::parse_cpu_list(w[2])) {
                s.affinities[unsigned(*irq)] = w[2];
                good = true;
            }
        } else if (w.size() == 2 && w[0] == "workqueue") {
            good = w[1].find_first_not_of("0123456789abcdefABCDEF,") == std::string::npos;
            if (good)
                s.workqueue_mask = w[1];
        }
        if (!good)
            problems.push_back(path + ":" + std::to_string(number) +
                               ": not a line rtprov writes, left out: " + line);
    }
    return s;
}

std::string write_state(const std::string& path, const SavedState& s) {
    std::string text = "# rtprov irq-tune: the values before rtprov changed them "
                       "('rtprov rollback --live' puts them back)\n";
    for (const auto& [pid, saved] : s.threads)
        text += "thread " + std::to_string(pid) + " " + saved.first + " " +
                std::to_string(saved.second.policy) + " " + std::to_string(saved.second.priority) +
                "\n";
    for (const auto& [irq, list] : s.affinities)
        text += "affinity " + std::to_string(irq) + " " + list + "\n";
    if (s.workqueue_mask)
        text += "workqueue " + *s.workqueue_mask + "\n";
    std::error_code ec;
    fs::create_directories(fs::path(path).parent_path(), ec);
    const std::string temp = path + ".new";
    core::Fd fd(::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600));
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
    calls.write = [](const std::string& path, const std::string& value) -> std::string {
        core::Fd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOFOLLOW));
        if (!fd)
            return std::strerror(errno);
        // one write(2): sysfs and procfs take a value in one call, and say no right there
        if (::write(fd.get(), value.data(), value.size()) != static_cast<ssize_t>(value.size()))
            return std::strerror(errno);
        return "";
    };
    return calls;
}

IrqTuneResult tune_irqs(const std::string& root, const IrqTuneRequest& request,
                        const KernelCalls& calls, const std::string& state_path) {
    IrqTuneResult result;
    const system::SysRoot r(root);
    const std::string prefix = root == "/" ? "" : root;
    SavedState saved = read_state(state_path, result.findings);
    const SavedState before = saved;

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
                result.findings.push_back("card " + std::to_string(card.number) + " ('" + card.id +
                                          "'): " + card.problem);
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
    std::vector<std::pair<const KernelThread*, ThreadSched>> to_set;
    for (const auto& [t, want] : changes) {
        std::optional<ThreadSched> now = calls.get_sched(t->pid);
        if (!now) {
            result.findings.push_back("cannot read the scheduling of '" + t->comm + "' (pid " +
                                      std::to_string(t->pid) + "): it ended");
            continue;
        }
        if (*now == want)
            continue;
        if (!saved.threads.count(t->pid))
            saved.threads[t->pid] = {t->comm, *now};
        to_set.emplace_back(t, want);
    }
    std::vector<unsigned> to_move;
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
        to_move.push_back(irq);
    }
    std::optional<std::string> new_mask;
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

    for (const auto& [t, want] : to_set) {
        if (std::string error = calls.set_sched(t->pid, want); !error.empty()) {
            result.findings.push_back("cannot set '" + t->comm + "' (pid " +
                                      std::to_string(t->pid) + ") to " + sched_text(want) + ": " +
                                      error);
            result.ok = false;
        } else {
            result.done.push_back("'" + t->comm + "' " + sched_text(saved.threads[t->pid].second) +
                                  " -> " + sched_text(want));
        }
    }
    for (unsigned irq : to_move) {
        const std::string file = "/proc/irq/" + std::to_string(irq) + "/smp_affinity_list";
        if (std::string error = calls.write(prefix + file, sound_list + "\n"); !error.empty())
            // Some interrupt controllers do not move an IRQ (a Pi's often refuse with EIO):
            // a fact about the board, not a failure of the tuning.
            result.findings.push_back("IRQ " + std::to_string(irq) + " stays on CPUs " +
                                      saved.affinities[irq] + ": writing " + sound_list + " to " +
                                      file + " failed (" + error +
                                      "); its interrupt controller does not move it");
        else
            result.done.push_back("IRQ " + std::to_string(irq) + " CPUs " + saved.affinities[irq] +
                                  " -> " + sound_list);
    }
    if (new_mask) {
        if (std::string error = calls.write(prefix + k_workqueue_mask, *new_mask + "\n");
            !error.empty()) {
            result.findings.push_back("cannot write " + *new_mask + " to " +
                                      std::string(k_workqueue_mask) + ": " + error);
            result.ok = false;
        } else {
            result.done.push_back("unbound workqueues cpumask " + *saved.workqueue_mask + " -> " +
                                  *new_mask);
        }
    }
    return result;
}

IrqTuneResult restore_irqs(const std::string& root, const KernelCalls& calls,
                           const std::string& state_path) {
    IrqTuneResult result;
    std::error_code ec;
    if (!fs::exists(state_path, ec))
        return result;
    const SavedState saved = read_state(state_path, result.findings);
    const system::SysRoot r(root);
    const std::string prefix = root == "/" ? "" : root;
    for (const auto& [pid, thread] : saved.threads) {
        // Only the same thread: a pid the kernel gave to another since is left alone.
        auto comm = r.value("/proc/" + std::to_string(pid) + "/comm");
        if (!comm || *comm != thread.first) {
            result.findings.push_back("'" + thread.first + "' (pid " + std::to_string(pid) +
                                      ") has ended: nothing of it to put back");
            continue;
        }
        if (std::string error = calls.set_sched(pid, thread.second); !error.empty()) {
            result.findings.push_back("cannot put '" + thread.first + "' (pid " +
                                      std::to_string(pid) + ") back to " +
                                      sched_text(thread.second) + ": " + error);
            result.ok = false;
        } else {
            result.done.push_back("'" + thread.first + "' back to " + sched_text(thread.second));
        }
    }
    for (const auto& [irq, list] : saved.affinities) {
        const std::string file = "/proc/irq/" + std::to_string(irq) + "/smp_affinity_list";
        if (!r.exists(file))
            continue; // the IRQ went with its device
        if (std::string error = calls.write(prefix + file, list + "\n"); !error.empty()) {
            result.findings.push_back("cannot put IRQ " + std::to_string(irq) + " back on CPUs " +
                                      list + ": " + error);
            result.ok = false;
        } else {
            result.done.push_back("IRQ " + std::to_string(irq) + " back on CPUs " + list);
        }
    }
    if (saved.workqueue_mask) {
        if (std::string error =
                calls.write(prefix + k_workqueue_mask, *saved.workqueue_mask + "\n");
            !error.empty()) {
            result.findings.push_back("cannot put the unbound workqueues' cpumask back to " +
                                      *saved.workqueue_mask + ": " + error);
            result.ok = false;
        } else {
            result.done.push_back("unbound workqueues cpumask back to " + *saved.workqueue_mask);
        }
    }
    // Kept while something could not be put back: a second try may.
    if (result.ok && !fs::remove(state_path, ec) && ec)
        result.findings.push_back("cannot remove " + quoted(state_path) + ": " + ec.message());
    return result;
}

} // namespace rtprov::live
