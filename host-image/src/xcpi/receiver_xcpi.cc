#include "xcpi/receiver_xcpi.hh"

#include <algorithm>
#include <stdexcept>

#include "transport/segment.hh"
#include "xcp/control_message.hh"

namespace xcphost {

ReceiverXcpi::Entry::Entry(uint32_t u, const ReceiverXcpiConfig& c, uint32_t session_id, uint64_t seed)
    : upstream(u), session(c.timing, session_id), v(c.params, seed) {
  // kChirp: no C_U until chirps have come (V stands aside until then).
  if (c.estimator == ReceiverEstimator::kCapacity) v.spare().set_capacity_for_upstream(c.path_capacity.bytes_per_s());
}

ReceiverXcpi::ReceiverXcpi(ReceiverXcpiConfig config, PacketWriter& writer)
    : config_(std::move(config)), writer_(writer), rng_(config_.seed ^ 0x52782D56ull) {
  if (config_.estimator == ReceiverEstimator::kCapacity) {
    if (config_.path_capacity.is_zero()) throw std::invalid_argument("XCP-i receiver: the capacity estimator needs the cloud path's capacity");
  } else {
    if (config_.chirp_high_rate.is_zero()) throw std::invalid_argument("XCP-i receiver: the chirp estimator needs H (the access link's rate)");
    if (!(config_.chirp_overhead > 0 && config_.chirp_overhead <= 0.5))
      throw std::invalid_argument("XCP-i receiver: chirp_overhead must be in (0, 0.5]");
    if (config_.chirps_per_request == 0 || config_.chirps_per_request > 1000)
      throw std::invalid_argument("XCP-i receiver: chirps_per_request must be in 1..1000");
    chirp_config_ = xcp::ChirpConfig{}.for_rate(config_.chirp_high_rate, config_.chirp_overhead);
    chirp_config_.validate();
  }
}

double ReceiverXcpi::capacity_bytes_per_s(const Entry& e) const {
  if (config_.estimator == ReceiverEstimator::kCapacity) return config_.path_capacity.bytes_per_s();
  return e.v.spare().tracking() ? std::max(0.0, e.v.spare().capacity_for_upstream()) : 0.0;
}

bool ReceiverXcpi::estimate_usable(const Entry& e, xcp::Timestamp now) const {
  // BW_U is known once U answered (the path U -> us works) and while the path
  // is not broken; with chirps, once they gave an estimate and while it is fresh.
  if (!e.session.acknowledged() || e.session.state() == xcp::EstimationSession::State::kBroken) return false;
  if (config_.estimator == ReceiverEstimator::kCapacity) return true;
  return e.estimate_at && now - *e.estimate_at <= config_.estimate_max_age;
}

const ReceiverXcpi::Entry* ReceiverXcpi::entry(uint32_t upstream) const {
  auto it = table_.find(upstream);
  return it == table_.end() ? nullptr : it->second.get();
}

bool ReceiverXcpi::on_packet(uint32_t /*src*/, uint8_t ip_ttl, std::span<uint8_t> shim, size_t ip_header_bytes,
                             xcp::Timestamp now, xcp::Timestamp arrival) {
  const xcp::ParseResult parsed = xcp::parse_header(shim);
  if (!parsed.ok()) return false;
  const xcp::XcpHeader& h = parsed.header;
  if (h.format == xcp::Format::kControl) {
    return on_control(shim, ip_header_bytes + shim.size(), now, arrival == xcp::Timestamp{} ? now : arrival);
  }
  // The router's cloud detection (docs/protocol.md §4): only XCP-i routers
  // lower xcp_ttl, every router lowers the IP TTL.
  if (h.format == xcp::Format::kStandard && h.has_xcpi() && h.xcp_ttl > ip_ttl) {
    on_data(shim, h, ip_header_bytes + shim.size(), now);
  }
  return false;
}

void ReceiverXcpi::on_data(std::span<uint8_t> shim, const xcp::XcpHeader& h, size_t wire_bytes,
                           xcp::Timestamp now) {
  ++counters_.clouds_detected;
  Entry* e = find_or_create(h.last_xcp_router, now);
  if (!e) return;
  if (auto r = e->session.on_packet(now)) send_request(e->upstream, *r);
  if (h.next_protocol == kNextProtoTransport) {
    if (auto seg = parse_segment_header(shim.subspan(h.length()))) {
      e->delay.on_sample(seg->ts_val_us, wire_timestamp_us(now));
    }
  }
  const double bytes = static_cast<double>(wire_bytes);
  e->v.on_arrival(h, bytes);
  // Without a usable estimate V stays out, as the engine's V.
  if (!estimate_usable(*e, now)) {
    ++counters_.no_estimate;
  } else {
    xcp::XcpHeader out = h;
    if (e->v.on_departure(out, bytes)) {
      xcp::store_feedback(shim, out.feedback_bytes);
      ++counters_.lowered;
    }
  }
  next_deadline_ = std::min({next_deadline_, e->session.next_deadline(), e->v_next, next_expiry_scan_});
}

bool ReceiverXcpi::on_control(std::span<const uint8_t> shim, size_t wire_bytes, xcp::Timestamp now,
                              xcp::Timestamp arrival) {
  const auto m = xcp::parse_control(shim);
  if (!m || m->type == xcp::ControlType::kRequest) return false;  // requests: the sender duty (Endpoint)
  auto owner = session_owner_.find(m->session);
  auto it = owner == session_owner_.end() ? table_.end() : table_.find(owner->second);
  if (m->type == xcp::ControlType::kProbe) {
    // Probes of a session we no longer hold (expired entry, old U) are ours
    // all the same: consumed, counted.
    if (it == table_.end() || !it->second->analyzer) {
      ++counters_.probes_unknown;
      return true;
    }
    on_probe(*it->second, *m, wire_bytes, arrival);
    if (auto d = it->second->analyzer->next_deadline()) next_deadline_ = std::min(next_deadline_, *d);
    return true;
  }
  if (it == table_.end()) return false;
  it->second->session.on_ack(m->session, m->seq, now);
  ++counters_.acks;
  // The next round's deadline is later than the retry it replaces: an early
  // advance() is harmless and recomputes.
  next_deadline_ = std::min(next_deadline_, it->second->session.next_deadline());
  return true;
}

void ReceiverXcpi::on_probe(Entry& e, const xcp::ControlMessage& m, size_t wire_bytes, xcp::Timestamp arrival) {
  ++counters_.probes;
  counters_.probe_bytes += wire_bytes;
  // The probe carries U's send time (value, ns on U's clock); offsets within
  // a chirp count from the first of its probes that arrived.
  const int64_t sent_ns = static_cast<int64_t>(m.value);
  Entry::ChirpBase* base = nullptr;
  for (auto& b : e.chirp_bases) {
    if (b.used && b.chirp_id == m.seq) base = &b;
  }
  if (!base) {
    base = &e.chirp_bases[m.seq % e.chirp_bases.size()];
    *base = {m.seq, sent_ns, true};
  }
  on_chirps(e,
            e.analyzer->on_probe(xcp::ChirpProbe{m.seq, m.probe_index(),
                                                 xcp::Duration::nanoseconds(sent_ns - base->first_ns), arrival,
                                                 static_cast<uint32_t>(wire_bytes)}),
            arrival);
}

void ReceiverXcpi::on_chirps(Entry& e, const std::vector<xcp::ChirpResult>& done, xcp::Timestamp now) {
  for (const xcp::ChirpResult& r : done) {
    e.chirp->add(r);
    if (!r.estimate) continue;
    // C_U = A + y: the chirp's available bandwidth plus what U's traffic took
    // through the cloud in V's latest interval (the engine's XcpiNode::on_chirps).
    e.c_u_window.push_back(r.estimate->bytes_per_s() + e.v.state().y);
    while (e.c_u_window.size() > chirp_config_.chirps_per_estimate) e.c_u_window.pop_front();
  }
  const auto a = e.chirp->estimate();
  if (!a || done.empty() || e.c_u_window.size() < chirp_config_.min_chirps) return;
  double sum = 0;
  for (double c : e.c_u_window) sum += c;
  e.v.spare().set_capacity_for_upstream(sum / static_cast<double>(e.c_u_window.size()));
  e.estimate_bps = a->bits_per_s();
  e.estimate_at = now;
  ++counters_.estimates;
}

ReceiverXcpi::Entry* ReceiverXcpi::find_or_create(uint32_t upstream, xcp::Timestamp now) {
  if (auto it = table_.find(upstream); it != table_.end()) return it->second.get();
  if (table_.size() >= config_.max_upstreams) {
    ++counters_.table_full;
    return nullptr;
  }
  const uint32_t session = xcp::fresh_session_id(rng_, session_owner_);
  ++created_;
  auto e = std::make_unique<Entry>(upstream, config_, session, config_.seed + 0x9E3779B97F4A7C15ull * created_);
  if (config_.estimator == ReceiverEstimator::kChirp) {
    e->analyzer = std::make_unique<xcp::ChirpAnalyzer>(chirp_config_);
    e->chirp = std::make_unique<xcp::ChirpEstimator>(chirp_config_);
  }
  e->v_last = now;
  e->v_next = now + xcp::Duration::seconds(e->v.state().d);
  session_owner_[session] = upstream;
  if (next_expiry_scan_ == xcp::Timestamp::max()) next_expiry_scan_ = now + config_.idle_timeout;
  Entry* raw = e.get();
  table_.emplace(upstream, std::move(e));
  return raw;
}

void ReceiverXcpi::send_request(uint32_t upstream, const xcp::EstimationSession::Request& r) {
  std::span<uint8_t> out = writer_.buffer();
  if (out.size() < xcp::kControlMessageLen) return;
  // kCapacity: aux = 0, acknowledge only. kChirp: U sends aux chirps toward
  // us on the grid for H (value, bits/s), as it does for a downstream router.
  const bool chirp = config_.estimator == ReceiverEstimator::kChirp;
  const xcp::ControlMessage m{xcp::ControlType::kRequest, r.session, r.seq, chirp ? config_.chirps_per_request : 0,
                              chirp ? static_cast<uint64_t>(chirp_config_.high_rate.bits_per_s()) : 0};
  writer_.commit(upstream, xcp::write_control(m, out.first(xcp::kControlMessageLen)));
  ++counters_.requests;
}

void ReceiverXcpi::run_interval(Entry& e, xcp::Timestamp now) {
  const double elapsed = (now - e.v_last).seconds_f();
  const double q_cloud_s = e.delay.close_interval();
  // Q: the receiver's own queue is empty; the cloud's is its delay times the
  // capacity it drains at (cloud_delay.hh).
  const double q = config_.cloud_queue ? q_cloud_s * capacity_bytes_per_s(e) : 0.0;
  e.v.on_timeout(elapsed, q);
  e.v_last = now;
  e.v_next = now + xcp::Duration::seconds(e.v.state().d);
}

void ReceiverXcpi::advance(xcp::Timestamp now) {
  if (now < next_deadline_) return;
  for (auto& [u, e] : table_) {
    if (e->analyzer) {
      if (auto d = e->analyzer->next_deadline(); d && *d <= now) on_chirps(*e, e->analyzer->on_deadline(now), now);
    }
    if (e->session.next_deadline() <= now) {
      const xcp::SessionCounters before = e->session.counters();
      if (auto r = e->session.on_deadline(now)) send_request(u, *r);
      counters_.timeouts += e->session.counters().timeouts - before.timeouts;
      counters_.broken += e->session.counters().broken - before.broken;
    }
    if (e->v_next <= now) run_interval(*e, now);
  }
  if (now >= next_expiry_scan_) {
    counters_.expired += xcp::expire_idle(table_, session_owner_, config_.idle_timeout, now);
    next_expiry_scan_ = table_.empty() ? xcp::Timestamp::max() : now + config_.idle_timeout / 2;
  }
  recompute_deadline();
}

nlohmann::json ReceiverXcpi::report() const {
  nlohmann::json ups = nlohmann::json::object();
  for (const auto& [u, e] : table_) {
    const xcp::IntervalState& st = e->v.state();
    const xcp::SessionCounters& sc = e->session.counters();
    nlohmann::json& j = ups[std::to_string(u >> 24) + "." + std::to_string((u >> 16) & 0xFF) + "." +
                            std::to_string((u >> 8) & 0xFF) + "." + std::to_string(u & 0xFF)];
    j = {
        {"state", std::string(xcp::to_string(e->session.state()))},
        {"requests", sc.requests}, {"acks", sc.acks}, {"timeouts", sc.timeouts}, {"broken", sc.broken},
        {"intervals", e->v.intervals()}, {"d", st.d}, {"y", st.y}, {"S", st.spare}, {"Q", st.q},
        {"phi", st.phi}, {"cloud_queue_s", e->delay.queue_s()}};
    if (e->chirp) {
      j["estimate_bps"] = e->estimate_at ? nlohmann::json(e->estimate_bps) : nlohmann::json(nullptr);
      j["capacity_for_u_bps"] = e->v.spare().tracking() ? nlohmann::json(e->v.spare().capacity_for_upstream() * 8.0)
                                                         : nlohmann::json(nullptr);
      j["chirps"] = e->chirp->chirps_seen();
      j["chirps_unusable"] = e->chirp->chirps_unusable();
    }
  }
  const ReceiverXcpiCounters& c = counters_;
  return {{"estimator", config_.estimator == ReceiverEstimator::kChirp ? "chirp" : "capacity"},
          {"capacity_bps", config_.path_capacity.bits_per_s()},
          {"chirp_high_bps", config_.chirp_high_rate.bits_per_s()},
          {"probes", c.probes}, {"probe_bytes", c.probe_bytes}, {"probes_unknown", c.probes_unknown},
          {"estimates", c.estimates},
          {"clouds_detected", c.clouds_detected}, {"lowered", c.lowered}, {"no_estimate", c.no_estimate},
          {"table_full", c.table_full}, {"expired", c.expired}, {"requests", c.requests}, {"acks", c.acks},
          {"timeouts", c.timeouts}, {"broken", c.broken}, {"entries", table_.size()},
          {"upstreams", std::move(ups)}};
}

void ReceiverXcpi::recompute_deadline() {
  xcp::Timestamp t = next_expiry_scan_;
  for (const auto& [u, e] : table_) {
    t = std::min({t, e->session.next_deadline(), e->v_next});
    if (e->analyzer) {
      if (auto d = e->analyzer->next_deadline()) t = std::min(t, *d);
    }
  }
  next_deadline_ = t;
}

}  // namespace xcphost
