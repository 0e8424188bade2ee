#include "qdisc/xcp_qdisc.hh"

#include <algorithm>
#include <stdexcept>

#include "contract_bounds.hh"
#include "fairness/fairness_stage.hh"
#include "qdisc/param_reader.hh"

namespace xcprouter {

namespace {

std::unique_ptr<LinkSpareBandwidth> make_link_spare(LinkSpareBandwidth*& out) {
  auto s = std::make_unique<LinkSpareBandwidth>();
  out = s.get();
  return s;
}

}  // namespace

XcpQdisc::XcpQdisc(QueueLimit limit, XcpParams params, uint64_t seed, std::string_view kind)
    : XcpQdisc(
          limit,
          [&](std::unique_ptr<SpareBandwidth> s) { return std::make_unique<XcpController>(params, std::move(s), seed); },
          params, seed, kind) {}

XcpQdisc::XcpQdisc(QueueLimit limit, const LawMaker& make_law, const XcpParams& params, uint64_t seed,
                   std::string_view kind)
    : Qdisc(limit),
      kind_(kind),
      link_spare_(nullptr),
      controller_(make_law(make_link_spare(link_spare_))),
      pq_(params.min_queue_window),
      seed_(seed) {}

void XcpQdisc::set_capacity(xcp::Rate c) {
  Qdisc::set_capacity(c);
  if (capacity_override_ <= 0) link_spare_->set_capacity(c.bytes_per_s());
}

void XcpQdisc::start_timers(xcp::Timestamp now) {
  // Timers start with the first packet: an idle port needs no control loop,
  // and the first interval then measures y over real traffic.
  started_ = true;
  last_timeout_ = now;
  next_timeout_ = now + xcp::Duration::seconds(controller_->state().d);
  pq_.start(now, static_cast<double>(bytes()), controller_->state().d, xcp_capacity());
}

std::optional<xcp::Timestamp> XcpQdisc::next_deadline() const {
  if (!started_) return std::nullopt;
  return std::min(next_timeout_, pq_.deadline());
}

void XcpQdisc::on_deadline(xcp::Timestamp now) {
  if (!started_) return;
  if (now >= pq_.deadline()) {
    pq_.on_deadline(now, static_cast<double>(bytes()), controller_->state().d, xcp_capacity());
  }
  if (now >= next_timeout_) {
    const double elapsed = (now - last_timeout_).seconds_f();
    const IntervalState& st = controller_->on_timeout(elapsed, pq_.value());
    for (auto& s : stages_) s->on_timeout(st, elapsed);
    last_timeout_ = now;
    next_timeout_ = now + xcp::Duration::seconds(st.d);
  }
}

bool XcpQdisc::do_enqueue(PacketPtr& p, xcp::Timestamp now, DropCause& cause) {
  if (!started_) start_timers(now);
  // y is the input rate of the port, so it counts arrivals the buffer or a
  // stage then drops (ns-2.35 counts before DropTail's enque too).
  controller_->on_arrival(*p);
  for (auto& s : stages_) {
    if (!s->on_arrival(*p, now)) {
      cause = DropCause::kFairness;
      return false;
    }
  }
  if (would_overflow(*p)) {
    cause = DropCause::kOverflow;
    return false;
  }
  fifo_.push_back(std::move(p));
  return true;
}

PacketPtr XcpQdisc::do_dequeue(xcp::Timestamp now) {
  if (fifo_.empty()) return nullptr;
  PacketPtr p = std::move(fifo_.front());
  fifo_.pop_front();
  // The base has not yet subtracted this packet: queue left behind it.
  pq_.on_departure(static_cast<double>(bytes() - p->wire_bytes()));
  for (auto& s : stages_) s->before_feedback(*p, now);
  controller_->on_departure(*p);
  for (auto& s : stages_) s->after_feedback(*p, now);
  return p;
}

void XcpQdisc::report(nlohmann::json& out) const {
  nlohmann::json x = nlohmann::json::object();
  controller_->report(x);
  x["C"] = xcp_capacity();
  x["capacity_override"] = capacity_override_ > 0;
  x["Tq"] = pq_.window().seconds_f();
  for (const auto& s : stages_) s->report(x);
  out["xcp"] = std::move(x);
}

XcpPortSettings read_xcp_port_settings(const nlohmann::json& params, const XcpPortSettings& current) {
  ParamReader r(params, "queue.params");
  XcpParams k = current.law;
  k.alpha = r.number_or("alpha", k.alpha, bounds::kXcpAlpha);
  k.beta = r.number_or("beta", k.beta, bounds::kXcpBeta);
  k.gamma = r.number_or("gamma", k.gamma, bounds::kXcpGamma);
  // xcp.interval_s: at least 1 ms, as a microsecond control timer keeps a SCHED_FIFO
  // engine spinning and starves the agent and the API on the same cores.
  auto secs = [&](const char* key, xcp::Duration cur) { return r.seconds_or(key, cur, bounds::kXcpIntervalS); };
  k.fallback_interval = secs("fallback_interval_s", k.fallback_interval);
  k.min_interval = secs("min_interval_s", k.min_interval);
  k.max_interval = secs("max_interval_s", k.max_interval);
  k.rtt_cap = secs("rtt_cap_s", k.rtt_cap);
  k.min_queue_window = secs("min_queue_window_s", k.min_queue_window);
  const auto cap = r.number("capacity_bps", bounds::kXcpCapacityBps);
  const FairnessParams fair = parse_fairness_params(r, current.fairness);
  r.finish();
  if (k.min_interval > k.max_interval) {
    throw std::invalid_argument("queue.params.min_interval_s: must not exceed max_interval_s (" +
                                std::to_string(k.min_interval.seconds_f()) + " > " +
                                std::to_string(k.max_interval.seconds_f()) + ")");
  }
  return {k, cap ? std::optional<double>(*cap) : current.capacity_bps, fair};
}

void XcpQdisc::configure(const nlohmann::json& params) {
  apply(read_xcp_port_settings(params, settings()));  // read as a whole before anything changes
}

void XcpQdisc::apply(const XcpPortSettings& s) {
  controller_->params() = s.law;
  pq_.set_min_window(s.law.min_queue_window);
  if (s.capacity_bps) {
    capacity_override_ = *s.capacity_bps / 8.0;
    link_spare_->set_capacity(capacity_override_ > 0 ? capacity_override_ : capacity().bytes_per_s());
  }
  apply_fairness(s.fairness);
}

void XcpQdisc::apply_fairness(const FairnessParams& k) {
  fairness_params_ = k;
  if (!k.enabled) {
    if (fairness_) {
      std::erase_if(stages_, [&](const auto& s) { return s.get() == fairness_; });
      fairness_ = nullptr;
    }
    return;
  }
  if (fairness_) {
    fairness_->set_params(k);
    return;
  }
  auto stage = std::make_unique<FairnessStage>(k, *link_spare_, seed_);
  fairness_ = stage.get();
  stages_.push_back(std::move(stage));
}

}  // namespace xcprouter
