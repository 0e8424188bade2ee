// The XCP–TCP fairness dropper of one XCP port (docs/protocol.md §6, seed 004),
// plugged into XcpQdisc as an XcpStage.
//
// On every arrival: classify (flow_class.hh); an XCP or TCP packet is, with
// probability `inspect`, probed against its class's own zombie table and
// feeds its class's hit rate (N ≈ 1/P_XCP, M ≈ 1/P_TCP); a TCP packet then
// updates p_drop (per-packet cadence) and is dropped with probability
// p_drop while the mechanism is active (XcpQdisc counts it as
// DropCause::kFairness). At each control timeout the interval's XCP input
// rate and the activation condition go to the DropController.
//
// One table per class, not one shared table: in a shared table each class's
// hit probability is (its flows' share of the table)/(its flow count), so
// with every flow at an equal rate both classes estimate N + M flows and
// BW_XCP comes out as O/2 whatever N and M are (test/fairness_stage_test.cc:
// 10 XCP + 3 TCP, shared 0.49 vs per class 0.77 = 10/13).
//
// O in BW_XCP = O·N/(N+M) is the C the port's XCP controller uses (the link
// rate, or the queue's capacity_bps override).
#pragma once

#include <cstdint>

#include <nlohmann/json.hpp>

#include "fairness/drop_controller.hh"
#include "fairness/fairness_params.hh"
#include "fairness/flow_class.hh"
#include "fairness/hit_rate.hh"
#include "fairness/zombie_table.hh"
#include "xcp/spare_bandwidth.hh"
#include "xcp/uniform_rng.hh"
#include "xcp/xcp_stage.hh"

namespace xcprouter {

struct FairnessCounters {
  uint64_t xcp_packets = 0, tcp_packets = 0;  // arrivals per class
  uint64_t inspected = 0;                     // probes of a zombie table (both classes)
  uint64_t drops = 0;                         // TCP packets this stage dropped
};

class FairnessStage final : public XcpStage {
 public:
  FairnessStage(const FairnessParams& k, const LinkSpareBandwidth& capacity, uint64_t seed);

  // Live change (XcpQdisc::configure). A new table size starts empty tables
  // and hit rates; everything else keeps the estimates and p_drop.
  void set_params(const FairnessParams& k);

  bool on_arrival(Packet& p, xcp::Timestamp now) override;
  void on_timeout(const IntervalState& port, double elapsed_s) override;
  void report(nlohmann::json& out) const override;

  double xcp_flows() const { return xcp_hits_.flows(); }
  double tcp_flows() const { return tcp_hits_.flows(); }
  // O·N/(N+M), bytes/s; O when no TCP class was ever seen.
  double bw_xcp() const;
  const DropController& controller() const { return drop_; }
  const FairnessCounters& counters() const { return counters_; }
  const FairnessParams& params() const { return k_; }

 private:
  FairnessParams k_;
  const LinkSpareBandwidth& capacity_;
  UniformRng rng_;
  ZombieTable xcp_table_, tcp_table_;
  HitRate xcp_hits_, tcp_hits_;
  DropController drop_;
  bool tcp_seen_ = false;
  // The running measurement window (one or more control intervals).
  double window_elapsed_ = 0, y_bytes_ = 0, xcp_bytes_ = 0, tcp_bytes_ = 0;
  bool saw_xcp_ = false, saw_tcp_ = false;
  // The last completed window (bytes/s), for the report.
  double y_ = 0, xcp_rate_ = 0, tcp_rate_ = 0;
  FairnessCounters counters_;
};

}  // namespace xcprouter
