// xcpperf's report: timeouts and fast_recoveries per stream and in the sum,
// per-interval deltas that add up to the totals (as retransmits), in the JSON
// document and the --json-stream events alike.
#include "app/report.hh"

#include <gtest/gtest.h>

#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "app/stream_sample.hh"
#include "sim_network.hh"
#include "stream_apps.hh"
#include "wire_parse.hh"

namespace xcphost::test {
namespace {

TEST(Report, TimeoutsAndFastRecoveriesAreIntervalDeltasThatSumToTheTotals) {
  // Reno with three losses in one window, twice: fast recoveries and timeouts both happen.
  SimNetwork net({}, {}, 1);
  std::set<uint64_t> seen;
  net.a_to_b().filter = [&](std::vector<uint8_t>& b) {
    auto p = parse(b);
    if (!p || p->payload == 0 || !seen.insert(p->seg.seq).second) return true;
    const uint64_t s = p->seg.seq / 1424;  // segment index (default MSS)
    return !((s >= 150 && s <= 156 && s % 3 == 0) || (s >= 400 && s <= 406 && s % 3 == 0));
  };
  ConnectionConfig cfg;
  cfg.loss_recovery = LossRecovery::kReno;
  cfg.send_buffer_bytes = 256 * 1024;
  PatternReceiver rx;
  net.b().listen(5001, cfg, [&](Connection&) { return &rx; });
  PatternSender tx(800'000);
  Connection& c = net.a().connect({SimNetwork::kAddrB, 40000, 5001}, cfg, &tx, net.now());

  char* buf = nullptr;
  size_t len = 0;
  FILE* out = open_memstream(&buf, &len);
  ASSERT_NE(out, nullptr);
  Reporter rep(Reporter::Format::kJsonStream, out);
  StreamSampler sampler(1);
  const xcp::Timestamp t0 = net.now();
  uint64_t sum_timeouts = 0, sum_fr = 0, sum_retx = 0, recovering_intervals = 0;
  while (!(tx.closed && rx.closed) && net.now() - t0 < xcp::Duration::seconds(30)) {
    net.run_until([] { return false; }, xcp::Duration::milliseconds(100));
    const std::vector<StreamSample> s{sampler.take(c, (net.now() - t0).seconds_f())};
    rep.interval(s, s[0].start_s, s[0].end_s);
    const nlohmann::json j = interval_json(s, s[0].start_s, s[0].end_s);
    EXPECT_EQ(j["streams"][0]["timeouts"], s[0].timeouts);
    EXPECT_EQ(j["streams"][0]["fast_recoveries"], s[0].fast_recoveries);
    EXPECT_EQ(j["sum"]["timeouts"], s[0].timeouts);
    EXPECT_EQ(j["sum"]["fast_recoveries"], s[0].fast_recoveries);
    // The scoreboard behind pipe: pipe = unacked - sacked - lost + retransmitted,
    // less the no-SACK estimate of segments delivered past a hole.
    const auto& st = j["streams"][0];
    EXPECT_LE(st["bytes_in_flight"].get<uint64_t>() + st["sacked_bytes"].get<uint64_t>() +
                  st["lost_bytes"].get<uint64_t>(),
              st["unacked_bytes"].get<uint64_t>() + st["retransmitted_bytes"].get<uint64_t>());
    recovering_intervals += st["in_recovery"].get<bool>() ? 1 : 0;
    sum_timeouts += s[0].timeouts;
    sum_fr += s[0].fast_recoveries;
    sum_retx += s[0].retransmits;
  }
  std::fclose(out);
  ASSERT_EQ(rx.received, 800'000u);
  EXPECT_GE(c.stats().timeouts, 1u);
  EXPECT_GE(c.stats().fast_recoveries, 2u);
  EXPECT_EQ(sum_timeouts, c.stats().timeouts);
  EXPECT_EQ(sum_fr, c.stats().fast_recoveries);
  EXPECT_EQ(sum_retx, c.stats().retransmits);
  EXPECT_GE(recovering_intervals, 1u);  // some interval ended inside a repair

  const nlohmann::json total = sum_json({sampler.total(c, 1.0)}, 0, 1.0);  // end.sum_sent
  EXPECT_EQ(total["timeouts"], c.stats().timeouts);
  EXPECT_EQ(total["fast_recoveries"], c.stats().fast_recoveries);
  EXPECT_EQ(stream_json(sampler.total(c, 1.0))["fast_recoveries"], c.stats().fast_recoveries);

  // The --json-stream lines carry the same deltas.
  uint64_t stream_timeouts = 0, stream_fr = 0;
  const std::string text(buf, len);
  std::free(buf);
  size_t lines = 0;
  for (size_t at = 0, nl; (nl = text.find('\n', at)) != std::string::npos; at = nl + 1) {
    const auto ev = nlohmann::json::parse(text.substr(at, nl - at));
    ASSERT_EQ(ev["event"], "interval");
    stream_timeouts += ev["data"]["streams"][0]["timeouts"].get<uint64_t>();
    stream_fr += ev["data"]["sum"]["fast_recoveries"].get<uint64_t>();
    ++lines;
  }
  EXPECT_GT(lines, 3u);
  EXPECT_EQ(stream_timeouts, c.stats().timeouts);
  EXPECT_EQ(stream_fr, c.stats().fast_recoveries);
}

}  // namespace
}  // namespace xcphost::test
