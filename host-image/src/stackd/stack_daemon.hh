// xcp-stackd: the per-host (per network namespace) XCP socket stack. One
// process owns the raw protocol-253 socket, the Endpoint with every
// connection of every application on the host, and their timers; programs
// reach it over an AF_UNIX SOCK_SEQPACKET socket (socket/stackd_protocol.hh)
// and move bytes through socketpairs (stackd/app_stream.hh). Why a daemon and
// not a stack thread per process: docs/socket-stack.md.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <list>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "io/raw_socket.hh"
#include "io/rx_batch.hh"
#include "io/tx_batch.hh"
#include "socket/stackd_protocol.hh"
#include "stackd/app_stream.hh"
#include "stackd/stats_report.hh"
#include "transport/connection_config.hh"
#include "transport/endpoint.hh"
#include "xcp/clock.hh"
#include "xcp/fd.hh"

namespace xcpstackd {

// A SYN to a port no listener of the daemon holds: refuse it with RST (the
// client's connect fails with ECONNREFUSED at once, as a kernel's TCP does),
// or let it go unanswered (the client's connect times out). kAuto refuses
// while the daemon owns the only protocol-253 raw socket of its network
// namespace (/proc/self/net/raw), so no other stack (an xcpperf) could own
// the port; at most one look per 10 ms, else unanswered.
enum class UnownedSyn { kAuto, kReset, kIgnore };

struct DaemonConfig {
  std::string address = "@xcp-stackd";    // socket/unix_channel.hh
  xcphost::ConnectionConfig defaults;       // every socket's settings but its cc and rate
  xcphost::RawSocketConfig raw;
  size_t max_backlog_bytes = size_t{16} << 20;  // per connection, see AppStream
  // Per connection: the largest send limit (SO_SNDBUF or the automatic one,
  // AppStream::send_limit) and the receive buffer whose free space is the
  // window advertised to the peer (what a slow reader leaves unread counts).
  size_t max_send_buffer_bytes = size_t{4} << 20;
  uint32_t receive_buffer_bytes = uint32_t{4} << 20;
  size_t max_connections = 4096;                // bounds the daemon's memory
  UnownedSyn unowned_syn = UnownedSyn::kAuto;
  // --json-stream: per-connection state every `report_interval` on stdout
  // (stackd/stats_report.hh); zero = off.
  xcp::Duration report_interval = xcp::Duration::zero();
};

struct DaemonStats {
  uint64_t requests = 0;
  uint64_t bad_requests = 0;
  uint64_t connects = 0;
  uint64_t accepts = 0;
  uint64_t refused_limit = 0;  // over max_connections or a listener's backlog
  uint64_t overflow_resets = 0;
  uint64_t refused_syns = 0;  // SYNs to ports nobody listens on, answered with RST
};

class StackDaemon {
 public:
  StackDaemon(const DaemonConfig& cfg, const xcp::Clock& clock);
  StackDaemon(const StackDaemon&) = delete;
  StackDaemon& operator=(const StackDaemon&) = delete;

  // Serves until `stop()` returns true (checked at least every 50 ms).
  void run(const std::function<bool()>& stop);
  // One iteration with at most `max_sleep` in ppoll (tests drive this).
  void run_once(xcp::Duration max_sleep);

  const DaemonStats& stats() const { return stats_; }
  size_t stream_count() const { return streams_.size(); }
  // --json-stream's first line, written once the caller is ready to serve.
  void report_started() { report_.started(cfg_.address); }

 private:
  struct Stream {
    std::unique_ptr<AppStream> app;
    xcphost::Connection* active = nullptr;  // our connect(): removed from the Endpoint by us
    xcp::FileDescriptor reply_to;            // connect request awaiting the handshake's outcome
    xcp::FileDescriptor app_end;             // accepted: the application's end, until delivered
    uint16_t listener_port = 0;              // accepted: where to deliver it
    bool reject = false;                     // over a limit: reset at the next step
    xcphost::CcKind cc = xcphost::CcKind::kNewReno;
  };
  struct Listener {
    xcp::FileDescriptor chan;  // the application's listening descriptor's peer
    uint32_t backlog = 1;
    uint32_t queued = 0;       // established, not yet taken by the application
    xcphost::CcKind cc = xcphost::CcKind::kNewReno;
    uint32_t sndbuf = 0;       // SO_SNDBUF the listening socket had: its connections inherit it
  };

  void accept_control();
  void on_request(xcp::FileDescriptor ctl);
  void do_connect(xcp::FileDescriptor ctl, const xcpsock::Request& req, xcp::FileDescriptor app);
  void do_listen(xcp::FileDescriptor ctl, const xcpsock::Request& req);
  void do_info(int ctl, const xcpsock::Request& req);
  void do_set_sndbuf(int ctl, const xcpsock::Request& req);
  void do_fate(int ctl, const xcpsock::Request& req);
  Stream* find_stream(const xcpsock::Request& req);
  std::unique_ptr<AppStream> make_app(xcp::FileDescriptor fd) const;
  xcphost::ConnectionHandler* on_syn(uint16_t port, xcphost::Connection& c);
  xcphost::ConnectionConfig config_for(const xcpsock::Request& req) const;
  // After the endpoint ran: replies, deliveries, flushing, reaping.
  void step_streams(xcp::Timestamp now);
  void deliver(Stream& s);
  void close_listener(uint16_t port);
  void report_closed(const Stream& s, const xcphost::Connection* c);
  uint16_t ephemeral_port(uint32_t remote_addr);
  bool may_refuse_syn();

  DaemonConfig cfg_;
  const xcp::Clock& clock_;
  xcphost::RawSocket sock_;
  xcphost::TxBatch tx_;
  xcphost::RxBatch rx_;
  xcphost::Endpoint ep_;
  xcp::FileDescriptor ctl_;
  std::vector<xcp::FileDescriptor> pending_ctl_;  // connected, request not read yet
  std::list<Stream> streams_;                      // stable addresses
  std::unordered_map<uint16_t, Listener> listeners_;
  uint16_t next_port_;
  DaemonStats stats_;
  StatsReport report_;
  std::optional<xcp::Timestamp> last_raw_check_;
  // Established connections that ended in a reset or a timeout, newest last
  // (bounded): what an application that read EOF on one asks (Op::kFate).
  std::deque<std::pair<xcphost::FlowKey, int>> fates_;
};

}  // namespace xcpstackd
