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

nlohmann::json start_json(const Options& o, const std::vector<BulkClient::Stream>& streams) {
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

std::vector<uint16_t> client_local_ports(const Options& o, xcp::Timestamp now) {
  const uint16_t port0 = first_local_port(o, now);
  std::vector<uint16_t> ports;
  // Ports port0 + i as uint16_t: past 65535 they wrap to 0.
  for (uint32_t i = 0; i < o.parallel; ++i) ports.push_back(static_cast<uint16_t>(port0 + i));
  return ports;
}

BulkClient::BulkClient(const Options& o, HostStack& hs, Reporter& rep, const std::vector<uint16_t>& local_ports)
    : o_(o), hs_(hs), rep_(rep) {
  const ConnectionConfig cfg = connection_config(o, local_address_towards(o.host_addr));
  streams_.reserve(o.parallel);
  for (uint32_t i = 0; i < o.parallel; ++i) {
    auto app = std::make_unique<ClientStream>(o.verify, o.bytes);
    const FlowKey key{o.host_addr, local_ports.at(i), o.port};
    Connection& c = hs.ep.connect(key, cfg, app.get(), hs.clock.now());
    streams_.push_back(Stream{std::move(app), &c, StreamSampler(static_cast<int>(i + 1))});
  }
  rep.info("Connecting to host " + o.host + ", port " + std::to_string(o.port) + " (cc " +
           std::string(to_string(o.cc)) + ")");
}

void BulkClient::sample_all(double end_s) {
  std::vector<StreamSample> samples;
  for (auto& s : streams_) samples.push_back(s.sampler.take(*s.conn, end_s));
  rep_.interval(samples, last_tick_s_, end_s);
  last_tick_s_ = end_s;
}

bool BulkClient::connecting_step(bool interrupted) {
  if (interrupted) interrupted_ = true;
  bool any_done = false, all = true;
  for (auto& s : streams_) {
    any_done = any_done || s.conn->done();
    all = all && s.app->established();
  }
  if (!any_done && !all && !interrupted_) return true;  // still connecting
  for (auto& s : streams_) {
    if (s.conn->state() == ConnState::kFailed) {
      rep_.error("cannot connect to " + o_.host + ":" + std::to_string(o_.port) + ": " +
                 std::string(to_string(s.conn->error())));
      phase_ = Phase::kDone;
      rc_ = kExitConnectFailed;
      return false;
    }
  }
  if (interrupted_) {
    rep_.error("interrupted while connecting");
    phase_ = Phase::kDone;
    rc_ = kExitError;
    return false;
  }
  rep_.start(start_json(o_, streams_));
  for (size_t i = 0; i < streams_.size(); ++i) {
    rep_.info("[" + std::to_string(i + 1) + "] local port " + std::to_string(streams_[i].conn->key().local_port) +
              " connected to " + o_.host + " port " + std::to_string(o_.port));
  }
  phase_ = Phase::kTest;
  t0_ = hs_.clock.now();
  test_end_ = o_.bytes.has_value() ? xcp::Timestamp::max() : t0_ + o_.duration;
  next_tick_ = o_.interval > xcp::Duration::zero() ? t0_ + o_.interval : xcp::Timestamp::max();
  return true;
}

bool BulkClient::step(xcp::Timestamp now, bool interrupted) {
  if (phase_ == Phase::kDone) return false;
  if (phase_ == Phase::kConnecting) {
    if (!connecting_step(interrupted)) return false;
    if (phase_ == Phase::kConnecting) return true;
  }
  if (interrupted) interrupted_ = true;
  if ((interrupted_ || now >= test_end_) && !closing_) {
    closing_ = true;
    close_deadline_ = now + kCloseGrace;
    for (auto& s : streams_) s.conn->close(/*discard_unsent=*/true);
  }
  bool all_done = true, data_done = true;
  for (auto& s : streams_) {
    all_done = all_done && s.conn->done();
    data_done = data_done && (s.conn->done() || (s.conn->closing() && s.conn->bytes_in_flight() == 0));
  }
  if (data_done && data_end_s_ == 0) data_end_s_ = (now - t0_).seconds_f();
  if (!closing_ && now >= next_tick_) {
    sample_all((now - t0_).seconds_f());
    while (next_tick_ <= now) next_tick_ += o_.interval;
  }
  if (!all_done && now < close_deadline_) return true;
  phase_ = Phase::kDone;
  rc_ = end_report();
  return false;
}

xcp::Timestamp BulkClient::next_wake() const {
  if (phase_ != Phase::kTest) return xcp::Timestamp::max();
  return std::min({next_tick_, test_end_, close_deadline_});
}

int BulkClient::end_report() {
  const auto& o = o_;
  auto& rep = rep_;
  auto& hs = hs_;
  const double end_s = data_end_s_ > 0 ? data_end_s_ : (hs.clock.now() - t0_).seconds_f();
  if (o.interval > xcp::Duration::zero() && end_s - last_tick_s_ > 1e-3) sample_all(end_s);

  // End section: sender totals from our counters, receiver totals from the server's reports.
  nlohmann::json end_streams = nlohmann::json::array();
  std::vector<StreamSample> totals;
  uint64_t received = 0;
  std::string failure;
  bool verify_failed = false;
  for (auto& s : streams_) {
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
                        {"interrupted", interrupted_},
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

int run_client(const Options& o) {
  install_stop_signals();
  HostStack hs(o);
  Reporter rep(o.json ? Reporter::Format::kJson
                      : (o.json_stream ? Reporter::Format::kJsonStream : Reporter::Format::kText),
               stdout);
  const std::vector<uint16_t> ports = client_local_ports(o, hs.clock.now());
  hs.accept_ports(consecutive_ports(ports.front(), o.parallel, 0));
  BulkClient client(o, hs, rep, ports);
  hs.loop.run({[&](xcp::Timestamp now) { return client.step(now, stop_requested()); },
               [&] { return client.next_wake(); }});
  return client.rc();
}

}  // namespace xcphost
