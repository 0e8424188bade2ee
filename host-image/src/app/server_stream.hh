// One accepted stream on the server: parses the preamble, counts bytes,
// checks the pattern when asked, and on the client's FIN sends its report.
#pragma once

#include <array>
#include <cstdint>

#include "app/session_protocol.hh"
#include "transport/connection.hh"
#include "xcp/units.hh"

namespace xcphost {

class ServerStream : public ConnectionHandler {
 public:
  explicit ServerStream(xcp::Timestamp accepted_at) : accepted_at_(accepted_at) {}

  void on_data(Connection& c, std::span<const uint8_t> d) override;
  void on_peer_fin(Connection& c) override;
  void on_closed(Connection&) override { closed_ = true; }

  bool closed() const { return closed_; }
  bool bad_preamble() const { return bad_preamble_; }
  const ServerReport& report() const { return report_; }
  xcp::Timestamp accepted_at() const { return accepted_at_; }

 private:
  xcp::Timestamp accepted_at_;
  std::array<uint8_t, kPreambleBytes> pre_{};
  size_t pre_fill_ = 0;
  bool verify_ = false;
  bool bad_preamble_ = false;
  bool closed_ = false;
  ServerReport report_;
};

}  // namespace xcphost
