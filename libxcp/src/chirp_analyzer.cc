#include "xcp/chirp_analyzer.hh"

#include <algorithm>

namespace xcp {

namespace {

// Chirp ids wrap: a is after b when the forward distance is under half the
// space (RFC 1982 serial arithmetic).
int64_t serial_diff(uint32_t a, uint32_t b) { return static_cast<int32_t>(a - b); }

// A probe this many chirps behind the newest analysed one is no late
// straggler but a sender that restarted its counter: start afresh.
constexpr int64_t kRestartDistance = 64;

}  // namespace

ChirpAnalyzer::ChirpAnalyzer(const ChirpConfig& config)
    : config_(config), packets_(config.packets_per_chirp()) {
  config_.validate();
  open_.reserve(config_.max_open_chirps + 1);
}

bool ChirpAnalyzer::is_stale(uint32_t id) const {
  return newest_closed_ && serial_diff(id, *newest_closed_) <= 0;
}

std::vector<ChirpResult> ChirpAnalyzer::on_probe(const ChirpProbe& p) {
  std::vector<ChirpResult> done;
  ++counters_.probes;
  if (p.index >= packets_) {
    ++counters_.out_of_range;
    return done;
  }
  auto it = std::find_if(open_.begin(), open_.end(),
                         [&](const OpenChirp& c) { return c.id == p.chirp_id; });
  if (it == open_.end()) {
    if (newest_closed_ && serial_diff(p.chirp_id, *newest_closed_) < -kRestartDistance)
      newest_closed_.reset();
    if (is_stale(p.chirp_id)) {
      ++counters_.stale;
      return done;
    }
    if (open_.size() >= config_.max_open_chirps) {
      ++counters_.evicted;
      done.push_back(close(open_.front(), p.arrival));
      open_.erase(open_.begin());
    }
    open_.push_back(OpenChirp{p.chirp_id, p.arrival, {}});
    open_.back().samples.reserve(packets_);
    it = open_.end() - 1;
  }
  OpenChirp& c = *it;
  const bool dup = std::any_of(c.samples.begin(), c.samples.end(),
                               [&](const Sample& s) { return s.index == p.index; });
  if (dup) {
    ++counters_.duplicates;
    return done;
  }
  c.samples.push_back(Sample{p.index, p.send_offset, p.arrival, p.bytes});
  c.last_arrival = std::max(c.last_arrival, p.arrival);
  if (p.index + 1 == packets_) {
    ++counters_.completed;
    done.push_back(close(c, p.arrival));
    open_.erase(it);
  }
  return done;
}

std::vector<ChirpResult> ChirpAnalyzer::on_deadline(xcp::Timestamp now) {
  std::vector<ChirpResult> done;
  for (auto it = open_.begin(); it != open_.end();) {
    if (it->last_arrival + config_.chirp_timeout <= now) {
      ++counters_.timed_out;
      done.push_back(close(*it, now));
      it = open_.erase(it);
    } else {
      ++it;
    }
  }
  return done;
}

std::optional<xcp::Timestamp> ChirpAnalyzer::next_deadline() const {
  std::optional<xcp::Timestamp> t;
  for (const auto& c : open_) {
    const xcp::Timestamp d = c.last_arrival + config_.chirp_timeout;
    if (!t || d < *t) t = d;
  }
  return t;
}

ChirpResult ChirpAnalyzer::close(OpenChirp& c, xcp::Timestamp at) {
  std::sort(c.samples.begin(), c.samples.end(),
            [](const Sample& a, const Sample& b) { return a.index < b.index; });
  ChirpResult r;
  r.chirp_id = c.id;
  r.received = static_cast<uint32_t>(c.samples.size());
  r.completed_at = at;
  const double lost = 1.0 - static_cast<double>(r.received) / packets_;
  if (lost <= config_.max_loss_fraction) r.estimate = estimate(c.samples, config_);
  if (!r.estimate) ++counters_.unusable;
  if (!newest_closed_ || serial_diff(c.id, *newest_closed_) > 0) newest_closed_ = c.id;
  return r;
}

std::optional<xcp::Rate> ChirpAnalyzer::estimate(std::span<const Sample> s,
                                                 const ChirpConfig& config) {
  const size_t n = s.size();
  if (n < 3) return std::nullopt;
  // Gap k joins received samples k and k+1; a lost packet in between makes
  // it longer and its rate the bytes of every packet sent over it.
  std::vector<double> q(n), rate(n - 1), gap(n - 1), e(n - 1, 0.0);
  const xcp::Timestamp t0 = s[0].arrival;
  for (size_t k = 0; k < n; ++k) {
    // Relative one-way delay; only its differences matter.
    q[k] = ((s[k].arrival - t0) - s[k].send_offset).seconds_f();
  }
  for (size_t k = 0; k + 1 < n; ++k) {
    const double g = (s[k + 1].send_offset - s[k].send_offset).seconds_f();
    if (!(g > 0.0) || s[k + 1].index <= s[k].index) return std::nullopt;
    gap[k] = g;
    rate[k] = static_cast<double>(s[k + 1].bytes) * (s[k + 1].index - s[k].index) / g;
  }

  const double f = config.decrease_factor;
  const double floor = config.delay_floor.seconds_f();
  std::optional<size_t> open_start;  // excursion still rising at the end
  size_t i = 0;
  while (i + 1 < n) {
    if (q[i] >= q[i + 1]) {
      ++i;
      continue;
    }
    double peak = 0.0;
    size_t j = i + 1;
    bool ended = false;
    for (; j < n; ++j) {
      peak = std::max(peak, q[j] - q[i]);
      if (q[j] - q[i] < peak / f) {
        ended = true;
        break;
      }
    }
    if (!ended) {
      // A rise that never ends but never clears the noise floor is stamp
      // noise (a dip at i leaves every later sample above it): look on.
      if (peak <= floor) {
        ++i;
        continue;
      }
      // Queueing starts where the delay last left the noise band of the
      // start (a noise dip before the real rise would otherwise pull it early).
      size_t l = i;
      for (size_t k = i; k + 1 < n; ++k)
        if (q[k] - q[i] <= floor) l = k;
      open_start = l;
      break;
    }
    // Index distance, so an excursion that lost packets still counts them.
    if (peak > floor && s[j].index - s[i].index >= config.busy_period_threshold) {
      for (size_t k = i; k < j; ++k) {
        if (q[k] < q[k + 1]) e[k] = rate[k];
      }
    }
    i = j;
  }

  // A probe lost inside the chirp overflowed a buffer: the chirp was above
  // the available bandwidth by then, even if the delays (pinned at a full
  // buffer) stayed flat. Congestion starts at the first loss at the latest.
  for (size_t k = 0; k + 1 < n; ++k) {
    if (s[k + 1].index - s[k].index > 1) {
      if (!open_start || *open_start > k) open_start = k;
      break;
    }
  }
  double fill = rate[n - 2];
  if (open_start) {
    fill = rate[*open_start];
    for (size_t k = *open_start; k + 1 < n; ++k) e[k] = fill;
  }
  double num = 0.0, den = 0.0;
  for (size_t k = 0; k + 1 < n; ++k) {
    num += (e[k] > 0.0 ? e[k] : fill) * gap[k];
    den += gap[k];
  }
  // The path carries at most H (U's output capacity when configured as
  // for_path() does): the grid's top gaps above it only queue at U.
  return std::min(xcp::Rate::from_bytes_per_s(num / den), config.high_rate);
}

}  // namespace xcp
