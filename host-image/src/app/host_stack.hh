// Everything one xcpperf process needs to talk: clock, raw socket, send and
// receive batches, the endpoint and its I/O loop, built from the options.
#pragma once

#include <memory>
#include <span>

#include <nlohmann/json.hpp>

#include "app/io_loop.hh"
#include "app/options.hh"
#include "io/raw_socket.hh"
#include "io/rx_batch.hh"
#include "io/tx_batch.hh"
#include "io/xdp_socket.hh"
#include "transport/connection_config.hh"
#include "transport/endpoint.hh"
#include "xcpi/receiver_xcpi.hh"
#include "xcp/clock.hh"

namespace xcphost {

// The per-stream send buffer: -w when given, else the share of
// kClientSendBudgetBytes (app/options.hh).
size_t stream_send_buffer_bytes(const Options& o);
// `local_addr`: our IPv4 address towards the peer (host order; XCP-i only).
ConnectionConfig connection_config(const Options& o, uint32_t local_addr = 0);
// The source address the kernel uses towards `dst` (0 when there is no route).
uint32_t local_address_towards(uint32_t dst);

struct HostStack {
  explicit HostStack(const Options& o);
  // From now on the kernel queues only segments to these local ports (and
  // XCP-i control messages): RawSocket::set_port_filter. Not with
  // --no-port-filter, nor with the XCP-i receiver duty, whose virtual router
  // models the host's whole arrival from the cloud, every process's flows.
  void accept_ports(std::span<const PortRange> ports);
  // The end report's receive-side counters: packets taken from the socket,
  // packets for ports this process does not own, kernel drops (buffer full).
  nlohmann::json rx_report() const;
  xcp::MonotonicClock clock;
  RawSocket sock;
  TxBatch tx;
  RxBatch rx;
  Endpoint ep;
  // The XCP-i receiver duty (--xcpi-receiver-cloud or --xcpi-receiver-chirp), else null.
  std::unique_ptr<ReceiverXcpi> xcpi;
  IoLoop loop;
  // --xdp: the AF_XDP socket the batches use (after them: destroyed first).
  std::unique_ptr<XdpSocket> xdp;

 private:
  bool port_filter_;
};

}  // namespace xcphost
