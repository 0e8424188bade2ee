#include "cc/xcp_window_control.hh"

#include <algorithm>
#include <cmath>
#include <limits>

namespace xcphost {

namespace {
constexpr int64_t kI32Max = std::numeric_limits<int32_t>::max();
constexpr int64_t kI32Min = std::numeric_limits<int32_t>::min();
constexpr int64_t kU32Max = std::numeric_limits<uint32_t>::max();
}  // namespace

XcpWindowControl::XcpWindowControl(const CcConfig& cfg)
    : cfg_(cfg), s_(std::max<int64_t>(1, cfg.packet_bytes)) {
  if (cfg_.mss_bytes == 0) cfg_.mss_bytes = 1;
  // Default: one packet, as ns-2's XCP sender starts; feedback grows it from
  // the first RTT on. A configured initial window is in payload bytes.
  cwnd_wire_ = s_;
  if (cfg.initial_cwnd_bytes > 0) {
    const double wire = static_cast<double>(cfg.initial_cwnd_bytes) * static_cast<double>(s_) / cfg_.mss_bytes;
    cwnd_wire_ = std::max<int64_t>(s_, static_cast<int64_t>(wire));
  }
  if (cfg.ixcp_access_link_id) bottleneck_id_ = *cfg.ixcp_access_link_id;
}

uint64_t XcpWindowControl::cwnd_bytes() const {
  const double payload = static_cast<double>(cwnd_wire_) * cfg_.mss_bytes / static_cast<double>(s_);
  return std::max<uint64_t>(cfg_.mss_bytes, static_cast<uint64_t>(payload));
}

int32_t XcpWindowControl::feedback_request(double packet_bytes, double rate_bytes_per_s,
                                        xcp::Duration srtt, double cwnd_wire_bytes) {
  if (cwnd_wire_bytes <= 0) return static_cast<int32_t>(kI32Max);
  const double fb = packet_bytes * (rate_bytes_per_s * srtt.seconds_f() - cwnd_wire_bytes) / cwnd_wire_bytes;
  // Round toward zero: a request never asks for more than the rate allows.
  const double clamped = std::clamp(std::trunc(fb), static_cast<double>(kI32Min), static_cast<double>(kI32Max));
  return static_cast<int32_t>(clamped);
}

void XcpWindowControl::fill_header(xcp::XcpHeader& h, xcp::Duration srtt, bool app_limited) const {
  h.cwnd_bytes = static_cast<uint32_t>(std::min(cwnd_wire_, kU32Max));
  // 0 means "no sample yet" on the wire, so a real sub-µs srtt is sent as 1.
  h.rtt_us = srtt > xcp::Duration::zero()
                 ? static_cast<uint32_t>(std::clamp<int64_t>(srtt.us(), 1, kU32Max))
                 : 0;
  h.flags &= static_cast<uint8_t>(~(xcp::flags::kAppLimited | xcp::flags::kLossFallback));
  if (app_limited) {
    // An application-limited sender cannot use more window: ask for nothing.
    h.feedback_bytes = 0;
    h.flags |= xcp::flags::kAppLimited;
  } else if (cfg_.desired_rate.is_zero()) {
    h.feedback_bytes = static_cast<int32_t>(kI32Max);
  } else if (srtt <= xcp::Duration::zero()) {
    // r·srtt is unknown before the first sample; routers force H_feedback <= 0
    // for H_rtt = 0 anyway, so request no change.
    h.feedback_bytes = 0;
  } else {
    h.feedback_bytes = feedback_request(static_cast<double>(s_), cfg_.desired_rate.bytes_per_s(), srtt,
                                        static_cast<double>(cwnd_wire_));
  }
  if (loss_fallback_) h.flags |= xcp::flags::kLossFallback;
  if (cfg_.ixcp_access_link_id) {
    h.flags |= xcp::flags::kIxcp;
    h.bottleneck_id = bottleneck_id_;
    // Routers that lower H_feedback overwrite this; start from the current id.
    h.next_bottleneck_id = bottleneck_id_;
  }
  if (cfg_.xcpi_ip_ttl != 0) {
    h.flags |= xcp::flags::kXcpi;
    h.xcp_ttl = cfg_.xcpi_ip_ttl;
    h.last_xcp_router = cfg_.xcpi_sender_ipv4;
  }
}

void XcpWindowControl::on_ack(const AckEvent& ack) {
  if (!(cfg_.feedback_on_new_acks_only && ack.duplicate)) {
    cwnd_wire_ = std::max<int64_t>(cwnd_wire_ + ack.reverse_feedback_bytes, s_);
    feedback_total_ += ack.reverse_feedback_bytes;
  }
  if (cfg_.ixcp_access_link_id && ack.echoed_next_bottleneck_id) bottleneck_id_ = *ack.echoed_next_bottleneck_id;
  // After a timeout the fallback ends with the first new data ACKed outside
  // recovery, unless the transport ends it explicitly first.
  if (after_timeout_ && !ack.in_recovery && ack.newly_acked_bytes > 0) {
    after_timeout_ = false;
    loss_fallback_ = false;
  }
}

void XcpWindowControl::on_loss(xcp::Timestamp, uint64_t) {
  cwnd_wire_ = std::max<int64_t>(cwnd_wire_ / 2, s_);
  loss_fallback_ = true;
}

void XcpWindowControl::on_recovery_exit(xcp::Timestamp) {
  loss_fallback_ = false;
  after_timeout_ = false;
}

void XcpWindowControl::on_timeout(xcp::Timestamp) {
  // "Severe congestion" (docs/protocol.md §3): back to one packet.
  cwnd_wire_ = s_;
  loss_fallback_ = true;
  after_timeout_ = true;
}

}  // namespace xcphost
