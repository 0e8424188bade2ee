// One XCP connection bridged to an application's descriptor: the daemon's
// end of an AF_UNIX stream socketpair. Bytes the application writes go into
// the connection as its send buffer makes room; bytes the connection
// delivers go to the application, held here while the socketpair is full.
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
  // read; beyond it the connection is reset (the transport has no receiver
  // flow control towards the application: docs/socket-stack.md).
  // Makes the daemon's end non-blocking (the application's end keeps its mode).
  AppStream(xcp::FileDescriptor app, size_t max_backlog);

  void attach(xcphost::Connection& c) { conn_ = &c; }
  xcphost::Connection* connection() const { return closed_ ? nullptr : conn_; }
  int fd() const { return app_.get(); }

  // ConnectionHandler
  void on_established(xcphost::Connection&) override { established_ = true; }
  void on_data(xcphost::Connection& c, std::span<const uint8_t> d) override;
  void on_peer_fin(xcphost::Connection&) override { peer_fin_ = true; }
  void on_send_space(xcphost::Connection& c) override;
  void on_closed(xcphost::Connection& c) override;

  // Poll events wanted on fd() now.
  short poll_events() const;
  // Writes held bytes to the application, then the half-close owed; notes
  // when the application end is gone (nothing more can be delivered).
  void flush_to_app();
  // The connection ended and everything deliverable was delivered.
  bool finished() const { return closed_ && (to_app_.size() == to_app_off_ || app_gone_); }
  bool established() const { return established_; }
  bool overflowed() const { return overflow_; }
  uint64_t backlog_bytes() const { return to_app_.size() - to_app_off_; }
  // The connection's counters when it ended (its object may be gone by the
  // time the daemon reports it); empty while it lives.
  const std::optional<ConnSnapshot>& final_state() const { return final_; }

 private:
  xcp::FileDescriptor app_;
  size_t max_backlog_;
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
  std::optional<ConnSnapshot> final_;
};

}  // namespace xcpstackd
