#include "app/client.hh"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "app/client_stream.hh"
#include "app/host_stack.hh"
#include "app/report.hh"
#include "app/signals.hh"
#include "app/stream_sample.hh"

namespace xcphost {
namespace {

// After the test ends, streams get this long to deliver their FIN and the
// server's report before the client gives up.
constexpr xcp::Duration kCloseGrace = xcp::Duration::seconds(10);

std::string ipv4_string(uint32_t addr) {
  in_addr a{htonl(addr)};
  char buf[INET_ADDRSTRLEN] = {};
  inet_ntop(AF_INET, &a, buf, sizeof buf);
  return buf;
}

uint16_t first_local_port(const Options& o, xcp::Timestamp now) {
  if (o.cport != 0) return o.cport;
  // Ephemeral range 32768..60999 (Linux default); pid and clock keep
  // concurrent clients on one host apart.
  const uint64_t mix = static_cast<uint64_t>(now.ns()) ^ (static_cast<uint64_t>(getpid()) * 2654435761ULL);
  return static_cast<uint16_t>(32768 + mix % (61000 - 32768 - 128));
}

struct Stream {
  std::unique_ptr<ClientStream> app;
  Connection* conn;
  StreamSampler sampler;
};

nlohmann::json start_json(const Options& o, const std::vector<Stream>& streams) {
  nlohmann::json connected = nlohmann::json::array();
  const std::string local = ipv4_string(local_address_towards(o.host_addr));
  for (const auto& s : streams) {
    connected.push_back({{"socket", &s - &streams[0] + 1},
                         {"local_host", local},
                         {"local_port", s.conn->key().local_port},
                         {"remote_host", o.host},
                         {"remote_port", o.port}});
  }
  utsname u{};
  uname(&u);
  const auto secs = std::chrono::duration_cast<std::chrono::seconds>(
                        std::chrono::system_clock::now().time_since_epoch()).count();
  return {{"connected", connected},
          {"version", std::string("xcpperf ") + XCPLAB_VERSION},
          {"system_info", std::string(u.sysname) + " " + u.nodename + " " + u.release + " " + u.machine},
          {"timestamp", {{"timesecs", secs}}},
          {"connecting_to", {{"host", o.host}, {"port", o.port}}},
          {"cc", std::string(to_string(o.cc))},
          {"loss_recovery", std::string(to_string(o.loss_recovery))},
          {"title", o.title},
          {"test_start",
           {{"protocol", "XCP"},
            {"num_streams", o.parallel},
            {"duration", o.bytes ? 0.0 : o.duration.seconds_f()},
            {"bytes", o.bytes.value_or(0)},
            {"rate_bps", o.rate.bits_per_s()},
            {"mss", connection_config(o).mss_bytes},
            {"verify", o.verify}}}};
}

}  // namespace

int run_client(const Options& o) {
  install_stop_signals();
  HostStack hs(o);
  const ConnectionConfig cfg = connection_config(o, local_address_towards(o.host_addr));
  Reporter rep(o.json ? Reporter::Format::kJson
                      : (o.json_stream ? Reporter::Format::kJsonStream : Reporter::Format::kText),
               stdout);

  std::vector<Stream> streams;
  streams.reserve(o.parallel);
  const uint16_t port0 = first_local_port(o, hs.clock.now());
  // Ports port0 + i as uint16_t: past 65535 they wrap to 0.
  hs.accept_ports(consecutive_ports(port0, o.parallel, 0));
  for (uint32_t i = 0; i < o.parallel; ++i) {
    auto app = std::make_unique<ClientStream>(o.verify, o.bytes);
    const FlowKey key{o.host_addr, static_cast<uint16_t>(port0 + i), o.port};
    Connection& c = hs.ep.connect(key, cfg, app.get(), hs.clock.now());
    streams.push_back(Stream{std::move(app), &c, StreamSampler(static_cast<int>(i + 1))});
  }
  rep.info("Connecting to host " + o.host + ", port " + std::to_string(o.port) + " (cc " +
           std::string(to_string(o.cc)) + ")");

  // Phase 1: handshakes.
  bool interrupted = false;
  hs.loop.run({[&](xcp::Timestamp) {
                 if (stop_requested()) interrupted = true;
                 bool all = true;
                 for (auto& s : streams) {
                   if (s.conn->done()) return false;
                   all = all && s.app->established();
                 }
                 return !all && !interrupted;
               },
               [] { return xcp::Timestamp::max(); }});
  for (auto& s : streams) {
    if (s.conn->state() == ConnState::kFailed) {
      rep.error("cannot connect to " + o.host + ":" + std::to_string(o.port) + ": " +
                std::string(to_string(s.conn->error())));
      return kExitConnectFailed;
    }
  }
  if (interrupted) {
    rep.error("interrupted while connecting");
    return kExitError;
  }
  rep.start(start_json(o, streams));
  for (size_t i = 0; i < streams.size(); ++i) {
    rep.info("[" + std::to_string(i + 1) + "] local port " + std::to_string(streams[i].conn->key().local_port) +
             " connected to " + o.host + " port " + std::to_string(o.port));
  }

  // Phase 2: the test, then closing.
  const xcp::Timestamp t0 = hs.clock.now();
  const bool timed = !o.bytes.has_value();
  const xcp::Timestamp test_end = timed ? t0 + o.duration : xcp::Timestamp::max();
  const bool ticking = o.interval > xcp::Duration::zero();
  xcp::Timestamp next_tick = ticking ? t0 + o.interval : xcp::Timestamp::max();
  xcp::Timestamp close_deadline = xcp::Timestamp::max();
  bool closing = false;
  double last_tick_s = 0;
  std::vector<StreamSample> samples;
  auto sample_all = [&](double end_s) {
    samples.clear();
    for (auto& s : streams) samples.push_back(s.sampler.take(*s.conn, end_s));
    rep.interval(samples, last_tick_s, end_s);
    last_tick_s = end_s;
  };
  auto begin_close = [&](xcp::Timestamp now) {
    if (closing) return;
    closing = true;
    close_deadline = now + kCloseGrace;
    for (auto& s : streams) s.conn->close(/*discard_unsent=*/true);
  };
  double data_end_s = 0;  // when the last stream's data was fully acknowledged
  hs.loop.run({[&](xcp::Timestamp now) {
                 if (stop_requested()) interrupted = true;
                 if (interrupted || now >= test_end) begin_close(now);
                 bool all_done = true, data_done = true;
                 for (auto& s : streams) {
                   all_done = all_done && s.conn->done();
                   data_done = data_done && (s.conn->done() || (s.conn->closing() && s.conn->bytes_in_flight() == 0));
                 }
                 if (data_done && data_end_s == 0) data_end_s = (now - t0).seconds_f();
                 if (!closing && now >= next_tick) {
                   sample_all((now - t0).seconds_f());
                   while (next_tick <= now) next_tick += o.interval;
                 }
                 return !all_done && now < close_deadline;
               },
               [&] { return std::min({next_tick, test_end, close_deadline}); }});
  const double end_s = data_end_s > 0 ? data_end_s : (hs.clock.now() - t0).seconds_f();
  if (ticking && end_s - last_tick_s > 1e-3) sample_all(end_s);

  // End section: sender totals from our counters, receiver totals from the server's reports.
  nlohmann::json end_streams = nlohmann::json::array();
  std::vector<StreamSample> totals;
  uint64_t received = 0;
  std::string failure;
  bool verify_failed = false;
  for (auto& s : streams) {
    StreamSample t = s.sampler.total(*s.conn, end_s);
    totals.push_back(t);
    const auto report = s.app->report();
    const uint64_t rx_bytes = report ? report->bytes_received : 0;
    received += rx_bytes;
    auto sender = stream_json(t);
    sender["max_snd_cwnd"] = s.sampler.max_cwnd();
    sender["max_rtt"] = s.sampler.max_rtt_us();
    sender["min_rtt"] = s.sampler.min_rtt_us();
    sender["mean_rtt"] = s.sampler.mean_rtt_us();
    nlohmann::json receiver = {{"socket", t.id},
                               {"start", 0.0},
                               {"end", end_s},
                               {"seconds", end_s},
                               {"bytes", rx_bytes},
                               {"bits_per_second", end_s > 0 ? static_cast<double>(rx_bytes) * 8 / end_s : 0.0},
                               {"verify", report ? to_string(report->verify) : "unknown"},
                               {"sender", false}};
    end_streams.push_back({{"sender", sender}, {"receiver", receiver}});
    if (s.conn->state() == ConnState::kFailed) {
      failure = "stream " + std::to_string(t.id) + ": " + std::string(to_string(s.conn->error()));
    } else if (!s.conn->done()) {
      failure = "stream " + std::to_string(t.id) + ": no FIN/report from the server within " +
                std::to_string(kCloseGrace.seconds_f()) + " s of the end of the test";
    } else if (s.app->bad_report() || !report) {
      failure = "stream " + std::to_string(t.id) + ": the server sent no valid end-of-stream report";
    } else if (report->verify == VerifyStatus::kMismatch) {
      verify_failed = true;
      failure = "stream " + std::to_string(t.id) + ": --verify: payload mismatch at payload offset " +
                std::to_string(report->first_mismatch_offset);
    } else if (o.verify && report->verify != VerifyStatus::kOk) {
      verify_failed = true;
      failure = "stream " + std::to_string(t.id) + ": --verify requested but the server did not verify";
    }
  }
  nlohmann::json sum_sent = sum_json(totals, 0, end_s);
  nlohmann::json sum_received = {{"start", 0.0},
                                 {"end", end_s},
                                 {"seconds", end_s},
                                 {"bytes", received},
                                 {"bits_per_second", end_s > 0 ? static_cast<double>(received) * 8 / end_s : 0.0},
                                 {"sender", false}};
  nlohmann::json end = {{"streams", end_streams},
                        {"sum_sent", sum_sent},
                        {"sum_received", sum_received},
                        {"sender_cc", std::string(to_string(o.cc))},
                        {"sender_loss_recovery", std::string(to_string(o.loss_recovery))},
                        {"verify", !o.verify ? "off" : (verify_failed ? "mismatch" : "ok")},
                        {"interrupted", interrupted},
                        {"tx_errors", hs.tx.stats().errors},
                        {"tx_link_packets", hs.tx.stats().link_packets},
                        {"tx_xdp_packets", hs.tx.stats().xdp_packets},
                        {"rx", hs.rx_report()}};
  rep.end(end);
  if (!failure.empty()) {
    rep.error(failure);
    return verify_failed ? kExitVerifyFailed : kExitError;
  }
  return kExitOk;
}

}  // namespace xcphost
