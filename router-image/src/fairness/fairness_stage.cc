#include "fairness/fairness_stage.hh"

namespace xcprouter {

namespace {
// Decorrelates this stage's draws from the XCP controller's (same port seed).
constexpr uint64_t kSeedSalt = 0xfa12'0e55'5eed'0004ULL;
}  // namespace

FairnessStage::FairnessStage(const FairnessParams& k, const LinkSpareBandwidth& capacity, uint64_t seed)
    : k_(k),
      capacity_(capacity),
      rng_(seed ^ kSeedSalt),
      xcp_table_(k.zombie_entries, k.replacement_probability()),
      tcp_table_(k.zombie_entries, k.replacement_probability()),
      xcp_hits_(k.delta),
      tcp_hits_(k.delta),
      drop_(k) {}

void FairnessStage::set_params(const FairnessParams& k) {
  if (k.zombie_entries != k_.zombie_entries) {
    xcp_table_ = ZombieTable(k.zombie_entries, k.replacement_probability());
    tcp_table_ = ZombieTable(k.zombie_entries, k.replacement_probability());
    xcp_hits_.reset();
    tcp_hits_.reset();
  }
  k_ = k;
  xcp_table_.set_replacement(k.replacement_probability());
  tcp_table_.set_replacement(k.replacement_probability());
  xcp_hits_.set_delta(k.delta);
  tcp_hits_.set_delta(k.delta);
  drop_.set_params(k);
}

double FairnessStage::bw_xcp() const {
  const double o = capacity_.capacity();
  if (!tcp_seen_) return o;
  const double n = xcp_hits_.flows(), m = tcp_hits_.flows();
  return n + m > 0 ? o * n / (n + m) : o;
}

bool FairnessStage::on_arrival(Packet& p, xcp::Timestamp) {
  const FlowClass c = classify(p);
  if (c == FlowClass::kOther) return true;
  const bool inspect = k_.inspect >= 1.0 || rng_.next() < k_.inspect;
  if (c == FlowClass::kXcp) {
    ++counters_.xcp_packets;
    xcp_bytes_ += p.wire_bytes();
    saw_xcp_ = true;
    if (inspect) {
      ++counters_.inspected;
      if (auto hit = xcp_table_.probe(p.flow, rng_)) xcp_hits_.add(*hit);
    }
    return true;
  }
  ++counters_.tcp_packets;
  tcp_bytes_ += p.wire_bytes();
  saw_tcp_ = true;
  tcp_seen_ = true;
  if (inspect) {
    ++counters_.inspected;
    if (auto hit = tcp_table_.probe(p.flow, rng_)) tcp_hits_.add(*hit);
  }
  if (!drop_.active()) return true;
  drop_.on_tcp_packet(bw_xcp());
  if (drop_.drop(rng_.next())) {
    ++counters_.drops;
    return false;
  }
  return true;
}

void FairnessStage::on_timeout(const IntervalState& port, double elapsed_s) {
  const double t = elapsed_s > 0 ? elapsed_s : 0;
  window_elapsed_ += t;
  y_bytes_ += port.y * t;
  if (window_elapsed_ < k_.window_s) return;  // the window goes on
  const double w = window_elapsed_;
  y_ = w > 0 ? y_bytes_ / w : port.y;
  xcp_rate_ = w > 0 ? xcp_bytes_ / w : 0;
  tcp_rate_ = w > 0 ? tcp_bytes_ / w : 0;
  drop_.on_interval({.input_rate = y_, .capacity = capacity_.capacity(), .xcp_rate = xcp_rate_,
                     .saw_xcp = saw_xcp_, .saw_tcp = saw_tcp_},
                    bw_xcp());
  window_elapsed_ = y_bytes_ = xcp_bytes_ = tcp_bytes_ = 0;
  saw_xcp_ = saw_tcp_ = false;
}

void FairnessStage::report(nlohmann::json& out) const {
  const auto& dc = drop_.counters();
  out["tcp_fairness"] = {
      {"active", drop_.active() ? 1 : 0},  // a number: the sampler keeps numbers only
      {"p_drop", drop_.p_drop()},
      {"n_xcp", xcp_hits_.flows()},
      {"m_tcp", tcp_seen_ ? tcp_hits_.flows() : 0.0},
      {"p_hit_xcp", xcp_hits_.p()},
      {"p_hit_tcp", tcp_hits_.p()},
      {"bw_xcp", bw_xcp()},
      {"xcp_rate", xcp_rate_},
      {"tcp_rate", tcp_rate_},
      {"y", y_},
      {"C", capacity_.capacity()},
      {"drops", counters_.drops},
      {"xcp_packets", counters_.xcp_packets},
      {"tcp_packets", counters_.tcp_packets},
      {"inspected", counters_.inspected},
      {"table_filled_xcp", xcp_table_.filled()},
      {"table_filled_tcp", tcp_table_.filled()},
      {"increases", dc.increases},
      {"decreases", dc.decreases},
      {"activations", dc.activations},
      {"resets", dc.resets},
      {"update", std::string(to_string(k_.update))},
      {"inspect", k_.inspect},
      {"window_s", k_.window_s},
  };
}

}  // namespace xcprouter
