// One reliable, bidirectional byte stream over the XCP shim: handshake,
// sequence/ACK with SACK, delayed ACK, receive window, RTT from echoed µs
// timestamps, RFC 6298 retransmission timer with back-off, SACK/dupack fast
// retransmit and recovery (SACK, NewReno or Reno: transport/loss_recovery.hh).
// The congestion controller owns the window.
//
// Clock-injected and socket-free: time comes in as arguments, packets go to
// a PacketWriter, events go to a ConnectionHandler. The owner calls
// on_packet() for each arriving segment, on_timer() when next_deadline()
// passes and pump() to let the connection send what the window allows.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>

#include "cc/congestion_controller.hh"
#include "transport/connection_config.hh"
#include "transport/connection_handler.hh"
#include "transport/feedback_accumulator.hh"
#include "transport/packet_writer.hh"
#include "transport/receive_side.hh"
#include "transport/rtt_estimator.hh"
#include "transport/sack_scoreboard.hh"
#include "transport/segment.hh"
#include "transport/send_buffer.hh"
#include "xcp/header.hh"
#include "xcp/units.hh"

namespace xcphost {

struct FlowKey {
  uint32_t remote_addr = 0;  // IPv4, host byte order
  uint16_t local_port = 0;
  uint16_t remote_port = 0;
  bool operator==(const FlowKey&) const = default;
};

enum class ConnState { kSynSent, kSynReceived, kEstablished, kClosed, kFailed };
enum class ConnError { kNone, kConnectTimeout, kReset, kTimedOut };
std::string_view to_string(ConnState s);
std::string_view to_string(ConnError e);

// Counters since the connection started (monotonic; reporters take deltas).
struct ConnectionStats {
  uint64_t bytes_sent = 0;           // payload bytes, first transmissions
  uint64_t bytes_acked = 0;          // payload bytes cumulatively acknowledged
  uint64_t bytes_received = 0;       // payload bytes delivered in order to the application
  uint64_t retransmits = 0;          // segments retransmitted
  uint64_t timeouts = 0;             // retransmission timeouts
  uint64_t tail_probes = 0;          // probes sent after ~2 RTT without an ACK
  uint64_t window_probes = 0;        // 1-byte probes of a closed peer receive window
  uint64_t fast_recoveries = 0;
  int64_t feedback_bytes = 0;        // sum of H_reverse_feedback received
  uint64_t packets_sent = 0;
  uint64_t packets_received = 0;
};

class Connection final : private ReceiveSink {
 public:
  // Active open (client) when `active`, else passive (created by a listener on a SYN).
  Connection(const ConnectionConfig& cfg, FlowKey key, bool active, ConnectionHandler* handler,
             PacketWriter& writer);
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Sends the SYN (active) or waits for one (passive).
  void start(xcp::Timestamp now);
  // Application: queues bytes for sending; returns how many fit.
  size_t write(std::span<const uint8_t> data);
  // Application: no more writes; a FIN follows the queued bytes. With
  // `discard_unsent`, bytes written but never transmitted are dropped first
  // (a timed test ends now, not after draining its send buffer).
  void close(bool discard_unsent = false);
  // Abort: sends RST and fails the connection with `err`.
  void abort(xcp::Timestamp now, ConnError err);

  // One arriving segment (shim, segment header, payload).
  void on_packet(const xcp::XcpHeader& shim, const SegmentHeader& seg,
                 std::span<const uint8_t> payload, xcp::Timestamp now);
  void on_timer(xcp::Timestamp now);
  xcp::Timestamp next_deadline() const;
  // Sends what the window, the peer's window and the writer allow, then any ACK owed.
  void pump(xcp::Timestamp now);

  ConnState state() const { return state_; }
  ConnError error() const { return error_; }
  bool done() const { return state_ == ConnState::kClosed || state_ == ConnState::kFailed; }
  const FlowKey& key() const { return key_; }
  const ConnectionStats& stats() const { return stats_; }
  const CongestionController& controller() const { return *cc_; }
  const RttEstimator& rtt() const { return rtt_; }
  size_t send_space() const { return send_buf_.free_space(); }
  // Bytes written and not yet acknowledged (sent or waiting to be).
  size_t send_buffered() const { return send_buf_.size(); }
  // What the peer's last ACKs allow beyond snd_nxt (0: its window is closed).
  uint64_t peer_window_left() const;
  bool closing() const { return fin_queued_; }
  bool peer_finished() const { return rx_.fin_received(); }
  uint64_t bytes_in_flight() const { return board_.pipe(); }
  // Sender-side loss state (outstanding, SACKed, lost, retransmitted bytes),
  // reported per interval like Linux's tcp_info unacked/sacked/lost/retrans.
  const SackScoreboard& scoreboard() const { return board_; }
  bool in_recovery() const { return in_recovery_; }
  void set_handler(ConnectionHandler* h) { handler_ = h; }
  ConnectionHandler* handler() const { return handler_; }

 private:
  // `carries_data`: the segment has payload or FIN (it is then no duplicate ACK).
  void on_ack_field(const xcp::XcpHeader& shim, const SegmentHeader& seg, bool carries_data,
                    xcp::Timestamp now);
  // ReceiveSink: what the receive side accepted, passed on to the application.
  void on_bytes(std::span<const uint8_t> bytes) override;
  void on_fin() override;
  // connection_recovery.cc
  LossRecovery mode() const { return cfg_.loss_recovery; }
  void update_recovery(const AckUpdate& upd, xcp::Timestamp now);
  void exit_recovery(xcp::Timestamp now);
  void on_retransmission_timeout(xcp::Timestamp now);
  void enter_established(xcp::Timestamp now);
  void finish(ConnState s, ConnError e);
  void maybe_done();

  bool send_one(xcp::Timestamp now);
  bool send_next_retransmission(xcp::Timestamp now);  // false: nothing is marked lost
  void send_segment(uint64_t seq, uint32_t len, bool fin, bool retransmit, xcp::Timestamp now);
  void send_control(uint8_t flags, xcp::Timestamp now);  // SYN, SYN-ACK, pure ACK, RST
  size_t write_packet(const SegmentHeader& seg, bool standard, std::span<uint8_t> out);
  void fill_ack_fields(SegmentHeader& seg);
  // The receive window we advertise: the handler's unread bytes count against it.
  uint32_t advertised_window() const;
  // The application took enough bytes that the sender should hear of the
  // reopened window now (RFC 1122 §4.2.3.3 receiver side of SWS avoidance).
  bool window_update_due() const;
  // Arms or clears the zero-window probe timer (RFC 9293 §3.8.6.1).
  void update_persist(xcp::Timestamp now);
  void send_window_probe(xcp::Timestamp now);
  void arm_rto(xcp::Timestamp now);
  void check_lost_head_retransmission(const SegmentHeader& seg, xcp::Timestamp now);
  xcp::Timestamp idle_deadline() const;
  xcp::Timestamp probe_deadline() const;
  void send_probe(xcp::Timestamp now);
  uint64_t window_payload_bytes() const;
  uint64_t window_pipe() const;  // what the window is compared with

  ConnectionConfig cfg_;
  FlowKey key_;
  bool active_;
  ConnectionHandler* handler_;
  PacketWriter& writer_;
  std::unique_ptr<CongestionController> cc_;
  RttEstimator rtt_;
  SackScoreboard board_;
  FeedbackAccumulator feedback_;
  SendBuffer send_buf_;
  ReceiveSide rx_;
  ConnectionStats stats_;

  ConnState state_;
  ConnError error_ = ConnError::kNone;
  xcp::Timestamp started_at_;
  xcp::Timestamp last_rx_;

  // Sender.
  uint64_t write_end_ = 0;                 // stream offset after the last byte written
  uint64_t peer_window_end_ = 0;           // highest offset the peer accepts
  bool fin_queued_ = false;
  bool fin_sent_ = false;
  bool fin_acked_ = false;
  bool in_recovery_ = false;
  bool recovery_after_rto_ = false;        // the repair after an RTO, not fast recovery
  uint64_t recovery_point_ = 0;            // RFC 6582 `recover`; kept after recovery ends
  // The fast retransmit at recovery entry (RFC 6675 step 4.3, RFC 5681 step 2)
  // and the retransmission on a NewReno partial ACK (RFC 6582 §3.2 step 3)
  // leave at once, whatever pipe and cwnd say; see send_one().
  bool retransmit_owed_ = false;
  bool peer_sends_sack_ = false;
  // Both SYNs permitted SACK: our receiver sends SACK blocks.
  bool sack_ok_ = false;
  uint32_t consecutive_timeouts_ = 0;
  // snd_nxt when the last RTO fired: an ACK beyond it covers data first sent after
  // the timeout, which ends the back-off under RttConfig::keep_backoff_until_new_data.
  uint64_t backoff_held_until_ = 0;
  // Last retransmission of the segment at snd_una and its ts_val: an ACK
  // echoing a later ts_val while snd_una has not moved means it was lost.
  std::optional<uint64_t> head_retx_seq_;
  uint32_t head_retx_ts_us_ = 0;
  // Tail-loss probe (RFC 8985 §7, simplified): when no ACK arrived for about
  // two RTTs while data is outstanding, send one segment to elicit an ACK.
  xcp::Timestamp last_ack_at_;
  bool probe_sent_ = false;
  xcp::Timestamp rto_deadline_ = xcp::Timestamp::max();
  // Receiver: right edge (rcv_nxt + window) of the last window we sent.
  uint64_t adv_right_edge_ = 0;
  // Sender: the peer's window is closed with nothing outstanding; probe then.
  xcp::Timestamp persist_deadline_ = xcp::Timestamp::max();
  uint32_t persist_backoff_ = 0;

};

}  // namespace xcphost
