#include "xcpi/receiver_xcpi.hh"

#include <algorithm>

#include "transport/segment.hh"
#include "xcp/control_message.hh"

namespace xcphost {

ReceiverXcpi::Entry::Entry(uint32_t u, const ReceiverXcpiConfig& c, uint32_t session_id, uint64_t seed)
    : upstream(u), session(c.timing, session_id), v(c.params, seed) {
  v.spare().set_capacity_for_upstream(c.path_capacity.bytes_per_s());
}

ReceiverXcpi::ReceiverXcpi(ReceiverXcpiConfig config, PacketWriter& writer)
    : config_(std::move(config)), writer_(writer), rng_(config_.seed ^ 0x52782D56ull) {}

const ReceiverXcpi::Entry* ReceiverXcpi::entry(uint32_t upstream) const {
  auto it = table_.find(upstream);
  return it == table_.end() ? nullptr : it->second.get();
}

bool ReceiverXcpi::on_packet(uint32_t /*src*/, uint8_t ip_ttl, std::span<uint8_t> shim, size_t ip_header_bytes,
                             xcp::Timestamp now) {
  const xcp::ParseResult parsed = xcp::parse_header(shim);
  if (!parsed.ok()) return false;
  const xcp::XcpHeader& h = parsed.header;
  if (h.format == xcp::Format::kControl) return on_ack(shim, now);
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
  // BW_U is known once U answered (the path U -> us works) and while the path
  // is not broken; without it V stays out, as the engine's V without estimate.
  const bool usable = !config_.path_capacity.is_zero() && e->session.acknowledged() &&
                      e->session.state() != xcp::EstimationSession::State::kBroken;
  if (!usable) {
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

bool ReceiverXcpi::on_ack(std::span<const uint8_t> shim, xcp::Timestamp now) {
  const auto m = xcp::parse_control(shim);
  if (!m || m->type != xcp::ControlType::kAck) return false;  // requests: the sender duty (Endpoint)
  auto owner = session_owner_.find(m->session);
  if (owner == session_owner_.end()) return false;
  auto it = table_.find(owner->second);
  if (it == table_.end()) return false;
  it->second->session.on_ack(m->session, m->seq, now);
  ++counters_.acks;
  // The next round's deadline is later than the retry it replaces: an early
  // advance() is harmless and recomputes.
  next_deadline_ = std::min(next_deadline_, it->second->session.next_deadline());
  return true;
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
  // aux = 0: acknowledge only (no chirps: the oracle needs none).
  const xcp::ControlMessage m{xcp::ControlType::kRequest, r.session, r.seq, 0, 0};
  writer_.commit(upstream, xcp::write_control(m, out.first(xcp::kControlMessageLen)));
  ++counters_.requests;
}

void ReceiverXcpi::run_interval(Entry& e, xcp::Timestamp now) {
  const double elapsed = (now - e.v_last).seconds_f();
  const double q_cloud_s = e.delay.close_interval();
  // Q: the receiver's own queue is empty; the cloud's is its delay times the
  // capacity it drains at (cloud_delay.hh).
  const double q = config_.cloud_queue ? q_cloud_s * capacity_bytes_per_s() : 0.0;
  e.v.on_timeout(elapsed, q);
  e.v_last = now;
  e.v_next = now + xcp::Duration::seconds(e.v.state().d);
}

void ReceiverXcpi::advance(xcp::Timestamp now) {
  if (now < next_deadline_) return;
  for (auto& [u, e] : table_) {
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
    ups[std::to_string(u >> 24) + "." + std::to_string((u >> 16) & 0xFF) + "." + std::to_string((u >> 8) & 0xFF) +
        "." + std::to_string(u & 0xFF)] = {
        {"state", std::string(xcp::to_string(e->session.state()))},
        {"requests", sc.requests}, {"acks", sc.acks}, {"timeouts", sc.timeouts}, {"broken", sc.broken},
        {"intervals", e->v.intervals()}, {"d", st.d}, {"y", st.y}, {"S", st.spare}, {"Q", st.q},
        {"phi", st.phi}, {"cloud_queue_s", e->delay.queue_s()}};
  }
  const ReceiverXcpiCounters& c = counters_;
  return {{"capacity_bps", config_.path_capacity.bits_per_s()},
          {"clouds_detected", c.clouds_detected}, {"lowered", c.lowered}, {"no_estimate", c.no_estimate},
          {"table_full", c.table_full}, {"expired", c.expired}, {"requests", c.requests}, {"acks", c.acks},
          {"timeouts", c.timeouts}, {"broken", c.broken}, {"entries", table_.size()},
          {"upstreams", std::move(ups)}};
}

void ReceiverXcpi::recompute_deadline() {
  xcp::Timestamp t = next_expiry_scan_;
  for (const auto& [u, e] : table_) t = std::min({t, e->session.next_deadline(), e->v_next});
  next_deadline_ = t;
}

}  // namespace xcphost
