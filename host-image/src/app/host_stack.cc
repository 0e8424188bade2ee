#include "app/host_stack.hh"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <set>
#include <stdexcept>
#include <string>

#include "io/icmp_filter.hh"
#include "io/link_path.hh"
#include "transport/segment.hh"
#include "xcp/header.hh"

namespace xcphost {
namespace {
RawSocketConfig socket_config(const Options& o) {
  if (o.install_icmp_filter) install_icmp_filter();
  RawSocketConfig c;
  c.ttl = o.ttl;
  return c;
}
// The interface --xdp works on and its IPv4 address (host order, 0 if none).
std::pair<int, uint32_t> xdp_interface(const Options& o) {
  std::string dev = o.xdp_dev;
  if (dev.empty() && o.mode == Options::Mode::kClient) {
    const auto path = resolve_link_path(o.host_addr);
    if (!path) {
      throw std::runtime_error("--xdp: the route to " + o.host +
                               " is not one Ethernet hop with a neighbour entry (name an interface with --xdp-dev)");
    }
    char name[IF_NAMESIZE] = {};
    if (if_indextoname(static_cast<unsigned>(path->ifindex), name) != nullptr) dev = name;
  }
  ifaddrs* all = nullptr;
  if (getifaddrs(&all) != 0) throw xcp::SystemError("getifaddrs", errno);
  std::set<std::string> candidates;
  uint32_t addr = 0;
  for (ifaddrs* i = all; i != nullptr; i = i->ifa_next) {
    if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != AF_INET || (i->ifa_flags & IFF_LOOPBACK) != 0) continue;
    if (dev.empty()) candidates.insert(i->ifa_name);
    if ((dev.empty() || dev == i->ifa_name) && addr == 0) {
      addr = ntohl(reinterpret_cast<const sockaddr_in*>(i->ifa_addr)->sin_addr.s_addr);
    }
  }
  freeifaddrs(all);
  if (dev.empty()) {
    if (candidates.size() != 1) {
      throw std::runtime_error("--xdp: " + std::to_string(candidates.size()) +
                               " interfaces with IPv4 addresses here; name one with --xdp-dev");
    }
    dev = *candidates.begin();
  }
  const unsigned ifindex = if_nametoindex(dev.c_str());
  if (ifindex == 0) throw std::runtime_error("--xdp-dev: no interface " + dev);
  return {static_cast<int>(ifindex), addr};
}

}  // namespace

uint32_t local_address_towards(uint32_t dst) {
  // A connected UDP socket sends nothing but resolves the route.
  const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 0;
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(9);
  sa.sin_addr.s_addr = htonl(dst);
  uint32_t out = 0;
  if (connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0) {
    sockaddr_in me{};
    socklen_t len = sizeof me;
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&me), &len) == 0) out = ntohl(me.sin_addr.s_addr);
  }
  close(fd);
  return out;
}

size_t stream_send_buffer_bytes(const Options& o) {
  if (o.window_bytes != 0) return static_cast<size_t>(o.window_bytes);
  const ConnectionConfig defaults;
  const uint64_t share = kClientSendBudgetBytes / std::max<uint32_t>(o.parallel, 1);
  return static_cast<size_t>(std::min<uint64_t>(defaults.send_buffer_bytes, share));
}

ConnectionConfig connection_config(const Options& o, uint32_t local_addr) {
  ConnectionConfig c;
  c.cc = o.cc;
  c.loss_recovery = o.loss_recovery;
  c.desired_rate = o.rate;
  if (o.mss != 0) c.mss_bytes = o.mss;
  c.send_buffer_bytes = stream_send_buffer_bytes(o);
  c.delayed_ack = o.delayed_ack;
  c.rtt.keep_backoff_until_new_data = o.rto_backoff_until_new_data;
  c.xcp_feedback_new_acks_only = o.xcp_feedback_new_acks_only;
  c.connect_timeout = o.connect_timeout;
  c.idle_timeout = o.idle_timeout;
  if (o.xcpi) {
    c.xcpi_ip_ttl = o.ttl;
    c.xcpi_sender_ipv4 = local_addr;
  }
  c.ixcp_access_link_id = o.ixcp_link_id;
  // The XCP-i and iXCP blocks take 8 bytes each: without --mss the payload
  // shrinks so that a full packet still fits the 1500-byte MTU.
  c.mss_bytes = o.mss != 0 ? o.mss : c.mtu_payload_bytes();
  return c;
}

HostStack::HostStack(const Options& o)
    : sock(socket_config(o)), tx(sock), rx(sock), ep(tx), loop(clock, sock, ep, tx, rx), port_filter_(o.port_filter) {
  if (o.link_tx || o.xdp) tx.enable_link_output(o.ttl, RawSocketConfig{}.buffer_bytes);
  if (o.xdp) {
    // A packet is written straight into a UMEM frame: the largest one a
    // connection builds (shim and segment header with SACK blocks, MSS) must fit.
    constexpr size_t kMaxHeaders = xcp::kHeaderMaxLen + kSegmentBaseLen + kMaxSackBlocks * kSackBlockLen;
    const size_t room = XdpSocket::kFrameBytes - kLinkHeadroom;
    if (connection_config(o).mss_bytes + kMaxHeaders > room) {
      throw std::runtime_error("--xdp: --mss at most " + std::to_string(room - kMaxHeaders) + " (UMEM frames of " +
                               std::to_string(XdpSocket::kFrameBytes) + " bytes)");
    }
    if (!tx.link_output()) throw std::runtime_error("--xdp: cannot open the packet socket for link paths");
    const auto [ifindex, addr] = xdp_interface(o);
    // With the port filter, no port is redirected until accept_ports() names ours.
    xdp = std::make_unique<XdpSocket>(XdpSocketConfig{ifindex, 0, addr, !o.port_filter});
    tx.enable_xdp_output(xdp.get());
    rx.attach_xdp(xdp.get());
  }
  if (!o.xcpi_receiver_cloud.is_zero() || !o.xcpi_receiver_chirp.is_zero()) {
    ReceiverXcpiConfig c;
    c.path_capacity = o.xcpi_receiver_cloud;
    if (!o.xcpi_receiver_chirp.is_zero()) {
      c.estimator = ReceiverEstimator::kChirp;
      c.chirp_high_rate = o.xcpi_receiver_chirp;
      rx.enable_timestamps();  // the probes' spacing, as the kernel saw it
    }
    xcpi = std::make_unique<ReceiverXcpi>(c, tx);
    loop.set_receiver_xcpi(xcpi.get());
  }
}

void HostStack::accept_ports(std::span<const PortRange> ports) {
  if (!port_filter_ || xcpi) return;
  sock.set_port_filter(ports);
  if (xdp) xdp->set_ports(ports);
}

nlohmann::json HostStack::rx_report() const {
  const auto drops = sock.kernel_drops();
  nlohmann::json j = {{"packets", rx.stats().packets},
                      {"not_ours", ep.stats().not_ours},
                      {"port_filter", sock.filtered()},
                      {"socket_drops", drops ? nlohmann::json(*drops) : nlohmann::json(nullptr)}};
  if (xdp) {
    const xdp_statistics k = xdp->kernel_stats();
    j["xdp"] = {{"packets", rx.stats().xdp_packets}, {"native", xdp->native()},
                {"rx_dropped", k.rx_dropped}, {"rx_ring_full", k.rx_ring_full},
                {"fill_ring_empty", k.rx_fill_ring_empty_descs}};
  }
  const EndpointStats& e = ep.stats();
  if (e.xcpi_requests_answered > 0) {  // the XCP-i sender duty (U of a cloud)
    j["xcpi_sender"] = {{"requests_answered", e.xcpi_requests_answered}, {"probes_sent", e.xcpi_probes_sent},
                        {"probe_bytes", e.xcpi_probe_bytes}, {"probes_unsent", e.xcpi_probes_unsent},
                        {"chirp_jobs_refused", e.xcpi_chirp_jobs_refused}};
  }
  return j;
}

}  // namespace xcphost
