// One XCP connection bridged to an application's descriptor: the daemon's
// end of an AF_UNIX stream socketpair. Bytes the application writes go into
// the connection while its send buffer is under the connection's send limit
// (SO_SNDBUF, else twice the congestion window: the application's writes
// block, or say EAGAIN, like a kernel socket's); bytes the connection
// delivers go to the application, held here while the socketpair is full,
// and what is held shrinks the receive window the peer sees (flow control).
// The peer's FIN becomes shutdown(SHUT_WR) on the socketpair (the
// application reads EOF); the application's EOF (shutdown or close) becomes
// our FIN.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "stackd/stats_report.hh"
#include "transport/connection.hh"
#include "transport/connection_handler.hh"
#include "xcp/fd.hh"

namespace xcpstackd {

class AppStream final : public xcphost::ConnectionHandler {
 public:
  // `max_backlog`: delivered bytes held for an application that does not
  // read; beyond it the connection is reset (a peer that ignores our receive
  // window). `max_send`: the largest send limit (bounds `sndbuf` and the
  // automatic one). Makes the daemon's end non-blocking (the application's
  // end keeps its mode).
  AppStream(xcp::FileDescriptor app, size_t max_backlog, size_t max_send);

  // The application's SO_SNDBUF (as the kernel stores it, doubled); 0 = automatic.
  void set_sndbuf(size_t bytes) { sndbuf_ = bytes; }
  // Bytes the application wrote before the connection was established to
  // keep its descriptor unwritable (a non-blocking connect's EINPROGRESS):
  // read and dropped once it is.
  void set_discard(size_t bytes) { discard_ = bytes; }
  // The connect failed: drop the filler now, so the descriptor polls
  // writable (the kernel's answer to a failed non-blocking connect) before
  // it polls hung up.
  void drop_filler_now() { drop_filler(); }
  // The most the connection's send buffer holds for this application.
  size_t send_limit() const;

  void attach(xcphost::Connection& c) { conn_ = &c; }
  xcphost::Connection* connection() const { return closed_ ? nullptr : conn_; }
  int fd() const { return app_.get(); }

  // ConnectionHandler
  void on_established(xcphost::Connection&) override { established_ = true; }
  void on_data(xcphost::Connection& c, std::span<const uint8_t> d) override;
  void on_peer_fin(xcphost::Connection&) override { peer_fin_ = true; }
  void on_send_space(xcphost::Connection& c) override;
  void on_closed(xcphost::Connection& c) override;
  uint64_t unread_bytes() const override { return backlog_bytes(); }

  // Poll events wanted on fd() now.
  short poll_events() const;
  // Writes held bytes to the application, then the half-close owed; notes
  // when the application end is gone (nothing more can be delivered).
  void flush_to_app();
  // The connection ended and everything deliverable was delivered.
  bool finished() const { return closed_ && (to_app_.size() == to_app_off_ || app_gone_); }
  bool established() const { return established_; }
  bool overflowed() const { return overflow_; }
  // The application closed its descriptor with bytes it never read (the
  // kernel says ECONNRESET on our end): reset the connection, as a kernel's
  // TCP sends RST for a socket closed with unread data.
  bool app_reset() const { return app_reset_; }
  // How the connection ended (kNone while it lives or when it closed cleanly).
  xcphost::ConnError error() const { return error_; }
  uint64_t backlog_bytes() const { return to_app_.size() - to_app_off_; }
  // The connection's counters when it ended (its object may be gone by the
  // time the daemon reports it); empty while it lives.
  const std::optional<ConnSnapshot>& final_state() const { return final_; }

 private:
  // What may be read from the application now.
  size_t send_room() const;
  // Drops the pre-connection filler; false while some is left.
  bool drop_filler();

  xcp::FileDescriptor app_;
  size_t max_backlog_;
  size_t max_send_;
  size_t sndbuf_ = 0;
  size_t discard_ = 0;
  xcphost::Connection* conn_ = nullptr;
  std::vector<uint8_t> to_app_;  // delivered, not yet written to the application
  size_t to_app_off_ = 0;
  bool established_ = false;
  bool peer_fin_ = false;
  bool shut_wr_ = false;
  bool app_eof_ = false;   // the application will write no more
  bool app_gone_ = false;  // the application closed its end: drop what arrives
  bool closed_ = false;
  bool overflow_ = false;
  bool app_reset_ = false;
  xcphost::ConnError error_ = xcphost::ConnError::kNone;
  std::optional<ConnSnapshot> final_;
};

}  // namespace xcpstackd
