// The XCP-i sender duty (docs/protocol.md §4): a host that is the upstream end of a
// cloud acknowledges the estimation requests of the first XCP-i router.
#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "transport/endpoint.hh"
#include "xcp/control_message.hh"

namespace xcphost {
namespace {

struct RecordingWriter final : PacketWriter {
  std::span<uint8_t> buffer() override { return buf; }
  void commit(uint32_t remote, size_t len) override {
    sent.push_back({remote, std::vector<uint8_t>(buf.begin(), buf.begin() + static_cast<long>(len))});
  }
  bool has_room() const override { return true; }
  std::array<uint8_t, 2048> buf{};
  std::vector<std::pair<uint32_t, std::vector<uint8_t>>> sent;
};

TEST(EndpointXcpi, AcknowledgesAnEstimationRequestToItsSender) {
  RecordingWriter writer;
  Endpoint ep(writer);
  std::vector<uint8_t> req(xcp::kControlMessageLen);
  xcp::write_control({xcp::ControlType::kRequest, 0xBEEF, 3, 0, 0}, req);
  ep.on_packet(0x0A000302, req, xcp::Timestamp::zero());
  ASSERT_EQ(writer.sent.size(), 1u);
  EXPECT_EQ(writer.sent[0].first, 0x0A000302u);
  const auto ack = xcp::parse_control(writer.sent[0].second);
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->type, xcp::ControlType::kAck);
  EXPECT_EQ(ack->session, 0xBEEFu);
  EXPECT_EQ(ack->seq, 3u);
  EXPECT_EQ(ep.stats().xcpi_requests_answered, 1u);
}

TEST(EndpointXcpi, IgnoresAcksAndCountsMalformedControl) {
  RecordingWriter writer;
  Endpoint ep(writer);
  std::vector<uint8_t> ack(xcp::kControlMessageLen);
  xcp::write_control({xcp::ControlType::kAck, 1, 1, 0, 0}, ack);
  ep.on_packet(1, ack, xcp::Timestamp::zero());
  std::vector<uint8_t> bad = ack;
  bad[20] = 99;  // unknown type
  ep.on_packet(1, bad, xcp::Timestamp::zero());
  EXPECT_TRUE(writer.sent.empty());
  EXPECT_EQ(ep.stats().malformed, 1u);
}

// The chirp estimator (seed 000 Fig. 4 with the sender as U): a process that
// sends XCP-i traffic acknowledges with the chirps asked for and sends them,
// at the engine's defaults, stamped with when they left.
TEST(EndpointXcpi, SendsTheChirpsARequestAsksForWhenItSendsXcpi) {
  RecordingWriter writer;
  Endpoint ep(writer);
  ConnectionConfig cfg;
  cfg.xcpi_ip_ttl = 64;
  ep.listen(5001, cfg, [](Connection&) { return nullptr; });
  std::vector<uint8_t> req(xcp::kControlMessageLen);
  xcp::write_control({xcp::ControlType::kRequest, 0xBEEF, 1, 2, 30'000'000}, req);
  const xcp::Timestamp t0 = xcp::Timestamp::from_ns(5'000'000'000);
  ep.on_packet(0x0A000302, req, t0);
  ASSERT_EQ(writer.sent.size(), 1u);
  const auto ack = xcp::parse_control(writer.sent[0].second);
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->aux, 2u);
  const xcp::ChirpSchedule sched(xcp::ChirpConfig{}.for_rate(xcp::Rate::from_bits_per_s(30e6), 0.02));
  for (xcp::Timestamp t = ep.next_deadline(); t < t0 + xcp::Duration::seconds(5.0); t = ep.next_deadline()) {
    ep.service(t);
  }
  ASSERT_EQ(writer.sent.size(), 1u + 2u * sched.packets());
  int64_t last = 0;
  for (size_t i = 1; i < writer.sent.size(); ++i) {
    EXPECT_EQ(writer.sent[i].first, 0x0A000302u);
    EXPECT_EQ(writer.sent[i].second.size(), xcp::ChirpConfig{}.packet_bytes - 20u);
    const auto p = xcp::parse_control(writer.sent[i].second);
    ASSERT_TRUE(p);
    EXPECT_EQ(p->type, xcp::ControlType::kProbe);
    EXPECT_EQ(p->session, 0xBEEFu);
    EXPECT_EQ(p->probe_index(), (i - 1) % sched.packets());
    EXPECT_GE(static_cast<int64_t>(p->value), last);  // the service instant it left at
    last = static_cast<int64_t>(p->value);
  }
  EXPECT_EQ(ep.stats().xcpi_probes_sent, 2u * sched.packets());
  EXPECT_EQ(ep.stats().xcpi_probe_bytes, 2u * sched.packets() * xcp::ChirpConfig{}.packet_bytes);
  EXPECT_EQ(ep.next_deadline(), xcp::Timestamp::max());
}

TEST(EndpointXcpi, AProcessWithoutXcpiTrafficAcknowledgesWithoutChirps) {
  RecordingWriter writer;
  Endpoint ep(writer);
  std::vector<uint8_t> req(xcp::kControlMessageLen);
  xcp::write_control({xcp::ControlType::kRequest, 7, 1, 8, 30'000'000}, req);
  ep.on_packet(1, req, xcp::Timestamp::zero());
  ASSERT_EQ(writer.sent.size(), 1u);
  EXPECT_EQ(xcp::parse_control(writer.sent[0].second)->aux, 0u);
  EXPECT_EQ(ep.next_deadline(), xcp::Timestamp::max());
}

}  // namespace
}  // namespace xcphost
