#include "app/host_stack.hh"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>

#include "io/icmp_filter.hh"

namespace xcphost {
namespace {
RawSocketConfig socket_config(const Options& o) {
  if (o.install_icmp_filter) install_icmp_filter();
  RawSocketConfig c;
  c.ttl = o.ttl;
  return c;
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
  if (o.link_tx) tx.enable_link_output(o.ttl, RawSocketConfig{}.buffer_bytes);
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
}

nlohmann::json HostStack::rx_report() const {
  const auto drops = sock.kernel_drops();
  nlohmann::json j = {{"packets", rx.stats().packets},
                      {"not_ours", ep.stats().not_ours},
                      {"port_filter", sock.filtered()},
                      {"socket_drops", drops ? nlohmann::json(*drops) : nlohmann::json(nullptr)}};
  const EndpointStats& e = ep.stats();
  if (e.xcpi_requests_answered > 0) {  // the XCP-i sender duty (U of a cloud)
    j["xcpi_sender"] = {{"requests_answered", e.xcpi_requests_answered}, {"probes_sent", e.xcpi_probes_sent},
                        {"probe_bytes", e.xcpi_probe_bytes}, {"probes_unsent", e.xcpi_probes_unsent},
                        {"chirp_jobs_refused", e.xcpi_chirp_jobs_refused}};
  }
  return j;
}

}  // namespace xcphost
