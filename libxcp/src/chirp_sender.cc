#include "xcp/chirp_sender.hh"

#include <algorithm>

namespace xcp {

ChirpSender::ChirpSender(ChirpConfig tmpl, double overhead_fraction, size_t max_jobs, UniformRng& rng)
    : tmpl_(tmpl), overhead_(overhead_fraction), max_jobs_(max_jobs), rng_(rng) {}

size_t ChirpSender::probe_payload_bytes() const {
  return tmpl_.packet_bytes > 20 + kControlMessageLen ? tmpl_.packet_bytes - 20 : kControlMessageLen;
}

uint32_t ChirpSender::on_request(uint32_t dst, const ControlMessage& m, Timestamp now) {
  uint32_t chirps = std::min(m.aux, kMaxChirpsPerRequest);
  if (chirps == 0) return 0;
  auto job = std::find_if(jobs_.begin(), jobs_.end(),
                          [&](const Job& j) { return j.dst == dst && j.session == m.session; });
  if (job == jobs_.end()) {
    if (jobs_.size() >= max_jobs_) {
      ++counters_.jobs_refused;
      return 0;
    }
    // H within the bounds a link's rate may take (100 kb/s .. 100 Gb/s).
    const double h = static_cast<double>(m.value);
    const ChirpConfig grid = h >= 1e5 && h <= 1e11 ? tmpl_.for_rate(Rate::from_bits_per_s(h), overhead_) : tmpl_;
    jobs_.push_back(Job{dst, m.session, 0, 0, {}, 0, {}, ChirpSchedule(grid)});
    job = std::prev(jobs_.end());
  }
  if (job->chirps_left == 0) {
    job->chirps_left = chirps;
    job->chirp_id = m.seq * kMaxChirpsPerRequest;
    start_chirp(*job, now);
  } else {
    job->chirps_left = std::max(job->chirps_left, chirps);
  }
  return chirps;
}

void ChirpSender::start_chirp(Job& job, Timestamp start) {
  job.chirp_start = start;
  job.next_index = 0;
  job.offsets = tmpl_.dither ? job.schedule.dithered_offsets(rng_.next()) : job.schedule.offsets();
}

void ChirpSender::run(Timestamp now, const Emit& emit) {
  const size_t payload = probe_payload_bytes();
  for (auto it = jobs_.begin(); it != jobs_.end();) {
    Job& j = *it;
    while (j.chirps_left > 0 && j.next_index < j.offsets.size() && j.chirp_start + j.offsets[j.next_index] <= now) {
      const Timestamp at = j.chirp_start + j.offsets[j.next_index];
      ControlMessage probe{ControlType::kProbe, j.session, j.chirp_id,
                           ControlMessage::probe_aux(static_cast<uint16_t>(j.next_index),
                                                     static_cast<uint16_t>(j.offsets.size())),
                           static_cast<uint64_t>(at.ns())};
      emit(j.dst, probe, payload, at);
      ++counters_.probes_sent;
      counters_.probe_bytes += 20 + payload;
      ++j.next_index;
    }
    if (j.chirps_left > 0 && j.next_index >= j.offsets.size()) {
      --j.chirps_left;
      ++j.chirp_id;
      if (j.chirps_left > 0) {
        // The next chirp keeps its period from the last one's planned start, unless the
        // caller woke a whole period late: then it starts now. Catching up instead would
        // send the missed chirps back to back, over the probe overhead the period bounds.
        const Duration period = j.schedule.config().chirp_period;
        Timestamp next = j.chirp_start + period;
        if (now > next + period) next = now;
        start_chirp(j, next);
      }
    }
    if (j.chirps_left == 0) {
      it = jobs_.erase(it);
    } else {
      ++it;
    }
  }
}

Timestamp ChirpSender::next_deadline() const {
  Timestamp t = Timestamp::max();
  for (const Job& j : jobs_) {
    if (j.chirps_left > 0 && j.next_index < j.offsets.size()) t = std::min(t, j.chirp_start + j.offsets[j.next_index]);
  }
  return t;
}

}  // namespace xcp
