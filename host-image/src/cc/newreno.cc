#include "cc/newreno.hh"

#include <algorithm>
#include <limits>

namespace xcphost {

namespace {
// RFC 5681 (3.1) initial window: min(4·SMSS, max(2·SMSS, 4380 bytes)).
double initial_window(const CcConfig& cfg) {
  if (cfg.initial_cwnd_bytes > 0) return static_cast<double>(cfg.initial_cwnd_bytes);
  const double mss = cfg.mss_bytes;
  return std::min(4 * mss, std::max(2 * mss, 4380.0));
}
// RFC 3465 (ABC) slow-start limit: at most L = 2 SMSS per ACK.
constexpr double kAbcLimitSegments = 2.0;
}  // namespace

NewReno::NewReno(const CcConfig& cfg)
    : mss_(cfg.mss_bytes == 0 ? 1.0 : static_cast<double>(cfg.mss_bytes)),
      cwnd_(initial_window(cfg)),
      // RFC 5681: "initial value of ssthresh SHOULD be set arbitrarily high".
      ssthresh_(std::numeric_limits<uint64_t>::max()) {}

uint64_t NewReno::cwnd_bytes() const { return static_cast<uint64_t>(cwnd_); }

void NewReno::fill_header(xcp::XcpHeader& h, xcp::Duration, bool) const {
  h.cwnd_bytes = 0;
  h.rtt_us = 0;
  h.feedback_bytes = 0;
}

double NewReno::increase_segments(double) const { return 1.0; }

uint64_t NewReno::ssthresh_after_loss(uint64_t bytes_in_flight) const {
  return std::max<uint64_t>(bytes_in_flight / 2, static_cast<uint64_t>(2 * mss_));
}

void NewReno::on_ack(const AckEvent& ack) {
  last_flight_ = ack.bytes_in_flight;
  // In fast recovery the window is held (pipe does the RFC 6582 bookkeeping).
  // Our own flag, not ack.in_recovery: a transport that also treats the
  // repair after an RTO as "recovery" must still get slow start there.
  if (in_recovery_ || ack.newly_acked_bytes == 0) return;
  const double acked = static_cast<double>(ack.newly_acked_bytes);
  if (in_slow_start()) {
    cwnd_ += std::min(acked, kAbcLimitSegments * mss_);
  } else {
    // Byte-counting congestion avoidance: a(w)·SMSS per cwnd of ACKed bytes,
    // i.e. SMSS·a·acked/cwnd per ACK (RFC 5681 (3), RFC 3649 per-ACK rule).
    cwnd_ += increase_segments(window_segments()) * mss_ * acked / cwnd_;
  }
}

void NewReno::on_loss(xcp::Timestamp, uint64_t bytes_in_flight) {
  last_flight_ = bytes_in_flight;
  ssthresh_ = ssthresh_after_loss(bytes_in_flight);
  cwnd_ = static_cast<double>(ssthresh_);
  in_recovery_ = true;
}

void NewReno::on_recovery_exit(xcp::Timestamp) {
  if (!in_recovery_) return;
  in_recovery_ = false;
  // RFC 6582 (3.2 step 6, option 1): cwnd = min(ssthresh, max(FlightSize, SMSS) + SMSS)
  // so leaving recovery with little in flight cannot release a burst.
  const double flight = std::max(static_cast<double>(last_flight_), mss_);
  cwnd_ = std::min(static_cast<double>(ssthresh_), flight + mss_);
}

void NewReno::on_timeout(xcp::Timestamp) {
  // RFC 5681 (4) and (5): ssthresh from the flight, cwnd = loss window = 1 SMSS.
  ssthresh_ = ssthresh_after_loss(last_flight_);
  cwnd_ = mss_;
  in_recovery_ = false;
}

void NewReno::on_packet_sent(xcp::Timestamp, uint64_t, uint64_t bytes_in_flight) {
  last_flight_ = bytes_in_flight;
}

}  // namespace xcphost
