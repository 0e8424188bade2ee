#include "app/options.hh"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <functional>
#include <map>

namespace xcphost {
namespace {

std::optional<double> parse_double(std::string_view s) {
  double v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

// "50M" -> 50e6; K/M/G are decimal multipliers (iperf3 convention for rates).
std::optional<double> parse_scaled(std::string_view s, double k) {
  if (s.empty()) return std::nullopt;
  double mult = 1;
  switch (s.back()) {
    case 'k': case 'K': mult = k; break;
    case 'm': case 'M': mult = k * k; break;
    case 'g': case 'G': mult = k * k * k; break;
    default: break;
  }
  if (mult != 1) s.remove_suffix(1);
  auto v = parse_double(s);
  if (!v || *v < 0) return std::nullopt;
  return *v * mult;
}

// A port number: an integer in 1..65535.
std::optional<uint16_t> parse_port(std::string_view s) {
  auto d = parse_double(s);
  if (!d || *d < 1 || *d > 65535 || *d != std::floor(*d)) return std::nullopt;
  return static_cast<uint16_t>(*d);
}

}  // namespace

std::string_view usage_text() {
  return "usage: xcpperf -s [-p PORT] [--one-off] [--json] [options]\n"
         "       xcpperf -c HOST [-p PORT] [-t SECONDS | -n BYTES] [-P N] [--cc xcp|newreno|hstcp]\n"
         "               [--rate RATE] [-i SECONDS] [--verify] [--json | --json-stream] [options]\n"
         "options:\n"
         "  -p, --port PORT         server port (default 5201); a server may listen on several,\n"
         "                          PORT,PORT,... (at most 32): one process for several flows\n"
         "  -t, --time SECONDS      client: send for this long (default 10)\n"
         "  -n, --bytes BYTES       client: send this many bytes per stream (K/M/G = 1024 multiples)\n"
         "  -P, --parallel N        client: parallel streams (default 1)\n"
         "      --cc NAME           congestion controller: xcp (default), newreno, hstcp\n"
         "      --loss-recovery M   sack (default), newreno or reno: loss repair without SACK\n"
         "                          (reno: recovery ends on the first new ACK, as ns-2's XcpAgent)\n"
         "      --rate RATE         XCP desired rate in bit/s, K/M/G suffix (default unlimited)\n"
         "  -i, --interval SECONDS  report interval (default 1; 0 = none)\n"
         "      --verify            deterministic payload, checked by the server (mismatch: exit 4)\n"
         "  -J, --json              one JSON document at the end, iperf3 layout\n"
         "      --json-stream       one JSON object per line per event (start, interval, end)\n"
         "      --one-off           server: exit after the first client's streams finish\n"
         "      --mss BYTES         payload bytes per segment (default: 1500-byte packets, 1424 or 1416 with --xcpi)\n"
         "  -w, --window BYTES      send buffer per stream (default 16M, at most 256M / -P; -w x -P <= 4G)\n"
         "      --cport PORT        client: first local port (default random)\n"
         "      --connect-timeout S client: give up on SYN after S seconds (default 31)\n"
         "      --no-delayed-ack    acknowledge every segment\n"
         "      --rto-backoff WHEN  sample (default): the timeout back-off ends at the next RTT sample\n"
         "                          (Linux); new-data: only once data sent after the timeout is ACKed (ns-2)\n"
         "      --xcp-feedback FROM all-acks (default): apply every ACK's XCP feedback; new-acks:\n"
         "                          only from ACKs of new data, duplicates' dropped (ns-2's XcpAgent)\n"
         "      --ttl N             IP TTL of sent packets (default 64 with --xcpi, else the kernel's)\n"
         "      --idle-timeout S    drop a connection silent for S seconds (default 30; 0 = never)\n"
         "      --xcpi              send the XCP-i block (xcp_ttl = IP TTL, last_xcp_router = us)\n"
         "      --xcpi-receiver-cloud RATE  run XCP-i's virtual router for a cloud after the last\n"
         "                          XCP-i router; RATE: the cloud path's capacity in bit/s (oracle)\n"
         "      --xcpi-receiver-chirp RATE  the same duty with the chirp estimator: U's probes are analysed\n"
         "                          here; RATE: this host's access link in bit/s (the top probed rate)\n"
         "      --ixcp-link-id ID   send the iXCP block, starting from this access-link id\n"
         "      --install-icmp-filter  add the nft rule dropping ICMP protocol-unreachable\n"
         "      --no-port-filter    receive every XCP packet of the host, not only those to our ports\n"
         "                          (the kernel socket filter is off; for comparisons)\n"
         "      --link-tx           send packets as finished Ethernet frames through a packet socket\n"
         "                          where the route is one Ethernet hop (less CPU per packet; off by\n"
         "                          default: its bursts overflowed the engine's receive rings)\n"
         "      --raw-ip-tx         every packet through the raw IP socket (the default)\n"
         "      --xdp               send and receive this process's frames through an AF_XDP socket\n"
         "                          on the interface towards the server (server: its one interface);\n"
         "                          copy mode, the XDP program is detached when xcpperf exits\n"
         "      --xdp-dev IF        --xdp on interface IF\n"
         "      --title TEXT        label copied into the JSON output\n"
         "      --objects SPEC      client: one connection per object, START_S:BYTES[,...] or @FILE;\n"
         "                          reports each object's completion time (-t: the schedule's deadline)\n"
         "      --max-concurrent N  client, --objects: connections open at once, 1..1024 (default 32)\n"
         "      --job NAME          several clients in one process: [options for all]\n"
         "                          --job NAME -c HOST -p PORT [--objects SPEC] [options] --job ...\n"
         "                          (at most 16; --json-stream, each event tagged \"job\")\n"
         "exit codes: 0 ok, 1 error (lost/reset), 2 usage, 3 connect failed, 4 verify failed\n";
}

ParsedOptions parse_options(const std::vector<std::string_view>& args) {
  Options o;
  bool server = false, client = false, have_time = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string_view a = args[i];
    auto value = [&](std::string_view name) -> std::optional<std::string_view> {
      if (i + 1 >= args.size()) return std::nullopt;
      (void)name;
      return args[++i];
    };
    auto need = [&](std::string_view name, std::string_view what) -> std::string {
      return std::string(name) + ": expected " + std::string(what);
    };
    if (a == "-s" || a == "--server") {
      server = true;
    } else if (a == "-c" || a == "--client") {
      auto v = value(a);
      in_addr addr{};
      if (!v || inet_pton(AF_INET, std::string(*v).c_str(), &addr) != 1) {
        return need(a, "an IPv4 address in dotted-quad form");
      }
      client = true;
      o.host = std::string(*v);
      o.host_addr = ntohl(addr.s_addr);
    } else if (a == "-p" || a == "--port") {
      auto v = value(a);
      if (!v) return need(a, "an integer port in 1..65535, or a list PORT,PORT,...");
      std::vector<uint16_t> ports;
      std::string_view rest = *v;
      while (true) {
        const size_t comma = rest.find(',');
        const auto parsed = parse_port(rest.substr(0, comma));
        if (!parsed) {
          return need(a, "an integer port in 1..65535, or a list PORT,PORT,... (got '" + std::string(*v) + "')");
        }
        const uint16_t port = *parsed;
        if (std::find(ports.begin(), ports.end(), port) != ports.end()) {
          return need(a, "distinct ports (" + std::to_string(port) + " is listed twice)");
        }
        ports.push_back(port);
        if (ports.size() > kMaxServerPorts) {
          return need(a, "at most " + std::to_string(kMaxServerPorts) + " ports in the list");
        }
        if (comma == std::string_view::npos) break;
        rest.remove_prefix(comma + 1);
      }
      o.port = ports.front();
      o.ports = std::move(ports);
    } else if (a == "--cport") {
      auto v = value(a);
      auto port = v ? parse_port(*v) : std::nullopt;
      if (!port) return need(a, "an integer port in 1..65535");
      o.cport = *port;
    } else if (a == "-t" || a == "--time") {
      auto v = value(a);
      auto d = v ? parse_double(*v) : std::nullopt;
      if (!d || *d <= 0) return need(a, "a positive number of seconds");
      o.duration = xcp::Duration::seconds(*d);
      have_time = true;
    } else if (a == "-n" || a == "--bytes") {
      auto v = value(a);
      auto d = v ? parse_scaled(*v, 1024) : std::nullopt;
      if (!d || *d < 1) return need(a, "a positive byte count (K/M/G suffix allowed)");
      o.bytes = static_cast<uint64_t>(*d);
    } else if (a == "-P" || a == "--parallel") {
      auto v = value(a);
      auto d = v ? parse_double(*v) : std::nullopt;
      if (!d || *d < 1 || *d > 1024 || *d != std::floor(*d)) return need(a, "an integer in 1..1024");
      o.parallel = static_cast<uint32_t>(*d);
    } else if (a == "--cc") {
      auto v = value(a);
      auto k = v ? parse_cc_kind(*v) : std::nullopt;
      if (!k) return need(a, "one of xcp, newreno, hstcp");
      o.cc = *k;
    } else if (a == "--loss-recovery") {
      auto v = value(a);
      auto m = v ? parse_loss_recovery(*v) : std::nullopt;
      if (!m) {
        return need(a, "one of " + std::string(kLossRecoveryNames) +
                           (v ? " (got '" + std::string(*v) + "')" : std::string(" (value missing)")));
      }
      o.loss_recovery = *m;
    } else if (a == "--rate" || a == "-b") {
      auto v = value(a);
      auto d = v ? parse_scaled(*v, 1000) : std::nullopt;
      if (!d) return need(a, "a rate in bit/s, e.g. 50M");
      o.rate = xcp::Rate::from_bits_per_s(*d);
    } else if (a == "-i" || a == "--interval") {
      auto v = value(a);
      auto d = v ? parse_double(*v) : std::nullopt;
      if (!d || *d < 0) return need(a, "a non-negative number of seconds");
      o.interval = xcp::Duration::seconds(*d);
    } else if (a == "--verify") {
      o.verify = true;
    } else if (a == "-J" || a == "--json") {
      o.json = true;
    } else if (a == "--json-stream") {
      o.json_stream = true;
    } else if (a == "--one-off" || a == "-1") {
      o.one_off = true;
    } else if (a == "--install-icmp-filter") {
      o.install_icmp_filter = true;
    } else if (a == "--no-port-filter") {
      o.port_filter = false;
    } else if (a == "--raw-ip-tx") {
      o.link_tx = false;
    } else if (a == "--link-tx") {
      o.link_tx = true;
    } else if (a == "--xdp") {
      o.xdp = true;
    } else if (a == "--xdp-dev") {
      auto v = value(a);
      if (!v || v->empty() || v->size() >= 16) return need(a, "an interface name (1..15 characters)");
      o.xdp = true;
      o.xdp_dev = std::string(*v);
    } else if (a == "--no-delayed-ack") {
      o.delayed_ack = false;
    } else if (a == "--rto-backoff") {
      auto v = value(a);
      if (!v || (*v != "sample" && *v != "new-data")) return need(a, "sample or new-data");
      o.rto_backoff_until_new_data = *v == "new-data";
    } else if (a == "--xcp-feedback") {
      auto v = value(a);
      if (!v || (*v != "all-acks" && *v != "new-acks")) return need(a, "all-acks or new-acks");
      o.xcp_feedback_new_acks_only = *v == "new-acks";
    } else if (a == "--mss") {
      auto v = value(a);
      auto d = v ? parse_double(*v) : std::nullopt;
      if (!d || *d < 64 || *d > 8900) return need(a, "payload bytes in 64..8900");
      o.mss = static_cast<uint32_t>(*d);
    } else if (a == "-w" || a == "--window") {
      auto v = value(a);
      auto d = v ? parse_scaled(*v, 1024) : std::nullopt;
      if (!d || *d < 65536) return need(a, "a byte count >= 64K");
      o.window_bytes = static_cast<uint64_t>(*d);
    } else if (a == "--connect-timeout") {
      auto v = value(a);
      auto d = v ? parse_double(*v) : std::nullopt;
      if (!d || *d <= 0) return need(a, "a positive number of seconds");
      o.connect_timeout = xcp::Duration::seconds(*d);
    } else if (a == "--ttl") {
      auto v = value(a);
      auto d = v ? parse_double(*v) : std::nullopt;
      if (!d || *d < 1 || *d > 255) return need(a, "an integer in 1..255");
      o.ttl = static_cast<uint8_t>(*d);
    } else if (a == "--idle-timeout") {
      auto v = value(a);
      auto d = v ? parse_double(*v) : std::nullopt;
      if (!d || *d < 0) return need(a, "a non-negative number of seconds (0 = never)");
      o.idle_timeout = xcp::Duration::seconds(*d);
    } else if (a == "--xcpi") {
      o.xcpi = true;
    } else if (a == "--xcpi-receiver-cloud") {
      auto v = value(a);
      auto d = v ? parse_scaled(*v, 1000) : std::nullopt;
      // A link's capacity bounds (xcplab_contract/bounds.json link.capacity_bps): the
      // planner passes the least capacity of the cloud's links.
      if (!d || *d < 1e3 || *d > 1e11) return need(a, "the cloud path's capacity in bit/s, 1K..100G");
      o.xcpi_receiver_cloud = xcp::Rate::from_bits_per_s(*d);
    } else if (a == "--xcpi-receiver-chirp") {
      auto v = value(a);
      auto d = v ? parse_scaled(*v, 1000) : std::nullopt;
      // H of the chirps: the access link's capacity, within a link's bounds, and
      // at least 100 kb/s so that the grid's floor H/20 and its gaps stay sane.
      if (!d || *d < 1e5 || *d > 1e11) return need(a, "the access link's capacity in bit/s, 100K..100G");
      o.xcpi_receiver_chirp = xcp::Rate::from_bits_per_s(*d);
    } else if (a == "--ixcp-link-id") {
      auto v = value(a);
      auto d = v ? parse_double(*v) : std::nullopt;
      if (!d || *d < 0 || *d > 4294967295.0 || *d != std::floor(*d)) return need(a, "an integer in 0..2^32-1");
      o.ixcp_link_id = static_cast<uint32_t>(*d);
    } else if (a == "--objects") {
      auto v = value(a);
      if (!v) return need(a, "START_S:BYTES[,START_S:BYTES...] or @FILE");
      auto parsed = parse_object_schedule(*v);
      if (auto* err = std::get_if<std::string>(&parsed)) return std::string(a) + ": " + *err;
      o.objects = std::move(std::get<std::vector<ObjectSpec>>(parsed));
    } else if (a == "--max-concurrent") {
      auto v = value(a);
      auto d = v ? parse_double(*v) : std::nullopt;
      if (!d || *d < 1 || *d > 1024 || *d != std::floor(*d)) return need(a, "an integer in 1..1024");
      o.max_concurrent = static_cast<uint32_t>(*d);
    } else if (a == "--title") {
      auto v = value(a);
      if (!v) return need(a, "a text");
      o.title = std::string(*v);
    } else {
      return "unknown option '" + std::string(a) + "'";
    }
  }
  if (server == client) return std::string("exactly one of -s (server) or -c HOST (client) is required");
  o.mode = server ? Options::Mode::kServer : Options::Mode::kClient;
  if (o.ports.size() > 1 && !server) return std::string("-p: a list of ports is for a server (-s); a client connects to one");
  if (o.ports.empty()) o.ports = {o.port};
  if (o.bytes && have_time) return std::string("-t and -n are mutually exclusive");
  if (o.json && o.json_stream) return std::string("--json and --json-stream are mutually exclusive");
  if (!o.objects.empty() && (o.bytes || o.parallel != 1 || server)) {
    return std::string("--objects is a client mode of its own: without -n, -P or -s");
  }
  if (o.window_bytes > kMaxClientSendBytes / o.parallel) {
    return "-w " + std::to_string(o.window_bytes) + " x -P " + std::to_string(o.parallel) +
           " streams: send buffers of more than " + std::to_string(kMaxClientSendBytes >> 20) +
           " MiB per process (valid: -w x -P <= 4 GiB; without -w the streams share 256 MiB)";
  }
  o.time_given = have_time;
  if (!o.xcpi_receiver_cloud.is_zero() && !o.xcpi_receiver_chirp.is_zero()) {
    return std::string("--xcpi-receiver-cloud and --xcpi-receiver-chirp are mutually exclusive (one estimator)");
  }
  if (o.xdp && (!o.xcpi_receiver_cloud.is_zero() || !o.xcpi_receiver_chirp.is_zero())) {
    return std::string("--xdp: not with the XCP-i receiver duty (--xcpi-receiver-*: it needs every packet's kernel stamp)");
  }
  if (o.xcpi && o.ttl == 0) o.ttl = 64;  // XCP-i needs the TTL we send with
  return o;
}

ParsedJobs parse_jobs(const std::vector<std::string_view>& args) {
  std::vector<std::string_view> common;
  std::vector<std::pair<std::string, std::vector<std::string_view>>> segments;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--job") {
      if (i + 1 >= args.size() || args[i + 1].empty() || args[i + 1].starts_with("-")) {
        return std::string("--job: expected a name");
      }
      const std::string_view name = args[++i];
      for (char c : name) {
        if (!std::isalnum(static_cast<unsigned char>(c)) && std::string_view("_.+-").find(c) == std::string_view::npos) {
          return "--job: a name of letters, digits and _.+- (got '" + std::string(name) + "')";
        }
      }
      for (const auto& [other, _] : segments) {
        if (other == name) return "--job: " + std::string(name) + " is named twice";
      }
      if (segments.size() == kMaxJobs) return "--job: at most " + std::to_string(kMaxJobs) + " jobs";
      segments.emplace_back(std::string(name), std::vector<std::string_view>{});
    } else if (segments.empty()) {
      common.push_back(args[i]);
    } else {
      segments.back().second.push_back(args[i]);
    }
  }
  if (segments.empty()) return std::string("--job: no jobs");
  std::vector<Job> jobs;
  size_t objects = 0;
  for (auto& [name, own] : segments) {
    std::vector<std::string_view> all = common;
    all.insert(all.end(), own.begin(), own.end());
    ParsedOptions p = parse_options(all);
    if (auto* err = std::get_if<std::string>(&p)) return "--job " + name + ": " + *err;
    Options& o = std::get<Options>(p);
    if (o.mode != Options::Mode::kClient) {
      return "--job " + name + ": a job is a client (-c HOST [--objects SPEC])";
    }
    if (!o.json_stream) return "--job " + name + ": jobs report with --json-stream only";
    objects += o.objects.empty() ? o.parallel : o.objects.size();
    if (objects > kMaxJobObjects) {
      return "--job: at most " + std::to_string(kMaxJobObjects) + " objects and -P streams in all jobs (one local port each)";
    }
    if (!jobs.empty()) {
      const Options& a = jobs.front().options;
      if (o.ttl != a.ttl || o.link_tx != a.link_tx || o.xdp != a.xdp || o.xdp_dev != a.xdp_dev ||
          o.port_filter != a.port_filter ||
          o.install_icmp_filter != a.install_icmp_filter || o.interval != a.interval ||
          o.xcpi_receiver_cloud != a.xcpi_receiver_cloud || o.xcpi_receiver_chirp != a.xcpi_receiver_chirp ||
          o.cport != a.cport) {  // one block of local ports from the first job's --cport
        return "--job " + name + ": the socket and report options (--ttl, --link-tx, --xdp, --no-port-filter, " +
               "--install-icmp-filter, -i, --xcpi-receiver-*, --cport) must be the same for every job";
      }
    }
    jobs.push_back(Job{name, std::move(o)});
  }
  return jobs;
}

}  // namespace xcphost
