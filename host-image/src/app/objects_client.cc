#include "app/objects_client.hh"

#include <unistd.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "app/client.hh"
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

namespace {

// One flow of the process: an --objects flow (its schedule, player, report and
// clock) or a bulk -t/-n client (`bulk`, with its own clock and report).
struct ObjectsJob {
  ObjectsJob(const Options& opts, Reporter::Format f) : o(opts), rep(f, stdout) {}
  const Options& o;
  Reporter rep;
  std::unique_ptr<ObjectPlayer> player;
  std::unique_ptr<BulkClient> bulk;
  AggregateSampler agg;
  xcp::Timestamp t0, deadline, next_tick, grace_end = xcp::Timestamp::max();
  double last_tick_s = 0;
  bool finished_reported = false;

  void tick(double end_s) {
    rep.interval({agg.take(*player, end_s)}, last_tick_s, end_s);
    last_tick_s = end_s;
  }
  void report(const std::vector<size_t>& done) {
    for (size_t i : done) rep.object(object_json(i, player->results()[i]));
  }
};

int finish_job(ObjectsJob& j, HostStack& hs, bool interrupted) {
  const Options& o = j.o;
  ObjectPlayer& player = *j.player;
  const double end_s = (hs.clock.now() - j.t0).seconds_f();
  if (o.interval > xcp::Duration::zero() && end_s - j.last_tick_s > 1e-3) j.tick(end_s);

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
  j.rep.end({{"objects", objects},
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
             // the process's counters (shared by every job of it)
             {"tx_errors", hs.tx.stats().errors},
             {"tx_link_packets", hs.tx.stats().link_packets},
             {"tx_xdp_packets", hs.tx.stats().xdp_packets},
             {"rx", hs.rx_report()}});
  // Congested objects that fail are results; a server that never answers,
  // or bytes that arrive altered, are errors of the test itself.
  if (mismatched > 0) {
    j.rep.error(std::to_string(mismatched) + " objects arrived altered or short (see their error)");
    return o.verify ? kExitVerifyFailed : kExitError;
  }
  if (completed == 0 && connect_failed > 0) {
    j.rep.error("no object completed: cannot connect to " + o.host + ":" + std::to_string(o.port));
    return kExitConnectFailed;
  }
  return kExitOk;
}

}  // namespace

int run_objects_client(const Options& o) { return run_objects_jobs({Job{"", o}}); }

int run_objects_jobs(const std::vector<Job>& specs) {
  install_stop_signals();
  const Options& first = specs.front().options;
  HostStack hs(first);  // the socket options are the same for every job (parse_jobs)
  // Every object of every job has its own local port: job k's block follows job k-1's,
  // so the process accepts one run of consecutive ports (ObjectPlayer::local_port).
  // A bulk job's block is its -P streams' ports.
  auto ports_of = [](const Options& o) -> size_t { return o.objects.empty() ? o.parallel : o.objects.size(); };
  size_t total_objects = 0;
  for (const auto& s : specs) total_objects += ports_of(s.options);
  const uint16_t base = first_port(first, hs.clock.now());
  hs.accept_ports(consecutive_ports(base, total_objects, 32768));
  std::vector<std::unique_ptr<ObjectsJob>> jobs;
  size_t offset = 0;
  for (const auto& spec : specs) {
    const Options& o = spec.options;
    auto j = std::make_unique<ObjectsJob>(o, o.json ? Reporter::Format::kJson
                                                   : (o.json_stream ? Reporter::Format::kJsonStream
                                                                    : Reporter::Format::kText));
    j->rep.set_job(spec.name);
    if (o.objects.empty()) {  // a bulk client (--xdp hosts run all their flows in one process)
      std::vector<uint16_t> ports;
      for (size_t i = 0; i < o.parallel; ++i) ports.push_back(ObjectPlayer::local_port(base, offset + i));
      offset += o.parallel;
      j->bulk = std::make_unique<BulkClient>(o, hs, j->rep, ports);
      jobs.push_back(std::move(j));
      continue;
    }
    ObjectPlayer::Config pc;
    pc.objects = o.objects;
    pc.max_concurrent = o.max_concurrent;
    pc.conn = connection_config(o, local_address_towards(o.host_addr));
    pc.remote_addr = o.host_addr;
    pc.remote_port = o.port;
    pc.first_local_port = ObjectPlayer::local_port(base, offset);
    offset += o.objects.size();
    pc.verify = o.verify;
    uint64_t total_bytes = 0;
    for (const auto& ob : o.objects) total_bytes += ob.bytes;
    j->rep.start({{"version", std::string("xcpperf ") + XCPLAB_VERSION},
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
    j->rep.info("Playing " + std::to_string(o.objects.size()) + " objects to " + o.host + " port " +
                std::to_string(o.port) + " (at most " + std::to_string(o.max_concurrent) + " at a time)");
    j->t0 = hs.clock.now();
    j->player = std::make_unique<ObjectPlayer>(hs.ep, pc, j->t0);
    j->deadline = o.time_given ? j->t0 + o.duration : xcp::Timestamp::max();
    j->next_tick = o.interval > xcp::Duration::zero() ? j->t0 + o.interval : xcp::Timestamp::max();
    jobs.push_back(std::move(j));
  }

  bool interrupted = false;
  std::vector<int> rcs(jobs.size(), kExitOk);
  hs.loop.run({[&](xcp::Timestamp now) {
                 if (stop_requested()) interrupted = true;
                 bool all = true;
                 for (size_t k = 0; k < jobs.size(); ++k) {
                   ObjectsJob& j = *jobs[k];
                   if (j.finished_reported) continue;
                   if (j.bulk) {
                     if (j.bulk->step(now, interrupted)) {
                       all = false;
                     } else {
                       rcs[k] = j.bulk->rc();
                       j.finished_reported = true;
                     }
                     continue;
                   }
                   j.report(j.player->step(now));
                   if ((interrupted || now >= j.deadline) && j.grace_end == xcp::Timestamp::max()) {
                     j.report(j.player->stop(now));
                     j.grace_end = now + kCloseGrace;
                   }
                   if (now >= j.grace_end) j.report(j.player->give_up("no FIN/report from the server within the grace"));
                   if (now >= j.next_tick) {
                     j.tick((now - j.t0).seconds_f());
                     while (j.next_tick <= now) j.next_tick += j.o.interval;
                   }
                   if (j.player->finished()) {  // this job's end report now, not at the last job's
                     rcs[k] = finish_job(j, hs, interrupted);
                     j.finished_reported = true;
                   } else {
                     all = false;
                   }
                 }
                 return !all;
               },
               [&] {
                 xcp::Timestamp w = xcp::Timestamp::max();
                 for (const auto& j : jobs) {
                   if (j->finished_reported) continue;
                   if (j->bulk) {
                     w = std::min(w, j->bulk->next_wake());
                     continue;
                   }
                   w = std::min({w, j->player->next_wake(), j->next_tick, j->deadline, j->grace_end});
                 }
                 return w;
               }});
  int rc = kExitOk;
  for (int r : rcs) rc = std::max(rc, r);
  return rc;
}

}  // namespace xcphost
