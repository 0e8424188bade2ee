// The process: one event loop hosting one or many routers. Opens every
// router's AF_PACKET sockets inside that router's network namespace, wires
// ports to routers, serves the control socket, and drives every link's
// events: sleeping until just before the next one and spinning the measured
// wake-up latency (core/wait_policy.hh), or by busy polling.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "control/control_handler.hh"
#include "control/control_server.hh"
#include "core/port.hh"
#include "core/router.hh"
#include "core/router_config.hh"
#include "core/wait_policy.hh"
#include "xcp/lateness_histogram.hh"
#include "xcp/clock.hh"
#include "xcp/event_loop.hh"

namespace xcprouter {

class Engine {
 public:
  // Throws (naming the router/port and the failed action) when a namespace,
  // interface or socket cannot be opened, or a configured MAC is wrong.
  Engine(const EngineConfig& config, const xcp::MonotonicClock& clock);
  // Closes every port at once (Port::close_many): one after another, each
  // close waits out kernel grace periods (7 s for 280 ports).
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Serves until stop() (e.g. from a signal fd reader on loop()).
  void run();
  void stop() { stopped_ = true; loop_.stop(); }
  xcp::EventLoop& loop() { return loop_; }

  // Not const: folds the sockets' kernel drop counters in.
  nlohmann::json fidelity_json();

 private:
  // Hands each XCP-i router the links its oracle paths name (same process).
  void bind_xcpi_oracles(const EngineConfig& config);
  void on_port_readable(size_t router, size_t port);
  // Reads every port: ring frames in kernel arrival order across ports, up
  // to those that arrived by the moment of the call. Returns the frames read.
  size_t read_ports();
  void deliver_frame(size_t router, size_t port, PacketPtr p, bool for_us, xcp::Timestamp arrival);
  // Reads the ports (arrivals first), then runs every link event due by now
  // (repeatedly: a delivery may make another link's event due) and flushes
  // transmit batches.
  void service();
  // service() without the control socket: safe to call from inside a control
  // request (the handler yields here between the ports of a stats answer).
  void service_links();
  xcp::Timestamp next_deadline() const;
  xcp::Timestamp next_delivery() const;
  // Registers (or removes) every port socket in the event loop's epoll set.
  void set_ports_in_epoll(bool in);
  // read_ports() outside epoll; true if anything arrived.
  bool poll_ports();
  // Spins until `until`; with watch_ports, returns early when frames arrived.
  void spin_until(xcp::Timestamp until, bool watch_ports);
  // How long arrivals may stay unread now (zero: wake on each arrival).
  xcp::Duration rx_defer();

  // Two rings full; one read round never runs unbounded under overload.
  static constexpr size_t kMaxFramesPerRead = 4096;
  // Traffic counts as flowing (arrivals are read on the engine's own
  // schedule, ports out of epoll) this long after the last frame; an idle
  // engine puts its ports back in epoll and sleeps until an event or frame.
  static constexpr xcp::Duration kFlowingFor = xcp::Duration::milliseconds(1);
  // Longest a control answer keeps the links waiting (stats for 62 link
  // directions took 2-8 ms to build before it yielded).
  static constexpr xcp::Duration kControlYieldEvery = xcp::Duration::microseconds(250);

  const xcp::MonotonicClock& clock_;
  xcp::EventLoop loop_;
  bool busy_poll_;
  WaitPolicy policy_;
  uint64_t spin_turns_ = 0, sleep_turns_ = 0;
  xcp::Duration spin_time_ = xcp::Duration::zero();  // wall time spent spinning
  xcp::Duration lateness_threshold_;
  uint64_t late_wakes_ = 0;
  // How late the engine got to each event deadline it waited for.
  xcp::LatenessHistogram wake_lateness_;
  xcp::Timestamp last_rx_{};
  xcp::Timestamp last_read_{};
  xcp::Timestamp last_service_{};
  bool ports_in_epoll_ = false;
  // What is due next, as service_links() left it (empty: read afresh).
  std::optional<Router::Upcoming> upcoming_;
  // Smallest link delay of all routers; stale after a control request.
  xcp::Duration min_link_delay_ = xcp::Duration::infinite();
  bool min_link_delay_stale_ = true;
  bool stopped_ = false;
  std::vector<std::vector<std::unique_ptr<Port>>> ports_;  // [router][port]
  std::vector<std::unique_ptr<Router>> routers_;
  std::unique_ptr<ControlHandler> handler_;
  std::unique_ptr<ControlServer> control_;
  xcp::Timestamp started_{};
  double cpu_at_start_ = 0.0;
};

}  // namespace xcprouter
