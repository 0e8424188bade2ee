// Classic RED (Floyd & Jacobson, "Random Early Detection Gateways for
// Congestion Avoidance", IEEE/ACM ToN 1993) with Floyd's gentle mode (2000):
//  - avg ← (1 − w_q)·avg + w_q·q at every arrival to a non-empty queue;
//    after an idle period, avg ← (1 − w_q)^m·avg with m = idle time / the
//    transmission time of a typical packet at the link capacity;
//  - min_th ≤ avg < max_th: p_b = max_p·(avg − min_th)/(max_th − min_th),
//    spaced by the count since the last drop, p_a = p_b/(1 − count·p_b);
//  - gentle: max_th ≤ avg < 2·max_th: p_b rises linearly from max_p to 1;
//    otherwise (or beyond 2·max_th) every arrival is dropped.
// Thresholds and the averaged queue are in packets or in bytes
// (thresh_unit); decisions use a seeded RNG.
#pragma once

#include "qdisc/qdisc.hh"
#include "xcp/uniform_rng.hh"

namespace xcprouter {

struct RedParams {
  double min_th = 5;              // packets (or bytes)
  double max_th = 15;             // packets (or bytes); Floyd: ≥ 2·min_th
  double max_p = 0.1;             // p_b at max_th
  double w_q = 0.002;             // EWMA weight (Floyd's recommendation)
  bool gentle = true;
  bool bytes = false;             // thresholds and queue measured in bytes
  double mean_packet_bytes = 1000;  // "typical packet" for idle-time decay
};

class Red final : public Qdisc {
 public:
  Red(QueueLimit limit, RedParams params, uint64_t seed);

  std::string_view kind() const override { return "red"; }
  void report(nlohmann::json& out) const override;
  // Live params (QUEUES.md "red"); validated as a whole.
  void configure(const nlohmann::json& params) override;

  // The base drop probability p_b for an average queue (before count spacing).
  static double base_probability(double avg, const RedParams& k);

  double avg() const { return avg_; }
  const RedParams& params() const { return params_; }

 protected:
  bool do_enqueue(PacketPtr& p, xcp::Timestamp now, DropCause& cause) override;
  PacketPtr do_dequeue(xcp::Timestamp now) override;

 private:
  void update_average(xcp::Timestamp now);

  RedParams params_;
  UniformRng rng_;
  double avg_ = 0;
  int64_t count_ = -1;             // arrivals since the last drop (−1: below min_th)
  bool idle_ = true;               // queue empty since idle_since_
  xcp::Timestamp idle_since_{};
  uint64_t early_drops_ = 0, forced_drops_ = 0;
};

// Parses RED params (QUEUES.md) on top of `base`; throws naming the field.
RedParams parse_red_params(const nlohmann::json& params, RedParams base);

}  // namespace xcprouter
