#include "app/objects_client.hh"

#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include "app/host_stack.hh"
#include "app/object_player.hh"
#include "app/report.hh"
#include "app/signals.hh"

namespace xcphost {
namespace {

// After the test ends, objects already acknowledged get this long for their
// FIN and the server's report.
constexpr xcp::Duration kCloseGrace = xcp::Duration::seconds(10);

nlohmann::json object_json(size_t i, const ObjectResult& r) {
  auto secs = [](const std::optional<xcp::Duration>& d) -> nlohmann::json {
    return d ? nlohmann::json(d->seconds_f()) : nlohmann::json(nullptr);
  };
  return {{"object", i + 1},
          {"start", r.spec.start.seconds_f()},
          {"started", secs(r.started)},
          {"bytes", r.spec.bytes},
          {"fct", secs(r.fct)},
          {"status", to_string(r.status)},
          {"retransmits", r.retransmits},
          {"timeouts", r.timeouts},
          {"bytes_received", r.bytes_received},
          {"waited", r.waited},
          {"error", r.error}};
}

// The flow's aggregate over all object connections since the last call, as one stream.
class AggregateSampler {
 public:
  StreamSample take(const ObjectPlayer& p, double end_s) {
    const ObjectTotals now = p.totals();
    StreamSample s;
    s.id = 1;
    s.start_s = last_s_;
    s.end_s = end_s;
    set_deltas(s, now, prev_);
    if (const Connection* c = p.newest()) {
      s.cwnd_bytes = c->controller().cwnd_bytes();
      s.srtt_us = c->rtt().srtt().us();
      s.rttvar_us = c->rtt().rttvar().us();
    }
    prev_ = now;
    last_s_ = end_s;
    return s;
  }

 private:
  ObjectTotals prev_;
  double last_s_ = 0;
};

uint16_t first_port(const Options& o, xcp::Timestamp now) {
  if (o.cport != 0) return o.cport;
  const uint64_t mix = static_cast<uint64_t>(now.ns()) ^ (static_cast<uint64_t>(getpid()) * 2654435761ULL);
  return static_cast<uint16_t>(32768 + mix % 28232);  // Linux's ephemeral range
}

}  // namespace

int run_objects_client(const Options& o) {
  install_stop_signals();
  HostStack hs(o);
  Reporter rep(o.json ? Reporter::Format::kJson
                      : (o.json_stream ? Reporter::Format::kJsonStream : Reporter::Format::kText),
               stdout);
  ObjectPlayer::Config pc;
  pc.objects = o.objects;
  pc.max_concurrent = o.max_concurrent;
  pc.conn = connection_config(o, local_address_towards(o.host_addr));
  pc.remote_addr = o.host_addr;
  pc.remote_port = o.port;
  pc.first_local_port = first_port(o, hs.clock.now());
  hs.accept_ports(consecutive_ports(pc.first_local_port, o.objects.size(), 32768));  // ObjectPlayer::local_port
  pc.verify = o.verify;
  uint64_t total_bytes = 0;
  for (const auto& ob : o.objects) total_bytes += ob.bytes;
  rep.start({{"version", std::string("xcpperf ") + XCPLAB_VERSION},
             {"connecting_to", {{"host", o.host}, {"port", o.port}}},
             {"cc", std::string(to_string(o.cc))},
             {"title", o.title},
             {"test_start",
              {{"protocol", "XCP"},
               {"objects", o.objects.size()},
               {"object_bytes", total_bytes},
               {"max_concurrent", o.max_concurrent},
               {"duration", o.time_given ? o.duration.seconds_f() : 0.0},
               {"mss", pc.conn.mss_bytes},
               {"verify", o.verify}}}});
  rep.info("Playing " + std::to_string(o.objects.size()) + " objects to " + o.host + " port " +
           std::to_string(o.port) + " (at most " + std::to_string(o.max_concurrent) + " at a time)");

  const xcp::Timestamp t0 = hs.clock.now();
  ObjectPlayer player(hs.ep, pc, t0);
  const xcp::Timestamp deadline = o.time_given ? t0 + o.duration : xcp::Timestamp::max();
  const bool ticking = o.interval > xcp::Duration::zero();
  xcp::Timestamp next_tick = ticking ? t0 + o.interval : xcp::Timestamp::max();
  xcp::Timestamp grace_end = xcp::Timestamp::max();
  bool interrupted = false;
  AggregateSampler agg;
  double last_tick_s = 0;
  auto tick = [&](double end_s) {
    rep.interval({agg.take(player, end_s)}, last_tick_s, end_s);
    last_tick_s = end_s;
  };
  auto report = [&](const std::vector<size_t>& done) {
    for (size_t i : done) rep.object(object_json(i, player.results()[i]));
  };
  hs.loop.run({[&](xcp::Timestamp now) {
                 report(player.step(now));
                 if (stop_requested()) interrupted = true;
                 if ((interrupted || now >= deadline) && grace_end == xcp::Timestamp::max()) {
                   report(player.stop(now));
                   grace_end = now + kCloseGrace;
                 }
                 if (now >= grace_end) report(player.give_up("no FIN/report from the server within the grace"));
                 if (now >= next_tick) {
                   tick((now - t0).seconds_f());
                   while (next_tick <= now) next_tick += o.interval;
                 }
                 return !player.finished();
               },
               [&] { return std::min({player.next_wake(), next_tick, deadline, grace_end}); }});
  const double end_s = (hs.clock.now() - t0).seconds_f();
  if (ticking && end_s - last_tick_s > 1e-3) tick(end_s);

  nlohmann::json objects = nlohmann::json::array();
  uint64_t received = 0, started = 0, completed = 0, failed = 0, connect_failed = 0, mismatched = 0;
  for (size_t i = 0; i < player.results().size(); ++i) {
    const ObjectResult& r = player.results()[i];
    objects.push_back(object_json(i, r));
    received += r.bytes_received;
    started += r.started.has_value();
    completed += r.status == ObjectStatus::kComplete;
    failed += r.status == ObjectStatus::kFailed;
    connect_failed += r.conn_error == ConnError::kConnectTimeout || (r.conn_error == ConnError::kReset && !r.fct);
    mismatched += r.altered;
  }
  StreamSample sum;
  sum.id = 1;
  sum.end_s = end_s;
  set_deltas(sum, player.totals(), ObjectTotals{});
  rep.end({{"objects", objects},
           {"objects_summary",
            {{"objects", player.results().size()},
             {"started", started},
             {"completed", completed},
             {"failed", failed},
             {"waited", player.waited()},
             {"max_concurrent", player.max_active()}}},
           {"streams", nlohmann::json::array({{{"sender", stream_json(sum)}}})},
           {"sum_sent", sum_json({sum}, 0, end_s)},
           {"sum_received",  // what the servers' reports counted
            {{"start", 0.0}, {"end", end_s}, {"seconds", end_s}, {"bytes", received},
             {"bits_per_second", end_s > 0 ? static_cast<double>(received) * 8 / end_s : 0.0},
             {"sender", false}}},
           {"verify", o.verify ? (mismatched > 0 ? "mismatch" : "ok") : "off"},
           {"sender_cc", std::string(to_string(o.cc))},
           {"interrupted", interrupted},
           {"tx_errors", hs.tx.stats().errors},
           {"tx_link_packets", hs.tx.stats().link_packets},
           {"rx", hs.rx_report()}});
  // Congested objects that fail are results; a server that never answers,
  // or bytes that arrive altered, are errors of the test itself.
  if (mismatched > 0) {
    rep.error(std::to_string(mismatched) + " objects arrived altered or short (see their error)");
    return o.verify ? kExitVerifyFailed : kExitError;
  }
  if (completed == 0 && connect_failed > 0) {
    rep.error("no object completed: cannot connect to " + o.host + ":" + std::to_string(o.port));
    return kExitConnectFailed;
  }
  return kExitOk;
}

}  // namespace xcphost
