// A long-running XCP sender/receiver pair following docs/protocol.md §3:
// window-based, H_cwnd = cwnd, H_rtt = srtt (0 before the first sample),
// H_feedback = INT32_MAX (no rate limit wanted); the receiver echoes each
// packet's H_feedback as H_reverse_feedback on an immediate ACK and the
// sender applies cwnd = max(cwnd + H_reverse_feedback, s) once per ACK.
// No slow start, no additive increase. The first RTT sample comes from the
// connection handshake, so the first data packet already carries H_rtt.
//
// iXCP (docs/protocol.md §5) after use_ixcp(id): packets carry the B block with
// bottleneck_id = next_bottleneck_id = the flow's current id (first the access
// link's), the receiver echoes next_bottleneck_id and the sender adopts it.
//
// Simplifications (test model, not the host stack): ACKs cross an
// uncongested reverse path; a drop is signalled to the sender one RTT after
// it happens (as three duplicate ACKs would be) and halves cwnd at most once
// per srtt; the sender's timestamp travels in Packet::arrival and is echoed.
#pragma once

#include <algorithm>
#include <climits>
#include <cstdint>

#include "../qdisc_test_util.hh"
#include "event_queue.hh"

namespace xcprouter::sim {

struct FlowPath {
  xcp::Duration to_bottleneck;    // sender → bottleneck queue
  xcp::Duration to_receiver;      // bottleneck output → receiver (after serialisation)
  xcp::Duration ack_return;       // receiver → sender
  xcp::Duration base_rtt() const { return to_bottleneck + to_receiver + ack_return; }
};

class XcpFlow {
 public:
  using Send = std::function<bool(PacketPtr, xcp::Timestamp)>;  // into the bottleneck

  XcpFlow(EventQueue& ev, uint16_t id, FlowPath path, uint32_t packet_bytes, Send send)
      : ev_(ev), id_(id), path_(path), s_(packet_bytes), cwnd_(packet_bytes), send_(std::move(send)) {}

  // Opens the connection at `t`: a handshake of one base RTT gives the first
  // RTT sample (as the host stack's SYN/SYN-ACK does), then data flows.
  void start(xcp::Timestamp t) {
    ev_.at(t + path_.base_rtt(), [this, t](xcp::Timestamp now) {
      srtt_s_ = (now - t).seconds_f();
      try_send(now);
    });
  }

  void use_ixcp(uint32_t access_link_id) {
    ixcp_ = true;
    bottleneck_id_ = access_link_id;
  }
  uint32_t bottleneck_id() const { return bottleneck_id_; }

  // Receiver side: a data packet left the bottleneck and reaches the receiver.
  void on_delivered(Packet& p, xcp::Timestamp now) {
    const int32_t fb = testutil::wire_feedback(p);
    const uint32_t next_id = ixcp_ ? testutil::wire_next_bottleneck_id(p) : 0;
    const xcp::Timestamp sent = p.arrival;
    ev_.at(now + path_.to_receiver + path_.ack_return, [this, fb, next_id, sent](xcp::Timestamp t) {
      if (ixcp_) bottleneck_id_ = next_id;
      on_ack(fb, sent, t);
    });
  }

  double cwnd() const { return cwnd_; }
  double srtt_s() const { return srtt_s_; }
  uint16_t id() const { return id_; }
  const FlowPath& path() const { return path_; }
  uint64_t losses() const { return losses_; }

 private:
  void try_send(xcp::Timestamp now) {
    while (inflight_ + s_ <= std::max(cwnd_, static_cast<double>(s_))) {
      const uint32_t rtt_us = static_cast<uint32_t>(srtt_s_ * 1e6);
      auto p = ixcp_ ? testutil::make_ixcp_packet(s_, static_cast<uint32_t>(cwnd_), rtt_us, INT32_MAX,
                                                  bottleneck_id_, bottleneck_id_)
                     : testutil::make_xcp_packet(s_, static_cast<uint32_t>(cwnd_), rtt_us, INT32_MAX);
      p->flow.sport = id_;
      p->arrival = now;
      inflight_ += s_;
      Packet* raw = p.release();
      ev_.at(now + path_.to_bottleneck, [this, raw](xcp::Timestamp t) {
        if (!send_(PacketPtr(raw), t)) {
          // Dropped: the sender learns about it about one RTT later.
          ev_.at(t + path_.base_rtt(), [this](xcp::Timestamp t2) { on_loss(t2); });
        }
      });
    }
  }

  void on_ack(int32_t reverse_feedback, xcp::Timestamp sent, xcp::Timestamp now) {
    const double sample = (now - sent).seconds_f();
    srtt_s_ = srtt_s_ == 0 ? sample : srtt_s_ + (sample - srtt_s_) / 8;
    cwnd_ = std::max(cwnd_ + reverse_feedback, static_cast<double>(s_));
    inflight_ -= s_;
    try_send(now);
  }

  void on_loss(xcp::Timestamp now) {
    ++losses_;
    inflight_ -= s_;
    if ((now - last_cut_).seconds_f() > srtt_s_) {
      cwnd_ = std::max(cwnd_ / 2, static_cast<double>(s_));
      last_cut_ = now;
    }
    try_send(now);
  }

  EventQueue& ev_;
  uint16_t id_;
  FlowPath path_;
  uint32_t s_;
  double cwnd_;
  double inflight_ = 0;
  double srtt_s_ = 0;
  uint64_t losses_ = 0;
  bool ixcp_ = false;
  uint32_t bottleneck_id_ = 0;
  xcp::Timestamp last_cut_{};
  Send send_;
};

}  // namespace xcprouter::sim
