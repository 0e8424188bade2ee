// Test support: a sender writing N pattern bytes then closing, and a
// receiver checking every byte against the pattern and closing on FIN.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>

#include "app/pattern.hh"
#include "transport/connection.hh"

namespace xcphost::test {

class PatternSender : public ConnectionHandler {
 public:
  explicit PatternSender(uint64_t total) : total_(total) {}
  void on_established(Connection&) override { established = true; }
  void on_send_space(Connection& c) override {
    std::array<uint8_t, 16384> chunk{};
    while (written_ < total_ && c.send_space() > 0) {
      const size_t n = static_cast<size_t>(std::min<uint64_t>({chunk.size(), total_ - written_, c.send_space()}));
      fill_pattern(written_, std::span<uint8_t>(chunk.data(), n));
      written_ += c.write(std::span<const uint8_t>(chunk.data(), n));
    }
    if (written_ == total_) c.close();
  }
  void on_closed(Connection&) override { closed = true; }
  bool established = false;
  bool closed = false;

 private:
  uint64_t total_;
  uint64_t written_ = 0;
};

class PatternReceiver : public ConnectionHandler {
 public:
  void on_established(Connection&) override { established = true; }
  void on_data(Connection&, std::span<const uint8_t> d) override {
    if (first_pattern_mismatch(received, d) != d.size()) mismatch = true;
    received += d.size();
  }
  void on_peer_fin(Connection& c) override {
    got_fin = true;
    c.close();
  }
  void on_closed(Connection& c) override {
    closed = true;
    error = c.error();
  }
  bool established = false;
  bool got_fin = false;
  bool closed = false;
  bool mismatch = false;
  ConnError error = ConnError::kNone;
  uint64_t received = 0;
};

}  // namespace xcphost::test
