// U's side of the chirp estimator (docs/protocol.md §4, router-image/XCPI_ESTIMATOR.md):
// the chirps one or more downstream routers R asked for in their estimation
// requests, scheduled on U's clock. One definition for the engine's XCP-i
// routers and for a sender host that is U itself (the first XCP-i router lies
// behind a cloud on the sender's side, seed 000 Fig. 4).
//
// A request names the grid (value = H in bits/s, 0: U's template) and the
// chirps wanted (aux). One job per (R, session): a retry or a re-estimation
// from the same R extends its job instead of stacking probe trains. Jobs are
// bounded (max_jobs); a request beyond the bound is acknowledged with 0
// chirps and counted.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "xcp/chirp_config.hh"
#include "xcp/chirp_schedule.hh"
#include "xcp/control_message.hh"
#include "xcp/uniform_rng.hh"
#include "xcp/units.hh"

namespace xcp {

struct ChirpSenderCounters {
  uint64_t probes_sent = 0;    // chirp packets emitted
  uint64_t probe_bytes = 0;    // ... their IP bytes (the estimator's overhead)
  uint64_t jobs_refused = 0;   // requests for chirps beyond max_jobs
};

class ChirpSender {
 public:
  // Most chirps one request may ask for; chirp ids are seq * this + n, so ids
  // keep increasing across requests (R takes a repeated id for a stale chirp).
  static constexpr uint32_t kMaxChirpsPerRequest = 1000;

  // `tmpl`: probe size and the other fixed fields; L, H and the period come
  // from the request's H through tmpl.for_rate(H, overhead_fraction).
  // `rng`: dither draws (the owner's seeded stream; must outlive this).
  ChirpSender(ChirpConfig tmpl, double overhead_fraction, size_t max_jobs, UniformRng& rng);

  // A request from `dst`. Returns the chirps U will send (the ack's aux);
  // the first probe is due at `now`.
  uint32_t on_request(uint32_t dst, const ControlMessage& request, Timestamp now);

  // Emits every probe due at `now`: `emit(dst, probe, ip_payload_bytes, at)`,
  // `at` the probe's scheduled instant and probe.value the same in ns (a
  // sender whose clock is not the emulated timeline restamps value with the
  // instant it really sends).
  using Emit = std::function<void(uint32_t dst, ControlMessage& probe, size_t ip_payload_bytes, Timestamp at)>;
  void run(Timestamp now, const Emit& emit);

  // The next probe's instant, Timestamp::max() when idle.
  Timestamp next_deadline() const;
  size_t jobs() const { return jobs_.size(); }
  const ChirpSenderCounters& counters() const { return counters_; }
  // IP payload bytes of one probe (after the IPv4 header).
  size_t probe_payload_bytes() const;

 private:
  struct Job {
    uint32_t dst = 0;
    uint32_t session = 0;
    uint32_t chirps_left = 0;
    uint32_t chirp_id = 0;
    Timestamp chirp_start{};
    size_t next_index = 0;
    std::vector<Duration> offsets;
    ChirpSchedule schedule;  // the grid R asked for
  };
  void start_chirp(Job& job, Timestamp start);

  ChirpConfig tmpl_;
  double overhead_;
  size_t max_jobs_;
  UniformRng& rng_;
  std::vector<Job> jobs_;
  ChirpSenderCounters counters_;
};

}  // namespace xcp
