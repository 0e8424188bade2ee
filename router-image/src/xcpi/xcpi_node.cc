#include "xcpi/xcpi_node.hh"

#include <algorithm>

#include "util/net_address.hh"
#include "util/seed.hh"

namespace xcprouter {

namespace {

std::string_view to_string(EstimateSource s) {
  switch (s) {
    case EstimateSource::kNone: return "none";
    case EstimateSource::kOracle: return "oracle";
    case EstimateSource::kInjected: return "injected";
    case EstimateSource::kChirp: return "chirp";
  }
  return "unknown";
}

}  // namespace

XcpiNode::XcpiNode(XcpiConfig config, uint32_t self, XcpParams v_params, uint64_t seed, ControlSender send,
                   QueueProbe queue)
    : config_(std::move(config)),
      self_(self),
      v_params_(v_params),
      seed_(seed),
      send_(std::move(send)),
      queue_(std::move(queue)),
      rng_(splitmix64(seed ^ 0x5843502D69ull)) {}

void XcpiNode::bind_oracle(uint32_t upstream, std::vector<const Link*> links) {
  oracle_links_[upstream] = std::move(links);
}

const UpstreamEntry* XcpiNode::entry(uint32_t upstream) const {
  auto it = table_.find(upstream);
  return it == table_.end() ? nullptr : it->second.get();
}

UpstreamEntry* XcpiNode::find_or_create(uint32_t upstream, xcp::Timestamp now) {
  auto it = table_.find(upstream);
  if (it != table_.end()) return it->second.get();
  if (table_.size() >= config_.max_upstreams) {
    ++counters_.table_full;
    return nullptr;
  }
  // Session ids are random so a stale acknowledgement of an expired entry
  // cannot be taken for the new one's.
  uint32_t session = 0;
  do {
    session = static_cast<uint32_t>(rng_.next_u64());
  } while (session == 0 || session_owner_.count(session) != 0);
  ++entries_created_;
  auto e = std::make_unique<UpstreamEntry>(upstream, config_, v_params_, session,
                                           splitmix64(seed_ + entries_created_));
  e->created = now;
  if (config_.estimator == EstimatorKind::kOracle) {
    auto links = oracle_links_.find(upstream);
    if (links != oracle_links_.end() && !links->second.empty()) {
      e->oracle = std::make_unique<OracleSource>(links->second, config_.oracle.error,
                                                 splitmix64(seed_ + 0x100000 + entries_created_));
      e->oracle->sample(now);  // starts the first measured interval
      e->oracle_next = now;
    }
  }
  session_owner_[session] = upstream;
  if (next_expiry_scan_ == xcp::Timestamp::max()) next_expiry_scan_ = now + config_.idle_timeout;
  UpstreamEntry* raw = e.get();
  table_.emplace(upstream, std::move(e));
  return raw;
}

void XcpiNode::send_request(UpstreamEntry& e, const EstimationSession::Request& r, xcp::Timestamp now) {
  xcp::ControlMessage m;
  m.type = xcp::ControlType::kRequest;
  m.session = r.session;
  m.seq = r.seq;
  m.aux = config_.estimator == EstimatorKind::kChirp ? config_.chirps_per_request : 0;
  send_(e.upstream, m, xcp::kControlMessageLen, now);
}

void XcpiNode::on_data(Packet& p, xcp::Timestamp now) {
  if (!p.has_xcp() || p.xcp.format != xcp::Format::kStandard || !p.xcp.has_xcpi()) return;
  const uint8_t out_ttl = p.data()[p.ip_offset + 8];  // already decremented by forward()
  if (p.xcp.xcp_ttl > p.ip_ttl_in) {
    ++counters_.clouds_detected;
    if (UpstreamEntry* e = find_or_create(p.xcp.last_xcp_router, now)) {
      ++e->counters.packets;
      if (auto r = e->session.on_packet(now)) {
        send_request(*e, *r, now);
        next_deadline_ = std::min(next_deadline_, e->session.next_deadline());
      }
      if (!e->v_started) {
        e->v_started = true;
        e->v_last_timeout = now;
        e->v_next_timeout = now + xcp::Duration::seconds(e->v.state().d);
        next_deadline_ = std::min(next_deadline_, e->v_next_timeout);
      }
      next_deadline_ = std::min(next_deadline_, next_expiry_scan_);
      e->v.on_arrival(p);
      if (e->estimate_usable(now, config_.estimate_max_age)) {
        const int32_t before = p.xcp.feedback_bytes;
        e->v.on_departure(p);  // V only ever lowers H_feedback
        if (p.xcp.feedback_bytes < before) ++e->counters.lowered;
      } else {
        ++e->counters.no_estimate;
      }
    }
  }
  xcp::store_xcpi_block(p.xcp_shim(), out_ttl, self_);
  p.xcp.xcp_ttl = out_ttl;
  p.xcp.last_xcp_router = self_;
  ++counters_.rewritten;
}

void XcpiNode::on_control(const Packet& p, xcp::Timestamp now) {
  const size_t end = static_cast<size_t>(p.ip_offset) + p.ip_total_len;
  const auto m = p.has_xcp() && end > p.xcp_offset
                     ? xcp::parse_control({p.data() + p.xcp_offset, end - p.xcp_offset})
                     : std::nullopt;
  if (!m) {
    ++counters_.control_invalid;
    return;
  }
  switch (m->type) {
    case xcp::ControlType::kRequest: {
      // As U: acknowledge at once. Chirps are not sent by this router yet
      // (aux = 0 in the answer tells R so); the oracle needs none.
      xcp::ControlMessage ack{xcp::ControlType::kAck, m->session, m->seq, 0, 0};
      ++counters_.requests_answered;
      send_(p.flow.src, ack, xcp::kControlMessageLen, now);
      return;
    }
    case xcp::ControlType::kAck: {
      auto owner = session_owner_.find(m->session);
      auto it = owner == session_owner_.end() ? table_.end() : table_.find(owner->second);
      if (it == table_.end()) {
        ++counters_.control_unknown;
        return;
      }
      it->second->session.on_ack(m->session, m->seq, now);
      next_deadline_ = std::min(next_deadline_, it->second->session.next_deadline());
      return;
    }
    case xcp::ControlType::kProbe:
      ++counters_.control_unknown;
      return;
  }
}

bool XcpiNode::inject_estimate(uint32_t upstream, double bw_bps, double truth_bps, xcp::Timestamp now) {
  auto it = table_.find(upstream);
  if (it == table_.end()) return false;
  it->second->set_estimate(bw_bps, truth_bps, EstimateSource::kInjected, now);
  return true;
}

void XcpiNode::run_v_timeout(UpstreamEntry& e, xcp::Timestamp now) {
  if (e.oracle && (config_.oracle.period <= xcp::Duration::zero() || now >= e.oracle_next)) {
    if (auto s = e.oracle->sample(now)) {
      e.set_estimate(s->estimate_bps, s->truth_bps, EstimateSource::kOracle, now);
    }
    e.oracle_next = now + config_.oracle.period;
  }
  const double elapsed = (now - e.v_last_timeout).seconds_f();
  // BW_U replaces S; d and Q are this router's (seed 000 eq. 1): d from V's
  // own sums (mean RTT of the packets from U), Q from queue_().
  e.v.on_timeout(elapsed, queue_ ? queue_() : 0.0);
  e.v_last_timeout = now;
  e.v_next_timeout = now + xcp::Duration::seconds(e.v.state().d);
}

void XcpiNode::advance(xcp::Timestamp now) {
  if (now < next_deadline_) return;
  for (auto& [u, e] : table_) {
    if (e->session.next_deadline() <= now) {
      if (auto r = e->session.on_deadline(now)) send_request(*e, *r, now);
    }
    if (e->v_started && e->v_next_timeout <= now) run_v_timeout(*e, now);
  }
  if (now >= next_expiry_scan_) {
    for (auto it = table_.begin(); it != table_.end();) {
      if (now - it->second->session.last_packet() > config_.idle_timeout) {
        session_owner_.erase(it->second->session.session_id());
        it = table_.erase(it);
        ++counters_.expired;
      } else {
        ++it;
      }
    }
    next_expiry_scan_ = table_.empty() ? xcp::Timestamp::max() : now + config_.idle_timeout / 2;
  }
  recompute_deadline();
}

void XcpiNode::recompute_deadline() {
  xcp::Timestamp t = next_expiry_scan_;
  for (const auto& [u, e] : table_) {
    t = std::min(t, e->session.next_deadline());
    if (e->v_started) t = std::min(t, e->v_next_timeout);
  }
  next_deadline_ = t;
}

void XcpiNode::report(nlohmann::json& out, xcp::Timestamp now) const {
  nlohmann::json ups = nlohmann::json::object();
  for (const auto& [u, e] : table_) {
    const SessionCounters& s = e->session.counters();
    nlohmann::json v = nlohmann::json::object();
    e->v.report(v);
    ups[ipv4_to_string(u)] = {
        {"state", std::string(to_string(e->session.state()))},
        {"source", std::string(to_string(e->source))},
        {"estimate_bps", e->source == EstimateSource::kNone ? nlohmann::json(nullptr) : nlohmann::json(e->estimate_bps)},
        {"truth_bps", e->truth_bps < -0.5 && e->source != EstimateSource::kOracle ? nlohmann::json(nullptr)
                                                                                  : nlohmann::json(e->truth_bps)},
        {"estimate_age_s", e->source == EstimateSource::kNone ? nlohmann::json(nullptr)
                                                              : nlohmann::json((now - e->estimate_at).seconds_f())},
        {"requests", s.requests},
        {"acks", s.acks},
        {"stale_acks", s.stale_acks},
        {"timeouts", s.timeouts},
        {"broken", s.broken},
        {"packets", e->counters.packets},
        {"lowered", e->counters.lowered},
        {"no_estimate", e->counters.no_estimate},
        {"estimates", e->counters.estimates},
        {"oracle_links", e->oracle ? e->oracle->link_count() : 0},
        {"v", std::move(v)},
    };
  }
  out["xcpi"] = {
      {"estimator", config_.estimator == EstimatorKind::kOracle ? "oracle" : "chirp"},
      {"address", ipv4_to_string(self_)},
      {"entries", table_.size()},
      {"max_upstreams", config_.max_upstreams},
      {"clouds_detected", counters_.clouds_detected},
      {"rewritten", counters_.rewritten},
      {"table_full", counters_.table_full},
      {"expired", counters_.expired},
      {"requests_answered", counters_.requests_answered},
      {"control_invalid", counters_.control_invalid},
      {"control_unknown", counters_.control_unknown},
      {"upstreams", std::move(ups)},
  };
}

}  // namespace xcprouter
