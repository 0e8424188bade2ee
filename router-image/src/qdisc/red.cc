#include "qdisc/red.hh"

#include <cmath>
#include <stdexcept>

#include "contract_bounds.hh"
#include "qdisc/param_reader.hh"

namespace xcprouter {

Red::Red(QueueLimit limit, RedParams params, uint64_t seed) : Qdisc(limit), params_(params), rng_(seed) {}

double Red::base_probability(double avg, const RedParams& k) {
  if (avg < k.min_th) return 0.0;
  if (avg < k.max_th) return k.max_p * (avg - k.min_th) / (k.max_th - k.min_th);
  if (k.gentle && avg < 2 * k.max_th) return k.max_p + (1 - k.max_p) * (avg - k.max_th) / k.max_th;
  return 1.0;
}

void Red::update_average(xcp::Timestamp now) {
  const double q = params_.bytes ? static_cast<double>(bytes()) : static_cast<double>(packets());
  if (idle_) {
    // The queue was empty: decay avg as if m small packets had arrived to an
    // empty queue during the idle time (Floyd & Jacobson §4).
    const double c = capacity().bytes_per_s();
    if (c > 0) {
      const double m = (now - idle_since_).seconds_f() * c / params_.mean_packet_bytes;
      avg_ *= std::pow(1 - params_.w_q, m);
    }
    idle_since_ = now;  // decayed up to now; a drop below keeps it idle from here
    idle_ = false;
  } else {
    avg_ = (1 - params_.w_q) * avg_ + params_.w_q * q;
  }
}

bool Red::do_enqueue(PacketPtr& p, xcp::Timestamp now, DropCause& cause) {
  update_average(now);
  const double pb = base_probability(avg_, params_);
  bool drop = false;
  if (pb <= 0) {
    count_ = -1;
  } else if (pb >= 1) {
    drop = true;  // beyond max_th (or 2·max_th in gentle mode): forced
    ++forced_drops_;
  } else {
    ++count_;
    // Uniformly spaced drops: p_a grows with the arrivals since the last one.
    const double denom = 1 - static_cast<double>(count_) * pb;
    const double pa = denom <= 0 ? 1.0 : pb / denom;
    drop = rng_.next() < pa;
    if (drop) ++early_drops_;
  }
  if (drop) {
    count_ = 0;
    cause = DropCause::kEarly;
    if (packets() == 0) idle_ = true;  // still idle, measured on from now
    return false;
  }
  if (would_overflow(*p)) {
    cause = DropCause::kOverflow;
    if (packets() == 0) idle_ = true;
    return false;
  }
  fifo_.push_back(std::move(p));
  return true;
}

PacketPtr Red::do_dequeue(xcp::Timestamp now) {
  if (fifo_.empty()) return nullptr;
  PacketPtr p = std::move(fifo_.front());
  fifo_.pop_front();
  if (fifo_.empty()) {
    idle_ = true;
    idle_since_ = now;
  }
  return p;
}

void Red::report(nlohmann::json& out) const {
  out["red"] = {{"avg", avg_},
                {"count", count_},
                {"p_b", base_probability(avg_, params_)},
                {"early_drops", early_drops_},
                {"forced_drops", forced_drops_},
                {"min_th", params_.min_th},
                {"max_th", params_.max_th},
                {"max_p", params_.max_p},
                {"w_q", params_.w_q},
                {"gentle", params_.gentle},
                {"thresh_unit", params_.bytes ? "bytes" : "packets"}};
}

void Red::configure(const nlohmann::json& params) { params_ = parse_red_params(params, params_); }

RedParams parse_red_params(const nlohmann::json& params, RedParams k) {
  ParamReader r(params, "queue.params");
  if (auto u = r.choice("thresh_unit", {"packets", "bytes"})) {
    const bool to_bytes = *u == "bytes";
    if (to_bytes != k.bytes && (!params.contains("min_th") || !params.contains("max_th"))) {
      throw std::invalid_argument(r.field("thresh_unit") + ": changing the unit to \"" + *u +
                                  "\" needs min_th and max_th in that unit too");
    }
    k.bytes = to_bytes;
  }
  k.min_th = r.number_or("min_th", k.min_th, bounds::kRedMinTh);
  k.max_th = r.number_or("max_th", k.max_th, bounds::kRedMaxTh);
  k.max_p = r.number_or("max_p", k.max_p, bounds::kRedMaxP);
  k.w_q = r.number_or("w_q", k.w_q, bounds::kRedWQ);
  if (auto g = r.boolean("gentle")) k.gentle = *g;
  k.mean_packet_bytes = r.number_or("mean_packet_bytes", k.mean_packet_bytes, bounds::kRedMeanPacketBytes);
  r.finish();
  if (!(k.max_th > k.min_th)) {
    throw std::invalid_argument(r.field("max_th") + ": must be greater than min_th (" + std::to_string(k.min_th) +
                                "), got " + std::to_string(k.max_th));
  }
  return k;
}

}  // namespace xcprouter
