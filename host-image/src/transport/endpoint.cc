#include "transport/endpoint.hh"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "xcp/control_message.hh"

namespace xcphost {

void Endpoint::listen(uint16_t port, const ConnectionConfig& cfg, Acceptor acceptor) {
  listeners_[port] = Listener{cfg, std::move(acceptor)};
  if (cfg.xcpi_ip_ttl != 0) sends_xcpi_ = true;
}

Connection& Endpoint::connect(FlowKey key, const ConnectionConfig& cfg, ConnectionHandler* handler,
                              xcp::Timestamp now) {
  if (conns_.contains(key)) {
    throw std::invalid_argument("connect: local port " + std::to_string(key.local_port) +
                                " already used for this peer");
  }
  auto conn = std::make_unique<Connection>(cfg, key, true, handler, writer_);
  Connection& ref = *conn;
  conns_.emplace(key, Entry{std::move(conn), false});
  if (cfg.xcpi_ip_ttl != 0) sends_xcpi_ = true;
  ++client_ports_[key.local_port];
  ref.start(now);
  return ref;
}

void Endpoint::remove(const Connection& c) {
  auto it = conns_.find(c.key());
  if (it == conns_.end()) return;
  if (!it->second.accepted && --client_ports_[c.key().local_port] == 0) {
    client_ports_.erase(c.key().local_port);
  }
  conns_.erase(it);
}

bool Endpoint::owns_port(uint16_t port) const {
  return listeners_.contains(port) || client_ports_.contains(port);
}

void Endpoint::on_packet(uint32_t src_addr, std::span<const uint8_t> ip_payload, xcp::Timestamp now) {
  ++stats_.packets_in;
  const xcp::ParseResult shim = xcp::parse_header(ip_payload);
  if (shim.ok() && shim.header.format == xcp::Format::kControl) {
    on_control(src_addr, ip_payload, now);
    return;
  }
  if (!shim.ok() || shim.header.next_protocol != kNextProtoTransport) {
    ++stats_.malformed;
    return;
  }
  const auto rest = ip_payload.subspan(shim.header.length());
  const auto seg = parse_segment_header(rest);
  if (!seg) {
    ++stats_.malformed;
    return;
  }
  const FlowKey key{src_addr, seg->dst_port, seg->src_port};
  const auto payload = rest.subspan(seg->length());
  if (auto it = conns_.find(key); it != conns_.end()) {
    it->second.conn->on_packet(shim.header, *seg, payload, now);
    return;
  }
  auto lit = listeners_.find(seg->dst_port);
  if (lit == listeners_.end()) {
    ++stats_.not_ours;
    if (seg->has(seg_flags::kSyn) && !seg->has(seg_flags::kAck) && !seg->has(seg_flags::kRst) && reset_unowned_ &&
        reset_unowned_()) {
      send_reset(src_addr, *seg, now);
    }
    return;
  }
  if (seg->has(seg_flags::kRst)) return;
  if (!seg->has(seg_flags::kSyn) || seg->has(seg_flags::kAck)) {
    send_reset(src_addr, *seg, now);  // a segment for a connection this listener does not know
    return;
  }
  auto conn = std::make_unique<Connection>(lit->second.cfg, key, false, nullptr, writer_);
  Connection& ref = *conn;
  conns_.emplace(key, Entry{std::move(conn), true});
  ref.set_handler(lit->second.acceptor(ref));
  ref.start(now);
  ref.on_packet(shim.header, *seg, payload, now);
}

void Endpoint::send_reset(uint32_t remote_addr, const SegmentHeader& in, xcp::Timestamp now) {
  SegmentHeader seg;
  seg.src_port = in.dst_port;
  seg.dst_port = in.src_port;
  seg.seq = in.ack;
  seg.flags = seg_flags::kRst;
  seg.ts_val_us = wire_timestamp_us(now);
  xcp::XcpHeader shim;
  shim.format = xcp::Format::kMinimal;
  shim.next_protocol = kNextProtoTransport;
  std::span<uint8_t> out = writer_.buffer();
  const size_t n = xcp::write_header(shim, out);
  const size_t m = write_segment_header(seg, out.subspan(n));
  writer_.commit(remote_addr, n + m);
  ++stats_.resets_sent;
}

void Endpoint::on_control(uint32_t src_addr, std::span<const uint8_t> ip_payload, xcp::Timestamp now) {
  const auto m = xcp::parse_control(ip_payload);
  if (!m) {
    ++stats_.malformed;
    return;
  }
  if (m->type != xcp::ControlType::kRequest) {
    ++stats_.not_ours;
    return;
  }
  std::span<uint8_t> out = writer_.buffer();
  if (out.size() < xcp::kControlMessageLen) return;
  // U's chirps (docs/protocol.md §4, router-image/XCPI_ESTIMATOR.md): the grid R
  // named (value = H), at the engine's defaults (1000 B probes, 2 % of H).
  const uint32_t chirps = sends_xcpi_ ? chirps_.on_request(src_addr, *m, now) : 0;
  stats_.xcpi_chirp_jobs_refused = chirps_.counters().jobs_refused;
  const xcp::ControlMessage ack{xcp::ControlType::kAck, m->session, m->seq, chirps, 0};
  writer_.commit(src_addr, xcp::write_control(ack, out.first(xcp::kControlMessageLen)));
  ++stats_.xcpi_requests_answered;
}

void Endpoint::send_chirps(xcp::Timestamp now) {
  if (chirps_.jobs() == 0) return;
  chirps_.run(now, [&](uint32_t dst, xcp::ControlMessage& probe, size_t payload, xcp::Timestamp) {
    std::span<uint8_t> out = writer_.buffer();
    if (!writer_.has_room() || out.size() < payload) {
      ++stats_.xcpi_probes_unsent;
      return;
    }
    // Stamped with when it really leaves: this clock is not a timeline the
    // probes are serialised on, and R's analysis needs true send offsets.
    probe.value = static_cast<uint64_t>(now.ns());
    writer_.commit(dst, xcp::write_control(probe, out.first(payload)));
    ++stats_.xcpi_probes_sent;
    stats_.xcpi_probe_bytes += 20 + payload;
  });
}

void Endpoint::service(xcp::Timestamp now) {
  send_chirps(now);  // before the connections fill the send batch
  for (auto it = conns_.begin(); it != conns_.end();) {
    Connection& c = *it->second.conn;
    if (c.next_deadline() <= now) c.on_timer(now);
    if (!c.done()) c.pump(now);
    if (c.done() && it->second.accepted) {
      it = conns_.erase(it);
    } else {
      ++it;
    }
  }
}

xcp::Timestamp Endpoint::next_deadline() const {
  xcp::Timestamp t = xcp::Timestamp::max();
  t = std::min(t, chirps_.next_deadline());
  for (const auto& [k, e] : conns_) t = std::min(t, e.conn->next_deadline());
  return t;
}

}  // namespace xcphost
