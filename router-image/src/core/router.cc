#include "core/router.hh"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "core/checksum.hh"
#include "core/frame_parser.hh"
#include "qdisc/qdisc_factory.hh"
#include "qdisc/xcp_qdisc.hh"
#include "xcp/control_message.hh"
#include "util/seed.hh"

namespace xcprouter {

namespace {

constexpr uint8_t kProtoIcmp = 1;
constexpr uint8_t kIcmpEchoRequest = 8;
constexpr uint8_t kIcmpEchoReply = 0;
constexpr uint8_t kLocalTtl = 64;
constexpr uint8_t kProtoXcp = xcp::kIpProtoXcp;

uint16_t be16(const uint8_t* b) { return static_cast<uint16_t>(b[0] << 8 | b[1]); }
void put16(uint8_t* b, uint16_t v) {
  b[0] = static_cast<uint8_t>(v >> 8);
  b[1] = static_cast<uint8_t>(v);
}

// A fresh IPv4 header (no options) for a packet this router originates.
void write_local_ipv4_header(uint8_t* ip, uint16_t total, uint8_t proto, uint32_t from, uint32_t to,
                             uint16_t flags_fragment = 0) {
  std::memset(ip, 0, 20);
  ip[0] = 0x45;
  put16(ip + 2, total);
  put16(ip + 6, flags_fragment);
  ip[8] = kLocalTtl;
  ip[9] = proto;
  for (int i = 0; i < 4; ++i) {
    ip[12 + i] = static_cast<uint8_t>(from >> (24 - 8 * i));
    ip[16 + i] = static_cast<uint8_t>(to >> (24 - 8 * i));
  }
  put16(ip + 10, internet_checksum(ip, 20));
}

std::unique_ptr<Link> build_link(const LinkConfig& c, uint64_t seed, uint64_t link_no, PacketSink& sink) {
  auto qdisc = c.queue.make(qdisc_seed(seed, link_no));
  auto link = std::make_unique<Link>(c.capacity(), c.delay, std::move(qdisc),
                                     LossModel(c.loss, loss_seed(seed, link_no)), sink);
  if (!c.up) link->set_up(false, xcp::Timestamp::zero());
  return link;
}

}  // namespace

Router::Router(const RouterConfig& config, uint64_t seed, uint64_t first_port_index,
               std::vector<PacketSink*> tx)
    : name_(config.name), xcp_address_(config.xcp_address) {
  if (tx.size() != config.ports.size()) throw std::invalid_argument("router " + name_ + ": one transmit sink per port");
  for (size_t i = 0; i < config.ports.size(); ++i) {
    auto port = std::make_unique<Port>();
    port->config = config.ports[i];
    if (!port->config.mac) throw std::invalid_argument("router " + name_ + ": port " + port->config.name + " has no MAC");
    const uint64_t index = first_port_index + i;
    port->forward_stage = std::make_unique<ForwardStage>(*this, static_cast<uint16_t>(i));
    port->transmit_stage = std::make_unique<TransmitStage>(*tx[i], port->counters);
    port->egress = build_link(port->config.egress, seed, link_number(index, false), *port->transmit_stage);
    if (port->config.ingress) {
      port->ingress = build_link(*port->config.ingress, seed, link_number(index, true), *port->forward_stage);
    }
    ports_.push_back(std::move(port));
  }
  for (const RouteConfig& r : config.routes) routes_.add(r.prefix, NextHop{r.port, r.next_hop_mac});
  if (config.xcpi) {
    xcpi_ = std::make_unique<XcpiNode>(
        *config.xcpi, xcp_address_, XcpParams{}, splitmix64(seed ^ (first_port_index << 32) ^ 0x58435049ull),
        [this](uint32_t dst, const xcp::ControlMessage& m, size_t len, xcp::Timestamp at) {
          send_control(dst, m, len, at);
        },
        [this] { return xcp_persistent_queue(); },
        [this](uint16_t port) {
          return port < ports_.size() ? ports_[port]->egress->capacity().bits_per_s() : 0.0;
        });
  }
}

double Router::xcp_persistent_queue() const {
  double q = 0;
  for (const auto& port : ports_) {
    if (const auto* x = dynamic_cast<const XcpQdisc*>(&port->egress->qdisc())) q = std::max(q, x->persistent_queue());
  }
  return q;
}

void Router::send_control(uint32_t dst, const xcp::ControlMessage& m, size_t ip_payload_bytes, xcp::Timestamp now) {
  const size_t ip_len = 20 + std::max(ip_payload_bytes, xcp::kControlMessageLen);
  PacketPtr p = std::make_unique<Packet>();
  if (14 + ip_len > Packet::kCapacity) return;
  uint8_t* d = p->data();
  std::memset(d, 0, 14);
  d[12] = 0x08;  // EtherType IPv4; MACs are written by route_out
  uint8_t* ip = d + 14;
  // DF: probes must cross the cloud whole.
  write_local_ipv4_header(ip, static_cast<uint16_t>(ip_len), kProtoXcp, xcp_address_, dst, 0x4000);
  xcp::write_control(m, {ip + 20, ip_len - 20});
  p->frame_len = static_cast<uint32_t>(14 + ip_len);
  p->ip_offset = 14;
  p->ip_total_len = static_cast<uint16_t>(ip_len);
  p->xcp_offset = 14 + 20;
  p->xcp = xcp::parse_header({ip + 20, ip_len - 20}).header;
  p->ip_ttl_in = kLocalTtl;
  p->flow = FlowKey{xcp_address_, dst, 0, 0, kProtoXcp};
  p->arrival = now;
  p->enqueued = now;
  if (!ports_.empty()) route_out(0, p, now);
}

int Router::find_port(const std::string& name) const {
  for (size_t i = 0; i < ports_.size(); ++i) {
    if (ports_[i]->config.name == name) return static_cast<int>(i);
  }
  return -1;
}

void Router::set_lateness_threshold(xcp::Duration d) {
  for (auto& p : ports_) {
    p->egress->set_lateness_threshold(d);
    if (p->ingress) p->ingress->set_lateness_threshold(d);
  }
}

void Router::note_wall_time(xcp::Timestamp now) {
  last_advance_ = now;
  for (auto& p : ports_) {
    p->egress->note_wall_time(now);
    if (p->ingress) p->ingress->note_wall_time(now);
  }
}

void Router::receive(uint16_t port, PacketPtr p, xcp::Timestamp now, bool for_us) {
  Port& in = *ports_[port];
  ++in.counters.rx_packets;
  in.counters.rx_bytes += p->frame_len;
  if (!for_us) {
    ++in.counters.drops_not_for_us;
    return;
  }
  const ParseOutcome parsed = parse_frame(*p);
  if (parsed.verdict == ParseVerdict::kNonIpv4) {
    ++in.counters.drops_non_ipv4;
    return;
  }
  if (parsed.verdict == ParseVerdict::kMalformed) {
    ++in.counters.drops_malformed;
    return;
  }
  if (parsed.xcp_shim_malformed) ++in.counters.xcp_shim_malformed;
  p->in_port = port;
  p->arrival = now;
  if (in.ingress) {
    in.ingress->offer(std::move(p), now);
  } else {
    forward(port, std::move(p), now);
  }
}

bool Router::is_local_address(uint32_t addr) const {
  if (addr == xcp_address_) return true;
  for (const auto& p : ports_) {
    if (p->config.ipv4.addr == addr) return true;
  }
  return false;
}

bool Router::route_out(uint16_t in_port, PacketPtr& p, xcp::Timestamp now) {
  const NextHop* hop = routes_.lookup(p->flow.dst);
  if (hop == nullptr) {
    ++ports_[in_port]->counters.drops_no_route;
    return false;
  }
  Port& out = *ports_[hop->port];
  uint8_t* eth = p->data();
  std::memcpy(eth, hop->mac.bytes.data(), 6);
  std::memcpy(eth + 6, out.config.mac->bytes.data(), 6);
  out.egress->offer(std::move(p), now);
  return true;
}

void Router::forward(uint16_t in_port, PacketPtr p, xcp::Timestamp now) {
  if (is_local_address(p->flow.dst)) {
    if (xcpi_ && p->flow.proto == kProtoXcp && p->has_xcp() && p->xcp.format == xcp::Format::kControl) {
      xcpi_->on_control(*p, now);
      return;
    }
    answer_echo(in_port, std::move(p), now);
    return;
  }
  uint8_t* ip = p->data() + p->ip_offset;
  const uint8_t ttl = ip[8];
  if (ttl <= 1) {
    ++ports_[in_port]->counters.drops_ttl;
    send_time_exceeded(in_port, std::move(p), now);
    return;
  }
  // TTL shares its 16-bit word with the protocol; RFC 1624 update of that word.
  const uint16_t old_word = be16(ip + 8);
  ip[8] = static_cast<uint8_t>(ttl - 1);
  put16(ip + 10, checksum_update(be16(ip + 10), old_word, be16(ip + 8)));
  if (xcpi_) xcpi_->on_data(*p, now);
  route_out(in_port, p, now);
}

void Router::answer_echo(uint16_t in_port, PacketPtr p, xcp::Timestamp now) {
  uint8_t* ip = p->data() + p->ip_offset;
  const size_t ihl = static_cast<size_t>(ip[0] & 0x0F) * 4;
  const size_t icmp_len = p->ip_total_len - ihl;
  uint8_t* icmp = ip + ihl;
  const bool fragment = (be16(ip + 6) & 0x3FFF) != 0;
  if (ip[9] != kProtoIcmp || fragment || icmp_len < 8 || icmp[0] != kIcmpEchoRequest ||
      internet_checksum(icmp, icmp_len) != 0) {
    ++ports_[in_port]->counters.drops_local;
    return;
  }
  // Echo reply: swap addresses, fresh TTL, type 8 -> 0 (RFC 792).
  uint8_t tmp[4];
  std::memcpy(tmp, ip + 12, 4);
  std::memcpy(ip + 12, ip + 16, 4);
  std::memcpy(ip + 16, tmp, 4);
  ip[8] = kLocalTtl;
  put16(ip + 10, 0);
  put16(ip + 10, internet_checksum(ip, ihl));
  const uint16_t old_word = be16(icmp);
  icmp[0] = kIcmpEchoReply;
  put16(icmp + 2, checksum_update(be16(icmp + 2), old_word, be16(icmp)));
  std::swap(p->flow.src, p->flow.dst);
  ++ports_[in_port]->counters.icmp_echo_replies;
  route_out(in_port, p, now);
}

void Router::send_time_exceeded(uint16_t in_port, PacketPtr p, xcp::Timestamp now) {
  const int64_t second = now.ns() / 1'000'000'000;
  if (second != icmp_window_second_) {
    icmp_window_second_ = second;
    icmp_window_count_ = 0;
  }
  if (icmp_window_count_ >= kIcmpErrorsPerSecond) return;
  uint8_t* d = p->data();
  uint8_t* ip = d + p->ip_offset;
  const size_t ihl = static_cast<size_t>(ip[0] & 0x0F) * 4;
  const bool later_fragment = (be16(ip + 6) & 0x1FFF) != 0;
  // Never an error about an ICMP error (RFC 1122 3.2.2), nor about a later fragment.
  if (later_fragment) return;
  if (ip[9] == kProtoIcmp) {
    const uint8_t type = p->ip_total_len >= ihl + 1 ? ip[ihl] : 0xFF;
    if (type != kIcmpEchoRequest && type != kIcmpEchoReply) return;
  }
  ++icmp_window_count_;
  // Quote the original IP header + 8 bytes (RFC 792) behind new IP + ICMP headers.
  constexpr size_t kHeaders = 20 + 8;
  const size_t quote = std::min<size_t>(ihl + 8, p->ip_total_len);
  std::memmove(ip + kHeaders, ip, quote);
  const uint32_t to = p->flow.src;
  const uint32_t from = ports_[in_port]->config.ipv4.addr;
  const uint16_t total = static_cast<uint16_t>(kHeaders + quote);
  write_local_ipv4_header(ip, total, kProtoIcmp, from, to);
  uint8_t* icmp = ip + 20;
  std::memset(icmp, 0, 8);
  icmp[0] = 11;  // time exceeded, code 0: TTL exceeded in transit
  put16(icmp + 2, internet_checksum(icmp, 8 + quote));
  p->ip_total_len = total;
  p->frame_len = static_cast<uint32_t>(p->ip_offset + total);
  p->xcp_offset = 0;
  p->flow = FlowKey{from, to, 0, 0, kProtoIcmp};
  ++ports_[in_port]->counters.icmp_time_exceeded;
  route_out(in_port, p, now);
}

Router::Upcoming Router::advance(xcp::Timestamp now) {
  last_advance_ = now;
  if (xcpi_) xcpi_->advance(now);
  const uint64_t offers = Link::offers_made();
  Upcoming u;
  for (auto& port : ports_) {
    if (port->ingress) {
      u.deadline = std::min(u.deadline, port->ingress->advance(now));
      u.delivery = std::min(u.delivery, port->ingress->next_delivery());
    }
    u.deadline = std::min(u.deadline, port->egress->advance(now));
    u.delivery = std::min(u.delivery, port->egress->next_delivery());
  }
  // A link that delivered into this router (ingress -> forward -> egress, an
  // answer) may have changed a link read before it: read them all again.
  if (Link::offers_made() != offers) return {next_deadline(), next_delivery()};
  if (xcpi_) u.deadline = std::min(u.deadline, xcpi_->next_deadline());
  return u;
}

xcp::Timestamp Router::next_deadline() const {
  xcp::Timestamp t = xcpi_ ? xcpi_->next_deadline() : xcp::Timestamp::max();
  for (const auto& port : ports_) {
    if (port->ingress) t = std::min(t, port->ingress->next_deadline());
    t = std::min(t, port->egress->next_deadline());
  }
  return t;
}

xcp::Timestamp Router::next_delivery() const {
  xcp::Timestamp t = xcp::Timestamp::max();
  for (const auto& port : ports_) {
    if (port->ingress) t = std::min(t, port->ingress->next_delivery());
    t = std::min(t, port->egress->next_delivery());
  }
  return t;
}

xcp::Duration Router::min_link_delay() const {
  xcp::Duration d = xcp::Duration::infinite();
  for (const auto& port : ports_) {
    if (port->ingress) d = std::min(d, port->ingress->delay());
    d = std::min(d, port->egress->delay());
  }
  return d;
}

nlohmann::json Router::stats_json(const std::function<void()>& between_ports) const {
  nlohmann::json ports = nlohmann::json::object();
  for (const auto& port : ports_) {
    if (between_ports) between_ports();
    const PortCounters& c = port->counters;
    ports[port->config.name] = {
        {"ifname", port->config.ifname},
        {"mac", port->config.mac->to_string()},
        {"ipv4", ipv4_to_string(port->config.ipv4.addr) + "/" + std::to_string(port->config.ipv4.len)},
        {"rx_packets", c.rx_packets},
        {"rx_bytes", c.rx_bytes},
        {"tx_packets", c.tx_packets},
        {"tx_bytes", c.tx_bytes},
        {"drops",
         {{"malformed", c.drops_malformed},
          {"non_ipv4", c.drops_non_ipv4},
          {"ttl", c.drops_ttl},
          {"no_route", c.drops_no_route},
          {"not_for_us", c.drops_not_for_us},
          {"local", c.drops_local}}},
        {"xcp_shim_malformed", c.xcp_shim_malformed},
        {"icmp_echo_replies", c.icmp_echo_replies},
        {"icmp_time_exceeded", c.icmp_time_exceeded},
        {"egress", port->egress->stats_json(last_advance_)},
        {"ingress", port->ingress ? port->ingress->stats_json(last_advance_) : nlohmann::json(nullptr)},
    };
  }
  nlohmann::json out = {{"ports", std::move(ports)}, {"xcp_address", ipv4_to_string(xcp_address_)}};
  if (xcpi_) xcpi_->report(out, last_advance_);
  return out;
}

}  // namespace xcprouter
