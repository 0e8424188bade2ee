#include "xcp/persistent_queue.hh"

#include <algorithm>

namespace xcprouter {

xcp::Duration PersistentQueue::window_for(double queue_bytes_now, double d_s, double c_bytes_per_s) const {
  // Draining time of the current queue; with no capacity the queue never
  // drains and the window falls to its minimum.
  if (c_bytes_per_s <= 0) return min_window_;
  const double drain_s = queue_bytes_now / c_bytes_per_s;
  const xcp::Duration tq = xcp::Duration::seconds((d_s - drain_s) / 2);
  return std::max(min_window_, tq);
}

void PersistentQueue::start(xcp::Timestamp now, double queue_bytes, double d_s, double c_bytes_per_s) {
  seen_ = false;
  window_ = window_for(queue_bytes, d_s, c_bytes_per_s);
  deadline_ = now + window_;
}

void PersistentQueue::on_deadline(xcp::Timestamp now, double queue_bytes_now, double d_s,
                                  double c_bytes_per_s) {
  q_ = seen_ ? min_ : queue_bytes_now;
  start(now, queue_bytes_now, d_s, c_bytes_per_s);
}

}  // namespace xcprouter
