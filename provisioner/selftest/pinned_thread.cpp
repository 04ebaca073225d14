// SPDX-License-Identifier: Apache-2.0
#include "provisioner/selftest/pinned_thread.hpp"

#include "provisioner/core/error.hpp"

#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <ctime>

namespace rtprov::selftest {

namespace {

constexpr std::int64_t k_ns_per_s = 1'000'000'000;

std::optional<std::uint64_t> limit_value(rlim_t value) {
    if (value == RLIM_INFINITY)
        return std::nullopt;
    return static_cast<std::uint64_t>(value);
}

std::string limit_text(const std::optional<std::uint64_t>& value) {
    return value ? std::to_string(*value) : "unlimited";
}

// pthread_attr_t with its destruction tied to scope.
class ThreadAttr {
  public:
    ThreadAttr() { pthread_attr_init(&m_attr); }
    ~ThreadAttr() {
        pthread_attr_destroy(&m_attr);
        if (m_cpus)
            CPU_FREE(m_cpus);
    }
    ThreadAttr(const ThreadAttr&) = delete;
    ThreadAttr& operator=(const ThreadAttr&) = delete;

    pthread_attr_t* get() { return &m_attr; }

    void pin(const core::CpuList& cpus) {
        const unsigned count = cpus.max().value_or(0) + 1;
        m_cpus = CPU_ALLOC(count);
        const std::size_t size = CPU_ALLOC_SIZE(count);
        CPU_ZERO_S(size, m_cpus);
        for (unsigned cpu : cpus.cpus())
            CPU_SET_S(cpu, size, m_cpus);
        pthread_attr_setaffinity_np(&m_attr, size, m_cpus);
    }

  private:
    pthread_attr_t m_attr;
    cpu_set_t* m_cpus = nullptr;
};

} // namespace

core::CpuList ThreadSpec::affinity() const {
    return cpu ? cpus.union_with(core::CpuList({*cpu})) : cpus;
}

PinnedThread::PinnedThread(const ThreadSpec& spec, std::function<void()> body)
    : m_start(std::make_unique<Start>()) {
    m_start->body = std::move(body);
    m_start->name = spec.name.substr(0, 15); // the kernel keeps 15 characters (TASK_COMM_LEN)

    ThreadAttr attr;
    const auto stack_min = static_cast<std::size_t>(PTHREAD_STACK_MIN);
    pthread_attr_setstacksize(attr.get(), std::max(spec.stack_bytes, stack_min));
    // Explicit scheduling: the thread starts with its own policy instead of the caller's.
    pthread_attr_setinheritsched(attr.get(), PTHREAD_EXPLICIT_SCHED);
    // core numbers the policies as <sched.h> does (sched_policy_test checks it).
    pthread_attr_setschedpolicy(attr.get(), static_cast<int>(core::sched_number(spec.policy)));
    sched_param param{};
    param.sched_priority = core::has_static_priority(spec.policy) ? spec.priority : 0;
    pthread_attr_setschedparam(attr.get(), &param);
    const core::CpuList affinity = spec.affinity();
    if (!affinity.empty())
        attr.pin(affinity);

    const int rc = pthread_create(&m_thread, attr.get(), &PinnedThread::run, m_start.get());
    if (rc == 0)
        return;
    m_joined = true;
    if (rc == EPERM && core::has_static_priority(spec.policy)) {
        rlimit limit{};
        getrlimit(RLIMIT_RTPRIO, &limit);
        throw Error(
            realtime_permission_error(spec.policy, spec.priority,
                                      {limit_value(limit.rlim_cur), limit_value(limit.rlim_max)}));
    }
    std::string where = core::kernel_name(spec.policy);
    if (core::has_static_priority(spec.policy))
        where += " " + std::to_string(spec.priority);
    if (affinity.size() == 1)
        where += " on CPU " + affinity.to_string();
    else if (!affinity.empty())
        where += " on CPUs " + affinity.to_string();
    throw Error("cannot start thread " + quoted(m_start->name) + " (" + where +
                "): " + errno_text(rc));
}

PinnedThread::~PinnedThread() {
    join();
}

void PinnedThread::join() {
    if (m_joined)
        return;
    pthread_join(m_thread, nullptr);
    m_joined = true;
}

pid_t PinnedThread::tid() const {
    pid_t tid = m_start->tid.load();
    while (tid == 0) {
        m_start->tid.wait(0);
        tid = m_start->tid.load();
    }
    return tid;
}

void* PinnedThread::run(void* start) {
    auto* s = static_cast<Start*>(start);
    pthread_setname_np(pthread_self(), s->name.c_str());
    s->tid.store(gettid());
    s->tid.notify_all();
    s->body();
    return nullptr;
}

std::string realtime_permission_error(core::SchedPolicy policy, int priority,
                                      const RtprioLimit& limit) {
    const std::string prio = std::to_string(priority);
    return "cannot run a thread at " + core::kernel_name(policy) + " priority " + prio +
           ": operation not permitted (RLIMIT_RTPRIO is " + limit_text(limit.soft) +
           ", hard limit " + limit_text(limit.hard) +
           "); run rtprov as root, or allow real-time priority " + prio + " (ulimit -r " + prio +
           ", LimitRTPRIO=" + prio + " in a service, or 'rtprio " + prio +
           "' in /etc/security/limits.d/)";
}

std::string errno_text(int error) {
    std::string text = std::strerror(error);
    if (!text.empty())
        text[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(text[0])));
    return text;
}

std::int64_t monotonic_ns() {
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    return std::int64_t{now.tv_sec} * k_ns_per_s + now.tv_nsec;
}

void sleep_until_ns(std::int64_t deadline_ns) {
    timespec deadline{};
    deadline.tv_sec = static_cast<time_t>(deadline_ns / k_ns_per_s);
    deadline.tv_nsec = static_cast<long>(deadline_ns % k_ns_per_s);
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, nullptr) == EINTR) {
    }
}

void wait_with_progress(std::int64_t start_ns, std::int64_t total_ns,
                        const ProgressCallback& progress, const std::atomic<bool>* stop) {
    const std::int64_t end = start_ns + total_ns;
    for (std::int64_t second = 1;; ++second) {
        const std::int64_t target = std::min(start_ns + second * k_ns_per_s, end);
        sleep_until_ns(target);
        if (progress)
            progress(static_cast<double>(target - start_ns) / 1e9,
                     static_cast<double>(total_ns) / 1e9);
        if (target >= end || (stop && stop->load(std::memory_order_relaxed)))
            return;
    }
}

} // namespace rtprov::selftest

namespace rtprov::selftest {

namespace {

std::vector<unsigned> thread_affinity() {
    cpu_set_t set;
    CPU_ZERO(&set);
    std::vector<unsigned> cpus;
    if (pthread_getaffinity_np(pthread_self(), sizeof set, &set) == 0)
        for (unsigned cpu = 0; cpu < CPU_SETSIZE; ++cpu)
            if (CPU_ISSET(cpu, &set))
                cpus.push_back(cpu);
    return cpus;
}

bool set_thread_affinity(const std::vector<unsigned>& cpus) {
    cpu_set_t set;
    CPU_ZERO(&set);
    for (unsigned cpu : cpus)
        if (cpu < CPU_SETSIZE)
            CPU_SET(cpu, &set);
    return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
}

} // namespace

AwayFrom::AwayFrom(const core::CpuList& cpus) {
    const std::vector<unsigned> old = thread_affinity();
    std::vector<unsigned> rest;
    for (unsigned cpu : old)
        if (!cpus.contains(cpu))
            rest.push_back(cpu);
    if (!old.empty() && !rest.empty() && rest.size() != old.size() && set_thread_affinity(rest))
        m_old = old;
}

AwayFrom::~AwayFrom() {
    if (!m_old.empty())
        set_thread_affinity(m_old);
}

} // namespace rtprov::selftest
