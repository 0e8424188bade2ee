#include "stackd/stats_report.hh"

#include <arpa/inet.h>

#include <algorithm>

namespace xcpstackd {

struct ::xcpsock_info connection_info(const xcphost::Connection& c) {
  struct ::xcpsock_info i{};
  i.cwnd_bytes = static_cast<uint32_t>(std::min<uint64_t>(c.controller().cwnd_bytes(), UINT32_MAX));
  i.srtt_us = static_cast<uint32_t>(c.rtt().srtt().us());
  const auto& s = c.stats();
  i.bytes_sent = s.bytes_sent;
  i.bytes_acked = s.bytes_acked;
  i.bytes_received = s.bytes_received;
  i.retransmits = s.retransmits;
  i.feedback_bytes = s.feedback_bytes;
  switch (c.state()) {
    case xcphost::ConnState::kSynSent:
    case xcphost::ConnState::kSynReceived: i.state = 0; break;
    case xcphost::ConnState::kEstablished: i.state = 1; break;
    case xcphost::ConnState::kClosed: i.state = 2; break;
    case xcphost::ConnState::kFailed: i.state = 3; break;
  }
  return i;
}

ConnSnapshot snapshot_of(const xcphost::Connection& c, xcphost::CcKind cc) {
  ConnSnapshot s;
  s.key = c.key();
  s.cc = cc;
  s.info = connection_info(c);
  s.info.cc = xcpsock_cc_from_name(std::string(xcphost::to_string(cc)).c_str());
  s.timeouts = c.stats().timeouts;
  return s;
}

nlohmann::json stream_json(const ConnSnapshot& s) {
  static constexpr const char* kStates[] = {"connecting", "established", "closed", "failed"};
  in_addr a{htonl(s.key.remote_addr)};
  char addr[INET_ADDRSTRLEN] = "";
  inet_ntop(AF_INET, &a, addr, sizeof addr);
  const std::string id = std::to_string(s.key.local_port) + "-" + addr + ":" + std::to_string(s.key.remote_port);
  return {{"socket", id},
          {"local_port", s.key.local_port},
          {"remote_addr", addr},
          {"remote_port", s.key.remote_port},
          {"cc", std::string(xcphost::to_string(s.cc))},
          {"state", s.info.state >= 0 && s.info.state <= 3 ? kStates[s.info.state] : "unknown"},
          {"bytes", s.info.bytes_acked},
          {"bytes_received", s.info.bytes_received},
          {"cwnd", s.info.cwnd_bytes},
          {"srtt_us", s.info.srtt_us},
          {"retransmits", s.info.retransmits},
          {"timeouts", s.timeouts},
          {"feedback_bytes", s.info.feedback_bytes}};
}

StatsReport::StatsReport(std::FILE* out, xcp::Duration interval, xcp::Timestamp start)
    : out_(out), interval_(interval), start_(start), next_(start + interval) {}

bool StatsReport::due(xcp::Timestamp now) {
  if (out_ == nullptr || now < next_) return false;
  // Skip intervals missed while the loop was busy instead of writing a burst.
  while (next_ <= now) next_ += interval_;
  return true;
}

void StatsReport::started(const std::string& socket) {
  if (out_ != nullptr) line({{"event", "start"}, {"data", {{"socket", socket}}}});
}

void StatsReport::listening(uint16_t port) {
  if (out_ != nullptr) line({{"event", "listen"}, {"data", {{"port", port}}}});
}

void StatsReport::interval(xcp::Timestamp now, const std::vector<ConnSnapshot>& streams) {
  if (out_ == nullptr || streams.empty()) return;
  nlohmann::json arr = nlohmann::json::array();
  for (const auto& s : streams) arr.push_back(stream_json(s));
  line({{"event", "interval"}, {"data", {{"t_s", (now - start_).seconds_f()}, {"streams", std::move(arr)}}}});
}

void StatsReport::closed(const ConnSnapshot& s) {
  if (out_ != nullptr) line({{"event", "closed"}, {"data", stream_json(s)}});
}

void StatsReport::line(const nlohmann::json& j) {
  const std::string text = j.dump();
  std::fputs(text.c_str(), out_);
  std::fputc('\n', out_);
  std::fflush(out_);  // the agent reads live; a pipe would otherwise buffer 4 KiB
}

}  // namespace xcpstackd
