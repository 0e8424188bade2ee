#include "app/host_stack.hh"

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

ConnectionConfig connection_config(const Options& o) {
  ConnectionConfig c;
  c.cc = o.cc;
  c.desired_rate = o.rate;
  if (o.mss != 0) c.mss_bytes = o.mss;
  if (o.window_bytes != 0) c.send_buffer_bytes = o.window_bytes;
  c.delayed_ack = o.delayed_ack;
  c.connect_timeout = o.connect_timeout;
  return c;
}

HostStack::HostStack(const Options& o)
    : sock(socket_config(o)), tx(sock), rx(sock), ep(tx), loop(clock, sock, ep, tx, rx) {}

}  // namespace xcphost
