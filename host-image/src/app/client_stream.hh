// One client stream: writes the preamble then payload (pattern with
// --verify, zeros otherwise) and collects the server's end-of-stream report.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "app/session_protocol.hh"
#include "transport/connection.hh"

namespace xcphost {

class ClientStream : public ConnectionHandler {
 public:
  ClientStream(bool verify, std::optional<uint64_t> payload_limit);

  void on_established(Connection&) override { established_ = true; }
  void on_send_space(Connection& c) override;
  void on_data(Connection&, std::span<const uint8_t> d) override;
  void on_closed(Connection&) override { closed_ = true; }

  bool established() const { return established_; }
  bool closed() const { return closed_; }
  // The server's report, once the whole report arrived and decoded.
  std::optional<ServerReport> report() const;
  bool bad_report() const { return report_fill_ == kReportBytes && !report(); }

 private:
  bool verify_;
  std::optional<uint64_t> limit_;  // payload bytes (preamble excluded)
  uint64_t written_ = 0;           // stream bytes written, preamble included
  bool established_ = false;
  bool closed_ = false;
  std::array<uint8_t, kReportBytes> report_buf_{};
  size_t report_fill_ = 0;
  std::vector<uint8_t> chunk_;
};

}  // namespace xcphost
