#include "transport/feedback_accumulator.hh"

#include <algorithm>
#include <limits>

namespace xcphost {

namespace {
constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
constexpr int64_t kMin = std::numeric_limits<int32_t>::min();
}  // namespace

void FeedbackAccumulator::add(int32_t feedback_bytes) {
  // Exact in int64 (2^32 packets of INT32_MAX before overflow); the sum is
  // saturated to int32 only when it is written into a header.
  sum_ += feedback_bytes;
  ++packets_;
}

void FeedbackAccumulator::on_data(const xcp::XcpHeader& h) {
  add(h.feedback_bytes);
  if (h.has_ixcp()) next_bottleneck_id_ = h.next_bottleneck_id;
}

int32_t FeedbackAccumulator::pending() const {
  return static_cast<int32_t>(std::clamp<int64_t>(sum_, kMin, kMax));
}

int32_t FeedbackAccumulator::take() {
  const int32_t v = pending();
  sum_ = 0;
  packets_ = 0;
  return v;
}

void FeedbackAccumulator::fill_ack(xcp::XcpHeader& ack) {
  ack.reverse_feedback_bytes = take();
  if (next_bottleneck_id_) {
    ack.flags |= xcp::flags::kIxcp;
    ack.bottleneck_id = *next_bottleneck_id_;
    ack.next_bottleneck_id = *next_bottleneck_id_;
  }
}

}  // namespace xcphost
