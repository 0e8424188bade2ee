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

}  // namespace
}  // namespace xcphost
