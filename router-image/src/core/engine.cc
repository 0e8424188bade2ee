#include "core/engine.hh"

#include <sched.h>
#include <sys/prctl.h>
#include <time.h>

#include <algorithm>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <utility>

#include "core/packet_pool.hh"

namespace xcprouter {

namespace {

// What the port's emulated ingress queue holds, in frames: its receive ring
// holds at least that (RxRing::slots_for), so no frame the model would queue
// is lost before it. 0 when the link is emulated at the peer's egress, which
// paces what arrives here.
uint64_t ring_hold_packets(const PortConfig& pc) {
  if (!pc.ingress) return 0;
  const QueueLimit& l = pc.ingress->queue.limit;
  return RxRing::frames_held(l.packets, l.bytes);
}

double process_cpu_seconds() {
  timespec ts{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

xcp::Duration process_cpu_time() {
  timespec ts{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return xcp::Duration::nanoseconds(static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec);
}

// Below the kernel's real-time budget by this much: the budget is checked once
// per WaitPolicy::kBudgetWindow (10 ms), and the wake-ups of the sleeps that bring
// the engine back under the cap cost CPU themselves.
constexpr double kRtBudgetMargin = 0.05;

// The CPU cap of a SCHED_FIFO engine (wait_policy.hh): the kernel's real-time
// budget less the margin; 1.0 (none) at normal priority, or when the budget is
// unlimited (sched_rt_runtime_us = -1) or cannot be read.
double rt_cpu_cap(int sched_priority) {
  if (sched_priority <= 0) return 1.0;
  auto read_us = [](const char* path) -> long long {
    std::ifstream in(path);
    long long v = 0;
    return (in >> v) ? v : -1;
  };
  const long long runtime = read_us("/proc/sys/kernel/sched_rt_runtime_us");
  const long long period = read_us("/proc/sys/kernel/sched_rt_period_us");
  if (runtime < 0 || period <= 0 || runtime >= period) return 1.0;
  const double cap = static_cast<double>(runtime) / static_cast<double>(period) - kRtBudgetMargin;
  return std::clamp(cap, WaitPolicy::kMinCpuCap, 1.0);
}

// Bucket counts with their upper bounds: the orchestrator subtracts samples
// to get the distribution per interval and sums them over the run.
nlohmann::json histogram_json(const xcp::LatenessHistogram& h) {
  return {{"bounds_us", xcp::LatenessHistogram::kBoundsUs},
          {"counts", h.counts()},
          {"total", h.total()},
          {"max_us", h.max().us()}};
}

}  // namespace

Engine::Engine(const EngineConfig& config, const xcp::MonotonicClock& clock)
    : clock_(clock), loop_(clock), busy_poll_(config.busy_poll), policy_(config.spin, config.cpu_cap.value_or(rt_cpu_cap(config.sched_priority))), lateness_threshold_(config.lateness_threshold) {
  loop_.set_lateness_threshold(config.lateness_threshold);
  // The default 50 us timer slack would blur every timerfd deadline.
  xcp::check_syscall("prctl(PR_SET_TIMERSLACK)", ::prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL));
  if (config.sched_priority > 0) {
    sched_param sp{};
    sp.sched_priority = config.sched_priority;
    xcp::check_syscall("sched_setscheduler(SCHED_FIFO, " + std::to_string(config.sched_priority) + ")",
                       ::sched_setscheduler(0, SCHED_FIFO, &sp));
  }
  // Every port of every router is opened at once: open_many overlaps the kernel's
  // ring set-ups (a 1000-port engine took 17 s opening them one after another), and
  // each receive ring is sized from its link's rate (RxRing::slots_for: 10 ms of
  // frames at the port's receive rate, and at least what its emulated ingress
  // queue holds, bounded) instead of 4 MiB per port.
  std::vector<PortRequest> requests;
  for (const RouterConfig& rc : config.routers) {
    for (const PortConfig& pc : rc.ports) requests.push_back(PortRequest{rc.netns, pc.ifname, pc.rx_rate(), ring_hold_packets(pc)});
  }
  std::vector<std::unique_ptr<Port>> opened = Port::open_many(requests);
  size_t next_port = 0;
  uint64_t port_index = 0;
  for (const RouterConfig& rc : config.routers) {
    RouterConfig resolved = rc;
    std::vector<std::unique_ptr<Port>> ports;
    for (PortConfig& pc : resolved.ports) {
      ports.push_back(std::move(opened[next_port++]));
      const MacAddress actual = ports.back()->mac();
      if (pc.mac && !(*pc.mac == actual)) {
        throw std::runtime_error("router " + rc.name + " port " + pc.name + ": configured mac " +
                                 pc.mac->to_string() + " but interface " + pc.ifname + " has " + actual.to_string());
      }
      pc.mac = actual;
    }
    std::vector<PacketSink*> tx;
    for (auto& p : ports) tx.push_back(p.get());
    routers_.push_back(std::make_unique<Router>(resolved, config.seed, port_index, tx));
    routers_.back()->set_lateness_threshold(config.lateness_threshold);
    port_index += resolved.ports.size();
    ports_.push_back(std::move(ports));
  }
  bind_xcpi_oracles(config);
  set_ports_in_epoll(true);
  // Enough buffers for full queues to start without touching malloc mid-run.
  PacketPool::reserve(4096);
  handler_ = std::make_unique<ControlHandler>(
      routers_, clock_, config.run, [this] { return fidelity_json(); }, [this] {
        // Every 250 us, not at every port: a pass over all ports and links has
        // its own cost, and a link event 0.25 ms late is well within tolerance.
        if (clock_.now() - last_service_ >= kControlYieldEvery) service_links();
      });
  // Created last: the socket file appearing means the engine is ready.
  control_ = std::make_unique<ControlServer>(loop_, config.control_socket, [this](const std::string& line) {
    auto answer = handler_->handle(line);
    // The request may have changed any link (delay, capacity, up): what is
    // due next and the smallest delay are read afresh.
    upcoming_.reset();
    min_link_delay_stale_ = true;
    return answer;
  });
  started_ = clock_.now();
  cpu_at_start_ = process_cpu_seconds();
}

Engine::~Engine() {
  // Members' own order (control, handler, routers, then ports), the ports in parallel.
  control_.reset();
  handler_.reset();
  routers_.clear();
  std::vector<std::unique_ptr<Port>> all;
  for (auto& router_ports : ports_) {
    for (auto& p : router_ports) all.push_back(std::move(p));
  }
  ports_.clear();
  Port::close_many(all);
}

void Engine::bind_xcpi_oracles(const EngineConfig& config) {
  // The config loader checked that every named router, port and direction exists.
  auto router_named = [&](const std::string& name) -> Router& {
    for (auto& r : routers_) {
      if (r->name() == name) return *r;
    }
    throw std::runtime_error("xcpi oracle: no router " + name);
  };
  for (size_t i = 0; i < config.routers.size(); ++i) {
    const auto& x = config.routers[i].xcpi;
    if (!x || !routers_[i]->xcpi()) continue;
    for (const OraclePath& path : x->oracle.paths) {
      std::vector<const Link*> links;
      for (const LinkRef& l : path.links) {
        Router& owner = router_named(l.router);
        const int k = owner.find_port(l.port);
        if (k < 0) throw std::runtime_error("xcpi oracle: router " + l.router + " has no port " + l.port);
        const Link* link = l.ingress ? owner.ingress(static_cast<size_t>(k)) : &owner.egress(static_cast<size_t>(k));
        if (!link) throw std::runtime_error("xcpi oracle: port " + l.port + " has no ingress link");
        links.push_back(link);
      }
      routers_[i]->xcpi()->bind_oracle(path.upstream, std::move(links));
    }
  }
}

void Engine::on_port_readable(size_t r, size_t p) {
  // Reading one port alone would offer its frames ahead of earlier ones
  // waiting on another port: every readable port is drained, in time order.
  if (read_ports() == 0) ports_[r][p]->clear_error();  // readable, nothing to read: an error
}

void Engine::deliver_frame(size_t r, size_t p, PacketPtr pkt, bool for_us, xcp::Timestamp arrival) {
  routers_[r]->receive(static_cast<uint16_t>(p), std::move(pkt), arrival, for_us);
}

size_t Engine::read_ports() {
  const ClockSample s = ClockSample::now();
  // Links measure their lateness against the engine's clock, not the older
  // arrival times offered to them; noted once, when there is something to read.
  bool noted = false;
  auto note_wall_time = [&] {
    if (noted) return;
    noted = true;
    for (auto& r : routers_) r->note_wall_time(s.monotonic);
  };
  size_t n = 0;
  // Ring ports: a merge by kernel arrival time, so a link fed by several
  // ports sees its arrivals in order. Frames that arrived after the sample
  // wait for the next round (the bound also keeps one round finite).
  while (n < kMaxFramesPerRead) {
    size_t best_r = 0, best_p = 0;
    std::optional<xcp::Timestamp> best, second;
    for (size_t r = 0; r < ports_.size(); ++r) {
      for (size_t p = 0; p < ports_[r].size(); ++p) {
        const std::optional<xcp::Timestamp> t = ports_[r][p]->next_arrival(s);
        if (!t) continue;
        if (!best || *t < *best) {
          second = best;
          best = t;
          best_r = r;
          best_p = p;
        } else if (!second || *t < *second) {
          second = t;
        }
      }
    }
    if (!best) break;
    note_wall_time();
    // Take the earliest port's frames up to the next port's first one.
    Port& port = *ports_[best_r][best_p];
    do {
      port.receive_one(s, [&](PacketPtr pkt, bool for_us, xcp::Timestamp at) {
        deliver_frame(best_r, best_p, std::move(pkt), for_us, at);
      });
      ++n;
      const std::optional<xcp::Timestamp> next = port.next_arrival(s);
      if (!next || (second && *next > *second)) break;
    } while (n < kMaxFramesPerRead);
  }
  // recvmmsg fallback ports (no kernel stamps): one batch each, stamped now.
  for (size_t r = 0; r < ports_.size(); ++r) {
    for (size_t p = 0; p < ports_[r].size(); ++p) {
      if (ports_[r][p]->uses_rx_ring()) continue;
      note_wall_time();
      n += ports_[r][p]->receive(s, [&](PacketPtr pkt, bool for_us, xcp::Timestamp at) {
        deliver_frame(r, p, std::move(pkt), for_us, at);
      });
    }
  }
  if (n > 0) last_rx_ = s.monotonic;
  last_read_ = s.monotonic;
  return n;
}

xcp::Timestamp Engine::next_deadline() const {
  xcp::Timestamp t = xcp::Timestamp::max();
  for (const auto& r : routers_) t = std::min(t, r->next_deadline());
  return t;
}

xcp::Timestamp Engine::next_delivery() const {
  xcp::Timestamp t = xcp::Timestamp::max();
  for (const auto& r : routers_) t = std::min(t, r->next_delivery());
  return t;
}

void Engine::service() {
  service_links();
  control_->flush_pending();
}

void Engine::service_links() {
  last_service_ = clock_.now();
  // Frames that arrived before `now` are offered before any link event due
  // by `now` runs: a control interval ending at t must count every arrival
  // before t (Link::offer runs the events due before each arrival first).
  read_ports();
  xcp::Timestamp now = clock_.now();
  // Deliveries between routers of this process can make other links due at
  // once; bounded so a pathological config cannot starve the sockets.
  // Each round reads what is due next in the same pass (Router::advance).
  for (int round = 0; round < 8; ++round) {
    Router::Upcoming next;
    for (auto& r : routers_) {
      const Router::Upcoming u = r->advance(now);
      next.deadline = std::min(next.deadline, u.deadline);
      next.delivery = std::min(next.delivery, u.delivery);
    }
    upcoming_ = next;
    if (next.deadline > now) break;
  }
  for (auto& ports : ports_) {
    for (auto& p : ports) {
      if (p->has_pending_tx()) p->flush();
    }
  }
}

void Engine::set_ports_in_epoll(bool in) {
  if (ports_in_epoll_ == in) return;
  ports_in_epoll_ = in;
  for (size_t r = 0; r < ports_.size(); ++r) {
    for (size_t p = 0; p < ports_[r].size(); ++p) {
      if (in) {
        loop_.add_reader(ports_[r][p]->fd(), [this, r, p] { on_port_readable(r, p); });
      } else {
        loop_.remove_reader(ports_[r][p]->fd());
      }
    }
  }
}

bool Engine::poll_ports() { return read_ports() > 0; }

xcp::Duration Engine::rx_defer() {
  if (min_link_delay_stale_) {
    min_link_delay_ = xcp::Duration::infinite();
    for (const auto& r : routers_) min_link_delay_ = std::min(min_link_delay_, r->min_link_delay());
    min_link_delay_stale_ = false;
  }
  return policy_.rx_defer(min_link_delay_);
}

void Engine::spin_until(xcp::Timestamp until, bool watch_ports) {
  const xcp::Timestamp start = clock_.now();
  ++spin_turns_;
  for (xcp::Timestamp now = start; now < until; now = clock_.now()) {
    if (watch_ports && poll_ports()) break;
  }
  spin_time_ += clock_.now() - start;
}

void Engine::run() {
  stopped_ = false;
  while (!stopped_) {
    if (busy_poll_) {
      ++spin_turns_;
      set_ports_in_epoll(false);
      poll_ports();
      loop_.run_once(xcp::Duration::zero());  // control socket, signals
      service();
      continue;
    }
    const xcp::Timestamp now = clock_.now();
    if (policy_.cpu_sample_due(now)) policy_.note_cpu(now, process_cpu_time());
    // Every turn ends in service(), whose last pass over the links left what
    // is due next in upcoming_; the first turn reads it afresh.
    if (!upcoming_) upcoming_ = Router::Upcoming{next_deadline(), next_delivery()};
    const xcp::Timestamp deadline = upcoming_->deadline;
    // While traffic flows, the rings are read when the engine wakes for an
    // event, and at least every `defer`: no wake-up per frame (wait_policy.hh
    // says why that changes nothing the emulation emits).
    const xcp::Duration defer = rx_defer();
    const bool deferring = defer > xcp::Duration::zero() && now - last_rx_ <= kFlowingFor;
    // Deferring, the engine also sleeps through the events that emit nothing
    // (serialisation ends, qdisc deadlines): the reads every `defer` run them
    // at most that late, and what they put in a delay line leaves at least
    // 2 x defer later, on time.
    xcp::Timestamp event = deadline;
    if (deferring) event = upcoming_->delivery;
    const xcp::Timestamp target = deferring ? std::min(event, last_read_ + defer) : event;
    const WaitPlan plan = policy_.plan(now, target);
    if (!plan.spin) {
      set_ports_in_epoll(!deferring);
      // Frames that arrived while the ports were out of the set: level-
      // triggered epoll would report them, but reading them now is cheaper.
      if (!deferring && poll_ports()) {
        service();
        continue;
      }
      ++sleep_turns_;
      loop_.run_once(plan.wake_at == xcp::Timestamp::max() ? xcp::Duration::infinite() : plan.wake_at - now);
      const xcp::Timestamp woke = clock_.now();
      if (woke < plan.wake_at) {
        service();  // a frame or the control socket woke us
        continue;
      }
      policy_.record_wake(plan.wake_at, woke);
      // Within the expected latency of the target now: spun below.
    }
    spin_until(target, !deferring);
    const xcp::Timestamp at = clock_.now();
    if (target == event && at >= event) {
      const xcp::Duration late = at - event;
      wake_lateness_.record(late);
      if (late > lateness_threshold_) ++late_wakes_;
    }
    loop_.run_once(xcp::Duration::zero());  // control socket, signals
    service();
  }
}

nlohmann::json Engine::fidelity_json() {
  uint64_t late_events = 0;
  xcp::LatenessHistogram events;
  for (const auto& r : routers_) {
    for (size_t p = 0; p < r->port_count(); ++p) {
      for (const Link* l : {&std::as_const(*r).egress(p), std::as_const(*r).ingress(p)}) {
        if (!l) continue;
        late_events += l->counters().late_events;
        events.merge(l->counters().lateness);
      }
    }
  }
  uint64_t tx_errors = 0, rx_truncated = 0, rx_socket_drops = 0, socket_errors = 0, stamps_clamped = 0;
  size_t rx_rings = 0, ports = 0;
  for (auto& router_ports : ports_) {
    for (auto& p : router_ports) {
      p->update_socket_stats();
      const PortIoCounters c = p->io_counters();
      tx_errors += c.tx_errors;
      rx_truncated += c.rx_truncated;
      rx_socket_drops += c.rx_socket_drops;
      socket_errors += c.socket_errors;
      rx_rings += p->uses_rx_ring() ? 1 : 0;
      stamps_clamped += p->arrival_stamps_clamped();
      ++ports;
    }
  }
  const double wall = (clock_.now() - started_).seconds_f();
  const double cpu = process_cpu_seconds() - cpu_at_start_;
  // The engine's timers are its waits for link events (run()).
  return {{"late_timers", late_wakes_},
          {"max_lateness_us", wake_lateness_.max().us()},
          {"late_events", late_events},
          {"max_event_lateness_us", events.max().us()},
          {"timer_lateness", histogram_json(wake_lateness_)},
          {"event_lateness", histogram_json(events)},
          {"busy_poll", busy_poll_},
          {"spin_us", policy_.spin_max().us()},
          {"wake_latency_us", policy_.wake_latency().us()},
          {"spin_turns", spin_turns_},
          {"spin_seconds", spin_time_.seconds_f()},
          {"sleep_turns", sleep_turns_},
          {"cpu_cap", policy_.cpu_cap()},
          {"windows_over_cpu_cap", policy_.windows_over_budget()},
          {"cpu_seconds", cpu},
          {"wall_seconds", wall},
          {"busy_fraction", wall > 0 ? cpu / wall : 0.0},
          {"tx_errors", tx_errors},
          {"rx_truncated", rx_truncated},
          {"rx_socket_drops", rx_socket_drops},
          {"socket_errors", socket_errors},
          {"rx_ring_ports", rx_rings},
          {"arrival_stamps_clamped", stamps_clamped},
          {"ports", ports},
          {"packet_buffers", PacketPool::allocated_blocks()}};
}

}  // namespace xcprouter
