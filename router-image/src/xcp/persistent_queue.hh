// XCP's persistent-queue estimator (docs/protocol.md §2, ns-2.35 xcpq.cc): the
// minimum instantaneous queue seen at departures over a window
// Tq = max(2 ms, (d − q_now/C)/2), i.e. roughly half a propagation RTT, so a
// queue that drains within an RTT does not count as persistent. The window is
// deliberately not d itself (docs/protocol.md §2).
#pragma once

#include "xcp/units.hh"

namespace xcprouter {

class PersistentQueue {
 public:
  explicit PersistentQueue(xcp::Duration min_window) : min_window_(min_window) {}

  // Starts the first window at `now`.
  void start(xcp::Timestamp now, double queue_bytes, double d_s, double c_bytes_per_s);

  // Instantaneous queue right after a departure (bytes still queued).
  void on_departure(double queue_bytes) {
    if (!seen_ || queue_bytes < min_) min_ = queue_bytes;
    seen_ = true;
  }

  xcp::Timestamp deadline() const { return deadline_; }
  // End of a window: Q = the minimum, start the next window. [decide] A
  // window without any departure (idle or stalled link) takes the current
  // queue: 0 when idle, all of it when the link is stalled — both are what
  // persists.
  void on_deadline(xcp::Timestamp now, double queue_bytes_now, double d_s, double c_bytes_per_s);

  double value() const { return q_; }
  xcp::Duration window() const { return window_; }
  void set_min_window(xcp::Duration w) { min_window_ = w; }

  // Tq for control interval `d_s`, current queue and capacity.
  xcp::Duration window_for(double queue_bytes_now, double d_s, double c_bytes_per_s) const;

 private:
  xcp::Duration min_window_;
  xcp::Duration window_{};
  xcp::Timestamp deadline_ = xcp::Timestamp::max();
  double min_ = 0;
  bool seen_ = false;
  double q_ = 0;
};

}  // namespace xcprouter
