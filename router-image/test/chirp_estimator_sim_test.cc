// Simulated-time physics of the chirp estimator (XCPI_ESTIMATOR.md): chirps
// from U cross a DropTail link of capacity C = 10 Mb/s carrying seeded cross
// traffic, and the smoothed estimate (mean of 11 chirps) must land near the
// truth A = C·(1 − load).
//
// Tolerances, as a fraction of C (what a wrong BW_U costs the virtual
// router is an absolute rate error, φ = α·d·BW_U − β·Q): a chirp resolves
// A only to one step of its rate grid, (γ − 1)·A ≤ 0.2·C; averaging dithered
// chirps removes about half of that, so the median error over seeds must be
// within half a step plus 2 % for the cross traffic's own noise (0.12·C),
// and the 90th percentile within one step plus 5 % for bursty traffic
// (0.25·C). Measured worst cases: median 10.3 %, p90 18.6 % of C.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include <gtest/gtest.h>

#include "sim/chirp_path.hh"

namespace xcprouter::sim {
namespace {

using xcp::Duration;
using xcp::Rate;

constexpr double kCapacityBps = 10e6;
constexpr int kSeeds = 20;

double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const size_t lo = static_cast<size_t>(pos);
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

const char* name(Cross c) {
  switch (c) {
    case Cross::kCbr: return "cbr";
    case Cross::kPoisson: return "poisson";
    case Cross::kOnOff: return "on-off";
  }
  return "?";
}

struct Stats {
  double median_err_c = 0;  // |estimate − A| / C over seeds
  double p90_err_c = 0;
  double median_bias_a = 0;  // (estimate − A) / A, signed
  double p90_err_a = 0;      // |estimate − A| / A
  double chirp_p90_err_a = 0;  // single chirps
  double median_first_s = 0;   // time to first estimate
};

Stats measure(const std::vector<Hop>& hops, Duration stamp_noise = Duration::zero()) {
  const ChirpConfig cfg = ChirpConfig::for_path(Rate::from_bits_per_s(kCapacityBps));
  std::vector<double> err_c, bias_a, err_a, chirp_err, first;
  const double a = true_avail_bps(hops);
  for (int s = 1; s <= kSeeds; ++s) {
    ChirpRun run;
    run.config = cfg;
    run.hops = hops;
    run.chirps = cfg.chirps_per_estimate;
    run.seed = static_cast<uint64_t>(s) * 7919;
    run.stamp_noise = stamp_noise;
    const ChirpRunResult r = run_chirps(run);
    if (!r.final_bps || !r.first_estimate_after) {
      ADD_FAILURE() << "seed " << s << ": no estimate";
      continue;
    }
    err_c.push_back(std::abs(*r.final_bps - a) / kCapacityBps);
    bias_a.push_back((*r.final_bps - a) / a);
    err_a.push_back(std::abs(*r.final_bps - a) / a);
    for (double c : r.chirp_bps) chirp_err.push_back(std::abs(c - a) / a);
    first.push_back(r.first_estimate_after->seconds_f());
  }
  if (err_c.empty()) return {};
  return {quantile(err_c, 0.5), quantile(err_c, 0.9), quantile(bias_a, 0.5),
          quantile(err_a, 0.9), quantile(chirp_err, 0.9), quantile(first, 0.5)};
}

std::vector<Hop> one_hop(Cross cross, double load) {
  return {Hop{Rate::from_bits_per_s(kCapacityBps), load, cross}};
}

TEST(ChirpEstimatorSim, EstimateWithinToleranceOfCapacityMinusLoad) {
  for (Cross c : {Cross::kCbr, Cross::kPoisson, Cross::kOnOff}) {
    for (double load : {0.0, 0.3, 0.6, 0.9}) {
      const Stats st = measure(one_hop(c, load));
      std::printf("%-8s load %2.0f%%  A %5.2f Mb/s  |err|/C median %5.1f%% p90 %5.1f%%  "
                  "bias/A %+6.1f%%  |err|/A p90 %5.1f%%  one chirp |err|/A p90 %6.1f%%  first %.2f s\n",
                  name(c), load * 100, kCapacityBps * (1 - load) / 1e6, st.median_err_c * 100,
                  st.p90_err_c * 100, st.median_bias_a * 100, st.p90_err_a * 100,
                  st.chirp_p90_err_a * 100, st.median_first_s);
      EXPECT_LE(st.median_err_c, 0.12) << name(c) << " load " << load;
      EXPECT_LE(st.p90_err_c, 0.25) << name(c) << " load " << load;
    }
  }
}

TEST(ChirpEstimatorSim, FirstEstimateAfterMinChirpsAndOverheadAsConfigured) {
  const ChirpConfig cfg = ChirpConfig::for_path(Rate::from_bits_per_s(kCapacityBps));
  const ChirpSchedule schedule(cfg);
  const Stats st = measure(one_hop(Cross::kPoisson, 0.6));
  // Three chirps: two periods, then the third chirp's own length (plus its
  // queueing, and up to one dither step longer).
  const double want = 2 * cfg.chirp_period.seconds_f() + schedule.duration().seconds_f();
  std::printf("first estimate %.3f s (bound %.3f s), overhead %.2f %% of C\n", st.median_first_s,
              want * 1.25, 100 * schedule.overhead().bits_per_s() / kCapacityBps);
  EXPECT_GE(st.median_first_s, want * 0.9);
  EXPECT_LE(st.median_first_s, want * 1.25);
  EXPECT_NEAR(schedule.overhead().bits_per_s() / kCapacityBps, 0.02, 1e-6);
}

TEST(ChirpEstimatorSim, StampNoiseOfFiftyMicrosecondsStaysWithinTolerance) {
  for (Cross c : {Cross::kCbr, Cross::kPoisson, Cross::kOnOff}) {
    for (double load : {0.0, 0.6}) {
      const Stats st = measure(one_hop(c, load), Duration::microseconds(50));
      std::printf("noise 50us %-8s load %2.0f%%  |err|/C median %5.1f%% p90 %5.1f%%\n", name(c),
                  load * 100, st.median_err_c * 100, st.p90_err_c * 100);
      EXPECT_LE(st.median_err_c, 0.12) << name(c) << " load " << load;
      EXPECT_LE(st.p90_err_c, 0.25) << name(c) << " load " << load;
    }
  }
}

// Known limit: when the tight link (least available bandwidth) is not the
// narrow link (least capacity), bursts on the wide tight link leave the
// probes compressed and the narrow link queues them again: pathChirp reads
// low. 20 Mb/s at 60 % load (A = 8) before an idle 10 Mb/s link.
TEST(ChirpEstimatorSim, TightLinkWiderThanNarrowLinkReadsLow) {
  for (Cross c : {Cross::kPoisson, Cross::kOnOff}) {
    const std::vector<Hop> hops{Hop{Rate::from_bits_per_s(2 * kCapacityBps), 0.6, c},
                                Hop{Rate::from_bits_per_s(kCapacityBps), 0.0, Cross::kCbr}};
    const Stats st = measure(hops);
    std::printf("tight!=narrow %-8s A 8.00 Mb/s  bias/A %+6.1f%%\n", name(c), st.median_bias_a * 100);
    EXPECT_LT(st.median_bias_a, -0.05) << name(c);
  }
}

// Known limit: an overloaded cloud (cross traffic above C) has negative
// available bandwidth; the estimator reads its floor, about L, never < 0.
TEST(ChirpEstimatorSim, OverloadedLinkReadsTheFloorNotANegativeRate) {
  ChirpRun run;
  run.config = ChirpConfig::for_path(Rate::from_bits_per_s(kCapacityBps));
  run.hops = one_hop(Cross::kCbr, 1.2);
  run.chirps = run.config.chirps_per_estimate;
  const ChirpRunResult r = run_chirps(run);
  ASSERT_TRUE(r.final_bps);
  std::printf("overloaded 120%%: estimate %.2f Mb/s (L %.2f Mb/s)\n", *r.final_bps / 1e6,
              run.config.low_rate.bits_per_s() / 1e6);
  EXPECT_GT(*r.final_bps, 0.0);
  EXPECT_LE(*r.final_bps, 2 * run.config.low_rate.bits_per_s());
}

}  // namespace
}  // namespace xcprouter::sim
