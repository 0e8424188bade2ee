#include "app/server.hh"

#include <arpa/inet.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/host_stack.hh"
#include "app/server_stream.hh"
#include "app/signals.hh"

namespace xcphost {
namespace {

std::string ipv4_string(uint32_t addr) {
  in_addr a{htonl(addr)};
  char buf[INET_ADDRSTRLEN] = {};
  inet_ntop(AF_INET, &a, buf, sizeof buf);
  return buf;
}

void print_finished(const Options& o, const FlowKey& k, const ServerStream& s, xcp::Timestamp now) {
  const double secs = (now - s.accepted_at()).seconds_f();
  const auto& r = s.report();
  const double mbps = secs > 0 ? static_cast<double>(r.bytes_received) * 8 / secs / 1e6 : 0;
  if (o.json || o.json_stream) {
    const nlohmann::json j = {{"event", "stream_end"},
                              {"data",
                               {{"remote_host", ipv4_string(k.remote_addr)},
                                {"remote_port", k.remote_port},
                                {"local_port", k.local_port},
                                {"bytes", r.bytes_received},
                                {"seconds", secs},
                                {"bits_per_second", mbps * 1e6},
                                {"verify", to_string(r.verify)},
                                {"first_mismatch_offset", r.first_mismatch_offset}}}};
    std::printf("%s\n", j.dump().c_str());
  } else {
    std::printf("stream from %s:%u: %llu bytes in %.2f s = %.2f Mbits/sec, verify %s\n",
                ipv4_string(k.remote_addr).c_str(), k.remote_port,
                static_cast<unsigned long long>(r.bytes_received), secs, mbps, to_string(r.verify));
  }
  std::fflush(stdout);
}

}  // namespace

int run_server(const Options& o) {
  install_stop_signals();
  HostStack hs(o);
  ConnectionConfig cfg = connection_config(o);
  // The server only sends its small report: its controller never matters,
  // but a TCP-style one keeps its data packets free of XCP requests.
  cfg.cc = CcKind::kNewReno;
  // ... and it never holds more than that report: no multi-MB send buffer per stream.
  cfg.send_buffer_bytes = 64 * 1024;
  std::map<Connection*, std::pair<FlowKey, std::unique_ptr<ServerStream>>> streams;
  // With several ports (-p P1,P2,...: one process serving several flows), --one-off
  // waits for a client on every port: each flow is one test.
  std::map<uint16_t, uint64_t> accepted;
  bool any_mismatch = false;
  std::vector<PortRange> listening;
  for (uint16_t port : o.ports) listening.push_back(PortRange{port, port});
  hs.accept_ports(listening);
  for (uint16_t port : o.ports) {
    accepted[port] = 0;
    hs.ep.listen(port, cfg, [&, port](Connection& c) {
      auto s = std::make_unique<ServerStream>(hs.clock.now());
      ServerStream* raw = s.get();
      streams[&c] = {c.key(), std::move(s)};
      ++accepted[port];
      return raw;
    });
  }
  auto every_port_served = [&] {
    for (const auto& [port, n] : accepted) {
      if (n == 0) return false;
    }
    return true;
  };
  if (!o.json && !o.json_stream) {
    std::string ports;
    for (uint16_t port : o.ports) ports += (ports.empty() ? "" : ",") + std::to_string(port);
    std::printf("xcpperf server listening on port%s %s (IP protocol 253)\n", o.ports.size() > 1 ? "s" : "",
                ports.c_str());
    std::fflush(stdout);
  }
  // The receiver duty's state every -i seconds (JSON modes): the run's `xcpi` series.
  const bool xcpi_series = hs.xcpi && (o.json || o.json_stream) && o.interval > xcp::Duration::zero();
  xcp::Timestamp next_xcpi = xcpi_series ? hs.clock.now() + o.interval : xcp::Timestamp::max();
  hs.loop.run({[&](xcp::Timestamp now) {
                 if (now >= next_xcpi) {
                   const nlohmann::json j = {{"event", "xcpi_interval"}, {"data", hs.xcpi->report()}};
                   std::printf("%s\n", j.dump().c_str());
                   std::fflush(stdout);
                   while (next_xcpi <= now) next_xcpi = next_xcpi + o.interval;
                 }
                 // The endpoint has already forgotten finished connections; their handlers go now.
                 for (auto it = streams.begin(); it != streams.end();) {
                   if (!it->second.second->closed()) {
                     ++it;
                     continue;
                   }
                   const ServerStream& s = *it->second.second;
                   if (!s.bad_preamble()) print_finished(o, it->second.first, s, now);
                   any_mismatch = any_mismatch || s.report().verify == VerifyStatus::kMismatch;
                   it = streams.erase(it);
                 }
                 if (stop_requested()) return false;
                 return !(o.one_off && every_port_served() && streams.empty());
               },
               [&] { return next_xcpi; }});
  if (hs.xcpi) {
    // The receiver duty's counters, for the run directory (the server's log).
    const nlohmann::json j = {{"event", "xcpi_receiver"}, {"data", hs.xcpi->report()}};
    std::fprintf(o.json || o.json_stream ? stdout : stderr, "%s\n", j.dump().c_str());
  }
  // Receive-side counters (kernel drops: starvation), for the server's log.
  std::fprintf(stderr, "%s\n", nlohmann::json({{"event", "rx"}, {"data", hs.rx_report()}}).dump().c_str());
  return any_mismatch ? kExitVerifyFailed : kExitOk;
}

}  // namespace xcphost
