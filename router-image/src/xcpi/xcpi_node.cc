#include "xcpi/xcpi_node.hh"

#include <algorithm>
#include <cmath>

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
                   QueueProbe queue, PortRate port_rate)
    : config_(std::move(config)),
      self_(self),
      v_params_(v_params),
      seed_(seed),
      send_(std::move(send)),
      queue_(std::move(queue)),
      port_rate_(std::move(port_rate)),
      rng_(splitmix64(seed ^ 0x5843502D69ull)),
      chirps_(config_.chirp, config_.chirp_overhead, config_.max_upstreams, rng_) {}

void XcpiNode::bind_oracle(uint32_t upstream, std::vector<const Link*> links) {
  oracle_links_[upstream] = std::move(links);
}

UpstreamEntry* XcpiNode::entry_by_session(uint32_t session) {
  auto owner = session_owner_.find(session);
  if (owner == session_owner_.end()) return nullptr;
  auto it = table_.find(owner->second);
  return it == table_.end() ? nullptr : it->second.get();
}

const UpstreamEntry* XcpiNode::entry(uint32_t upstream) const {
  auto it = table_.find(upstream);
  return it == table_.end() ? nullptr : it->second.get();
}

ChirpConfig XcpiNode::chirp_for(double h_bps) const {
  return config_.chirp.for_rate(xcp::Rate::from_bits_per_s(h_bps), config_.chirp_overhead);
}

UpstreamEntry* XcpiNode::find_or_create(uint32_t upstream, uint16_t in_port, xcp::Timestamp now) {
  auto it = table_.find(upstream);
  if (it != table_.end()) return it->second.get();
  if (table_.size() >= config_.max_upstreams) {
    ++counters_.table_full;
    return nullptr;
  }
  const uint32_t session = xcp::fresh_session_id(rng_, session_owner_);
  ++entries_created_;
  auto e = std::make_unique<UpstreamEntry>(upstream, config_, v_params_, session,
                                           splitmix64(seed_ + entries_created_));
  e->created = now;
  if (config_.estimator == EstimatorKind::kChirp) {
    const double port_bps = port_rate_ ? port_rate_(in_port) : 0.0;
    e->chirp_config = port_bps > 0 ? chirp_for(port_bps) : config_.chirp;
    e->chirp_analyzer = std::make_unique<ChirpAnalyzer>(e->chirp_config);
    e->chirp = std::make_unique<ChirpEstimator>(e->chirp_config);
  }
  {
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
  // The grid U must probe: H in bits/s (0: U's own template).
  m.value = config_.estimator == EstimatorKind::kChirp ? static_cast<uint64_t>(e.chirp_config.high_rate.bits_per_s()) : 0;
  send_(e.upstream, m, xcp::kControlMessageLen, now);
}

void XcpiNode::on_data(Packet& p, xcp::Timestamp now) {
  if (!p.has_xcp() || p.xcp.format != xcp::Format::kStandard || !p.xcp.has_xcpi()) return;
  const uint8_t out_ttl = p.data()[p.ip_offset + 8];  // already decremented by forward()
  if (p.xcp.xcp_ttl > p.ip_ttl_in) {
    ++counters_.clouds_detected;
    if (UpstreamEntry* e = find_or_create(p.xcp.last_xcp_router, p.in_port, now)) {
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
      // As U: acknowledge at once with the chirps we will send (aux; 0 for
      // the oracle or when the job bound is reached), then send them.
      const uint32_t chirps = chirps_.on_request(p.flow.src, *m, now);
      xcp::ControlMessage ack{xcp::ControlType::kAck, m->session, m->seq, chirps, 0};
      ++counters_.requests_answered;
      send_(p.flow.src, ack, xcp::kControlMessageLen, now);
      if (chirps > 0) next_deadline_ = std::min(next_deadline_, now);
      return;
    }
    case xcp::ControlType::kAck: {
      UpstreamEntry* e = entry_by_session(m->session);
      if (!e) {
        ++counters_.control_unknown;
        return;
      }
      e->session.on_ack(m->session, m->seq, now);
      next_deadline_ = std::min(next_deadline_, e->session.next_deadline());
      return;
    }
    case xcp::ControlType::kProbe:
      on_probe(*m, p, now);
      return;
  }
}

void XcpiNode::on_probe(const xcp::ControlMessage& m, const Packet& p, xcp::Timestamp now) {
  UpstreamEntry* found = entry_by_session(m.session);
  if (!found || !found->chirp) {
    ++counters_.control_unknown;
    return;
  }
  ++counters_.probes_received;
  UpstreamEntry& e = *found;
  // The probe carries U's send time: offsets within a chirp are taken from
  // the first of its probes that arrived (a constant shift is harmless to the
  // analysis, which works on delay differences).
  const int64_t sent_ns = static_cast<int64_t>(m.value);
  UpstreamEntry::ChirpBase* base = nullptr;
  for (auto& b : e.chirp_bases) {
    if (b.used && b.chirp_id == m.seq) base = &b;
  }
  if (!base) {
    base = &e.chirp_bases[m.seq % e.chirp_bases.size()];
    *base = {m.seq, sent_ns, true};
  }
  const int64_t owd = p.arrival.ns() - sent_ns;  // + the clocks' offset, constant
  e.owd_floor_ns = std::min(e.owd_floor_ns, owd);
  if (!e.cur_chirp_valid || e.cur_chirp != m.seq) {
    if (e.cur_chirp_valid) e.cloud_queue_s = static_cast<double>(e.cur_chirp_min_owd_ns - e.owd_floor_ns) * 1e-9;
    e.cur_chirp = m.seq;
    e.cur_chirp_valid = true;
    e.cur_chirp_min_owd_ns = owd;
  }
  e.cur_chirp_min_owd_ns = std::min(e.cur_chirp_min_owd_ns, owd);
  on_chirps(e, e.chirp_analyzer->on_probe(ChirpProbe{m.seq, m.probe_index(),
                                                      xcp::Duration::nanoseconds(sent_ns - base->first_ns),
                                                      p.arrival, p.wire_bytes()}),
            now);
  if (auto d = e.chirp_analyzer->next_deadline()) next_deadline_ = std::min(next_deadline_, *d);
}

void XcpiNode::on_chirps(UpstreamEntry& e, const std::vector<ChirpResult>& done, xcp::Timestamp now) {
  for (const ChirpResult& r : done) {
    e.chirp->add(r);
    if (!r.estimate) continue;
    // U's rate through the cloud in V's latest interval: what this chirp's
    // A was measured against.
    e.c_u_window.push_back(r.estimate->bytes_per_s() + e.v.state().y);
    while (e.c_u_window.size() > config_.chirp.chirps_per_estimate) e.c_u_window.pop_front();
  }
  const auto a = e.chirp->estimate();
  if (!a || done.empty() || e.c_u_window.size() < config_.chirp.min_chirps) return;
  double sum = 0;
  for (double c : e.c_u_window) sum += c;
  e.set_capacity_estimate(a->bits_per_s(), sum / static_cast<double>(e.c_u_window.size()), EstimateSource::kChirp, now);
}

bool XcpiNode::inject_estimate(uint32_t upstream, double bw_bps, double truth_bps, xcp::Timestamp now) {
  auto it = table_.find(upstream);
  if (it == table_.end()) return false;
  it->second->set_estimate(bw_bps, EstimateSource::kInjected, now);
  it->second->truth_bps = truth_bps;
  return true;
}

void XcpiNode::apply_oracle(UpstreamEntry& e, const OracleSample& s, double elapsed, xcp::Timestamp now) {
  const bool exact = config_.oracle.error <= 0 && config_.oracle.period <= xcp::Duration::zero();
  if (exact) {
    // The paper's model: S = BW_U = C - y, fresh at every interval.
    e.set_estimate(s.truth_bps, EstimateSource::kOracle, now);
    return;
  }
  // An erring or held estimate is one of the capacity left for U's traffic,
  // C_U = A + y_U (y_U: U's rate through the cloud over the same interval),
  // and V uses S = C_U - y at every interval (XCPI.md §8, §12).
  const double y_u = elapsed > 0 ? e.v.sums().y_bytes / elapsed : 0.0;
  const double c_u = (s.truth_bps / 8.0 + y_u) * s.error_factor;
  e.set_capacity_estimate((c_u - y_u) * 8.0, c_u, EstimateSource::kOracle, now);
}

void XcpiNode::run_v_timeout(UpstreamEntry& e, xcp::Timestamp now) {
  const double elapsed = (now - e.v_last_timeout).seconds_f();
  if (e.oracle && (config_.oracle.period <= xcp::Duration::zero() || now >= e.oracle_next)) {
    if (auto s = e.oracle->sample(now)) {
      e.truth_bps = s->truth_bps;  // the truth beside any estimate
      if (config_.estimator == EstimatorKind::kOracle) apply_oracle(e, *s, elapsed, now);
    }
    e.oracle_next = now + config_.oracle.period;
  }
  // BW_U replaces S; d and Q are this router's (seed 000 eq. 1): d from V's
  // own sums (mean RTT of the packets from U), Q from queue_().
  double q = queue_ ? queue_() : 0.0;
  if (e.chirp && config_.cloud_queue && e.spare->tracking()) {
    q += e.cloud_queue_s * std::max(0.0, e.spare->capacity_for_upstream());
  }
  e.v.on_timeout(elapsed, q);
  e.v_last_timeout = now;
  e.v_next_timeout = now + xcp::Duration::seconds(e.v.state().d);
}

void XcpiNode::advance(xcp::Timestamp now) {
  if (now < next_deadline_) return;
  // Each probe leaves at its scheduled instant on the emulated timeline,
  // however late the event loop runs: the link serialises from there.
  chirps_.run(now, [&](uint32_t dst, xcp::ControlMessage& probe, size_t payload, xcp::Timestamp at) {
    send_(dst, probe, payload, at);
  });
  for (auto& [u, e] : table_) {
    if (e->chirp_analyzer) {
      if (auto d = e->chirp_analyzer->next_deadline(); d && *d <= now) on_chirps(*e, e->chirp_analyzer->on_deadline(now), now);
    }
    if (e->session.next_deadline() <= now) {
      if (auto r = e->session.on_deadline(now)) send_request(*e, *r, now);
    }
    if (e->v_started && e->v_next_timeout <= now) run_v_timeout(*e, now);
  }
  if (now >= next_expiry_scan_) {
    counters_.expired += xcp::expire_idle(table_, session_owner_, config_.idle_timeout, now);
    next_expiry_scan_ = table_.empty() ? xcp::Timestamp::max() : now + config_.idle_timeout / 2;
  }
  recompute_deadline();
}

void XcpiNode::recompute_deadline() {
  xcp::Timestamp t = std::min(next_expiry_scan_, chirps_.next_deadline());
  for (const auto& [u, e] : table_) {
    if (e->chirp_analyzer) {
      if (auto d = e->chirp_analyzer->next_deadline()) t = std::min(t, *d);
    }
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
        {"truth_bps", std::isnan(e->truth_bps) ? nlohmann::json(nullptr) : nlohmann::json(e->truth_bps)},
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
        {"chirps_used", e->chirp ? e->chirp->chirps_used() : 0},
        {"cloud_queue_s", e->cloud_queue_s},
        {"chirps_seen", e->chirp ? e->chirp->chirps_seen() : 0},
        {"chirps_unusable", e->chirp ? e->chirp->chirps_unusable() : 0},
        {"first_estimate_s", e->chirp && e->chirp->first_estimate_at()
                                 ? nlohmann::json((*e->chirp->first_estimate_at() - e->created).seconds_f())
                                 : nlohmann::json(nullptr)},
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
      {"probes_sent", chirps_.counters().probes_sent},
      {"probe_bytes", chirps_.counters().probe_bytes},
      {"probes_received", counters_.probes_received},
      {"probe_jobs_refused", chirps_.counters().jobs_refused},
      {"chirp_jobs", chirps_.jobs()},
      {"upstreams", std::move(ups)},
  };
}

}  // namespace xcprouter
