// SPDX-License-Identifier: Apache-2.0
#include "provisioner/audit/expectation.hpp"

#include "provisioner/profile/app_loader.hpp"

#include "tests/unit/audit_fixture.hpp"
#include "tests/unit/catch.hpp"

using namespace rtprov;
using namespace rtprov::audit;
using rtprov::core::SchedPolicy;

namespace {

const std::vector<core::AppKnowledge> k_apps =
    profile::load_apps(std::string(RTPROV_SOURCE_DIR) + "/board-profiles/apps");
const core::ResolvedCores k_cores{core::CpuList({0, 1}), core::CpuList({2, 3})};

core::ServiceTuning service(const std::string& name) {
    core::ServiceTuning s;
    s.name = name;
    s.unit = name + ".service";
    s.cpus = core::CpuTarget{core::CpuTargetKind::reserved, {}};
    return s;
}

core::Profile profile_with(std::vector<core::ServiceTuning> services) {
    core::Profile p;
    p.name = "box";
    p.tuning.services = std::move(services);
    return p;
}

// A kernel whose config has both nohz_full= and rcu_nocbs= options.
core::InstalledKernel debian_kernel() {
    core::InstalledKernel k;
    k.version = "6.12.117+deb13-amd64";
    k.has_image = true;
    k.config = std::map<std::string, std::string>{{"CONFIG_NO_HZ_FULL", "y"},
                                                  {"CONFIG_RCU_NOCB_CPU", "y"}};
    return k;
}

Thread thread(const std::string& comm, SchedPolicy policy, int priority) {
    Thread t;
    t.comm = comm;
    t.policy = policy;
    t.rt_priority = priority;
    return t;
}

} // namespace

TEST_CASE("MPD's expectation: its rtio and output threads at fifo 40, LimitRTPRIO 40") {
    core::ServiceTuning mpd = service("mpd");
    mpd.limit_memlock = "64M";
    Expectation e = expect(profile_with({mpd}), k_cores, k_apps, {debian_kernel()});
    REQUIRE(e.services.size() == 1);
    const ServiceExpectation& s = e.services[0];
    CHECK(s.unit == "mpd.service");
    CHECK(s.app_name == "MPD");
    CHECK(s.cpus == core::CpuList({2, 3}));
    CHECK_FALSE(s.unit_sched);
    CHECK(s.app_sched == ThreadSched{SchedPolicy::fifo, 40});
    CHECK(s.min_rtprio == 40);
    CHECK(s.memlock == LimitValue{false, 64u << 20});
    CHECK(s.audio_priority() == 40);
    CHECK(s.is_audio_thread(thread("output:Heed Aba", SchedPolicy::fifo, 40)));
    CHECK(s.is_audio_thread(thread("rtio", SchedPolicy::other, 0))); // by name; judged elsewhere
    CHECK_FALSE(s.is_audio_thread(thread("decoder:flac", SchedPolicy::fifo, 40)));
}

TEST_CASE("the planned kernel parameters are the ones apply plans") {
    Expectation e = expect(profile_with({}), k_cores, k_apps, {debian_kernel()});
    std::string tokens;
    for (const boot::KernelParam& p : e.kernel_params)
        tokens += p.token() + " ";
    CHECK(tokens == "isolcpus=managed_irq,domain,2-3 nohz_full=2-3 rcu_nocbs=2-3 irqaffinity=0-1 ");
    REQUIRE(e.param("nohz_full"));
    CHECK_FALSE(e.param("threadirqs"));

    // Without a kernel config, nohz_full= and rcu_nocbs= are not planned (missing_config
    // 'require', the default).
    Expectation unknown = expect(profile_with({}), k_cores, k_apps, {});
    CHECK_FALSE(unknown.param("nohz_full"));
    CHECK(unknown.param("isolcpus"));
}

TEST_CASE("an app without thread names counts its threads at its priority or above") {
    Expectation e = expect(profile_with({service("pipewire")}), k_cores, k_apps, {});
    const ServiceExpectation& s = e.services[0];
    CHECK(s.app_sched == ThreadSched{SchedPolicy::fifo, 83});
    CHECK(s.is_audio_thread(thread("data-loop.0", SchedPolicy::fifo, 88)));
    CHECK_FALSE(s.is_audio_thread(thread("pipewire", SchedPolicy::fifo, 20)));
}

TEST_CASE("a unit-wide real-time policy is the audio priority of an unknown app") {
    core::ServiceTuning player = service("player");
    player.policy = core::SchedPolicy::rr;
    player.priority = 30;
    player.limit_rtprio = 30;
    player.cpus = core::CpuTarget{core::CpuTargetKind::list, core::CpuList({3})};
    Expectation e = expect(profile_with({player}), k_cores, k_apps, {});
    const ServiceExpectation& s = e.services[0];
    CHECK(s.app_name == "player.service");
    CHECK(s.unit_sched == ThreadSched{SchedPolicy::rr, 30});
    CHECK_FALSE(s.app_sched);
    CHECK(s.audio_priority() == 30);
    CHECK(s.min_rtprio == 30);
    CHECK(s.cpus == core::CpuList({3}));
    CHECK(s.is_audio_thread(thread("player", SchedPolicy::rr, 30)));
    CHECK(to_string(*s.unit_sched) == "rr 30");
    CHECK(to_string(ThreadSched{SchedPolicy::batch, 0}) == "batch");
}

TEST_CASE("the IRQ layout's kernel threads: the sound path's, the others', the timer threads'") {
    core::ServiceTuning mpd = service("mpd");
    core::Profile p = profile_with({mpd});
    p.tuning.irqs.sound.mode = core::IrqPriority::Mode::automatic;
    p.tuning.housekeeping_workqueues = true;
    const Expectation e = expect(p, k_cores, k_apps, {debian_kernel()});
    REQUIRE(e.irqs);
    CHECK(e.housekeeping_workqueues);
    const std::set<unsigned> sound = {33};
    // one above MPD's fifo 40, one below it, the timer threads one above the sound path
    CHECK(e.planned_kernel_thread("irq/33-xhci_hcd", sound) == ThreadSched{SchedPolicy::fifo, 41});
    CHECK(e.planned_kernel_thread("irq/40-eth0", sound) == ThreadSched{SchedPolicy::fifo, 39});
    CHECK(e.planned_kernel_thread("ktimers/2", sound) == ThreadSched{SchedPolicy::fifo, 42});
    CHECK_FALSE(e.planned_kernel_thread("ksoftirqd/2", sound));
    // timer_threads: false leaves ktimers/N alone; no tuning.irqs leaves every thread alone
    p.tuning.irqs.timer_threads = false;
    CHECK_FALSE(expect(p, k_cores, k_apps, {}).planned_kernel_thread("ktimers/2", sound));
    p.tuning.irqs.sound.mode = core::IrqPriority::Mode::leave;
    CHECK_FALSE(expect(p, k_cores, k_apps, {}).planned_kernel_thread("irq/33-xhci_hcd", sound));
}
