// A non-XCP cloud for the chirp-estimator tests: one or more DropTail FIFO
// links in series, each with its own seeded cross traffic (CBR, Poisson with
// mixed sizes, or on-off bursts), crossed by the chirps an upstream U sends
// to R. Offline and exact: a FIFO link's departures follow from the arrival
// order alone (Lindley's recursion), so each hop is computed in one pass
// over its merged arrivals, without an event queue.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

#include "xcp/uniform_rng.hh"
#include "xcp/units.hh"
#include "xcp/chirp_estimator.hh"
#include "xcp/chirp_schedule.hh"

namespace xcprouter::sim {

enum class Cross : uint8_t {
  kCbr,      // 1000 B at a constant interval (random phase)
  kPoisson,  // exponential gaps, sizes 64/576/1500 B equally likely
  kOnOff,    // exponential on/off periods, back to back at C during on
};

struct Hop {
  xcp::Rate capacity = xcp::Rate::from_megabits_per_s(10);
  double load = 0.0;  // cross-traffic rate / capacity (offered)
  Cross cross = Cross::kCbr;
  uint64_t buffer_bytes = 100'000;  // DropTail, 80 ms at 10 Mb/s
  xcp::Duration propagation = xcp::Duration::milliseconds(5);
};

struct ChirpRun {
  ChirpConfig config;
  std::vector<Hop> hops;
  uint32_t chirps = 12;  // chirps U sends, one per config.chirp_period
  uint64_t seed = 1;
  // Receive-stamp noise: U[0, noise) added to every probe's
  // arrival (interrupt/NAPI latency); the stamps are kept monotonic.
  xcp::Duration stamp_noise = xcp::Duration::zero();
};

struct ChirpRunResult {
  std::vector<double> chirp_bps;  // every usable chirp estimate, in order
  std::optional<double> final_bps;  // smoothed estimate at the end
  std::optional<xcp::Duration> first_estimate_after;  // from the first probe sent
  double probe_bytes = 0;  // bytes U sent in probes
  xcp::Duration span{};    // from first probe sent to last chirp's timeout
  ChirpAnalyzerCounters counters;
};

// Available bandwidth of the path: the tight link's capacity minus its
// cross-traffic rate.
inline double true_avail_bps(const std::vector<Hop>& hops) {
  double a = 1e300;
  for (const Hop& h : hops) a = std::min(a, h.capacity.bits_per_s() * (1.0 - h.load));
  return a;
}

namespace detail {

struct Pkt {
  xcp::Timestamp t;
  uint32_t bytes;
  int32_t probe;  // index into the probe list, −1 for cross traffic
};

inline double exp_draw(UniformRng& rng, double mean) { return -mean * std::log(1.0 - rng.next()); }

inline std::vector<Pkt> cross_traffic(const Hop& h, xcp::Timestamp from, xcp::Timestamp to,
                                      UniformRng& rng) {
  std::vector<Pkt> out;
  if (h.load <= 0.0) return out;
  const double c = h.capacity.bytes_per_s();
  double t = from.seconds_f();
  const double end = to.seconds_f();
  auto push = [&](double at, uint32_t b) {
    out.push_back({xcp::Timestamp::from_ns(std::llround(at * 1e9)), b, -1});
  };
  switch (h.cross) {
    case Cross::kCbr: {
      const double gap = 1000.0 / (h.load * c);
      for (t += rng.next() * gap; t < end; t += gap) push(t, 1000);
      break;
    }
    case Cross::kPoisson: {
      static constexpr uint32_t kSizes[] = {64, 576, 1500};
      const double mean_gap = (64.0 + 576.0 + 1500.0) / 3.0 / (h.load * c);
      for (t += exp_draw(rng, mean_gap); t < end; t += exp_draw(rng, mean_gap))
        push(t, kSizes[std::min<uint64_t>(2, rng.next_u64() % 3)]);
      break;
    }
    case Cross::kOnOff: {
      // Saturating bursts: on periods send back to back at C (available
      // bandwidth exactly 0), off periods send nothing (exactly C), with
      // exponential lengths whose means split a 40 ms cycle as load : 1−load.
      // Unlike a peak above C, A(t) never goes negative, so the long-run
      // truth C·(1 − load) is also the mean of what a chirp can see.
      const double gap = 1000.0 / c;
      const double mean_on = 0.040 * h.load;
      const double mean_off = 0.040 * (1.0 - h.load);
      bool on = rng.next() < h.load;
      while (t < end) {
        const double until = std::min(end, t + exp_draw(rng, on ? mean_on : mean_off));
        if (on) {
          for (double p = t; p < until; p += gap) push(p, 1000);
        }
        t = until;
        on = !on;
      }
      break;
    }
  }
  return out;
}

// One DropTail FIFO hop: returns each offered packet's arrival at the far
// end, in the same order, or nullopt when the buffer dropped it.
inline std::vector<std::optional<xcp::Timestamp>> run_hop(const Hop& h, std::vector<Pkt>& in) {
  std::stable_sort(in.begin(), in.end(), [](const Pkt& a, const Pkt& b) { return a.t < b.t; });
  std::vector<std::optional<xcp::Timestamp>> out(in.size());
  xcp::Timestamp free_at = xcp::Timestamp::zero();
  bool started = false;
  for (size_t i = 0; i < in.size(); ++i) {
    const Pkt& p = in[i];
    if (!started) free_at = p.t, started = true;
    const double backlog = std::max(0.0, (free_at - p.t).seconds_f()) * h.capacity.bytes_per_s();
    if (backlog + p.bytes > static_cast<double>(h.buffer_bytes)) continue;
    free_at = std::max(free_at, p.t) + h.capacity.transfer_time(p.bytes);
    out[i] = free_at + h.propagation;
  }
  return out;
}

}  // namespace detail

// Sends run.chirps chirps from U at t = 1 s (after a second of cross traffic
// to reach steady state) and feeds every surviving probe to an estimator.
inline ChirpRunResult run_chirps(const ChirpRun& run) {
  using detail::Pkt;
  UniformRng rng(run.seed);
  const ChirpSchedule schedule(run.config);
  const xcp::Timestamp start = xcp::Timestamp::from_ns(1'000'000'000);
  const xcp::Timestamp end = start + run.config.chirp_period * run.chirps + xcp::Duration::seconds(1.0);

  struct Probe {
    ChirpProbe p;
    xcp::Timestamp sent;
  };
  std::vector<Probe> probes;
  ChirpRunResult res;
  for (uint32_t c = 0; c < run.chirps; ++c) {
    const xcp::Timestamp t0 = start + run.config.chirp_period * c;
    const auto offs = schedule.dithered_offsets(rng.next());
    for (uint32_t k = 0; k < offs.size(); ++k) {
      probes.push_back({ChirpProbe{c, k, offs[k], {}, run.config.packet_bytes}, t0 + offs[k]});
      res.probe_bytes += run.config.packet_bytes;
    }
  }
  // Probes still in the cloud: their current time at the entry of the next hop.
  std::vector<std::optional<xcp::Timestamp>> at(probes.size());
  for (size_t i = 0; i < probes.size(); ++i) at[i] = probes[i].sent;
  for (const Hop& h : run.hops) {
    std::vector<Pkt> in = detail::cross_traffic(h, xcp::Timestamp::zero(), end, rng);
    for (size_t i = 0; i < probes.size(); ++i)
      if (at[i]) in.push_back({*at[i], run.config.packet_bytes, static_cast<int32_t>(i)});
    const auto out = detail::run_hop(h, in);
    std::fill(at.begin(), at.end(), std::nullopt);
    for (size_t j = 0; j < in.size(); ++j)
      if (in[j].probe >= 0 && out[j]) at[in[j].probe] = out[j];
  }

  std::vector<ChirpProbe> received;
  for (size_t i = 0; i < probes.size(); ++i) {
    if (!at[i]) continue;
    ChirpProbe p = probes[i].p;
    p.arrival = *at[i];
    if (run.stamp_noise > xcp::Duration::zero())
      p.arrival += xcp::Duration::nanoseconds(
          static_cast<int64_t>(rng.next() * static_cast<double>(run.stamp_noise.ns())));
    received.push_back(p);
  }
  std::stable_sort(received.begin(), received.end(),
                   [](const ChirpProbe& a, const ChirpProbe& b) { return a.arrival < b.arrival; });
  // The estimator's own analyzer would hide single chirps: analyse here and
  // add() each result, recording it.
  ChirpAnalyzer analyzer(run.config);
  ChirpEstimator est(run.config);
  auto take = [&](const std::vector<ChirpResult>& done) {
    for (const ChirpResult& r : done) {
      if (r.estimate) res.chirp_bps.push_back(r.estimate->bits_per_s());
      est.add(r);
    }
  };
  xcp::Timestamp last{};
  for (ChirpProbe p : received) {
    p.arrival = std::max(p.arrival, last);  // the engine's stamps never go back
    last = p.arrival;
    while (auto d = analyzer.next_deadline()) {
      if (*d > p.arrival) break;
      take(analyzer.on_deadline(*d));
    }
    take(analyzer.on_probe(p));
  }
  while (auto d = analyzer.next_deadline()) take(analyzer.on_deadline(*d));
  res.span = last - start;
  if (auto e = est.estimate()) res.final_bps = e->bits_per_s();
  if (auto f = est.first_estimate_at()) res.first_estimate_after = *f - start;
  res.counters = analyzer.counters();
  return res;
}

}  // namespace xcprouter::sim
