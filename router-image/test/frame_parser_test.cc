#include "core/frame_parser.hh"

#include <gtest/gtest.h>

#include "engine_test_util.hh"

namespace xcprouter {
namespace {

using enginetest::FrameSpec;
using enginetest::make_frame;

TEST(FrameParser, UdpFrame) {
  FrameSpec s;
  auto p = make_frame(s);
  const auto out = parse_frame(*p);
  EXPECT_EQ(out.verdict, ParseVerdict::kIpv4);
  EXPECT_EQ(p->ip_offset, 14);
  EXPECT_EQ(p->ip_total_len, 100);
  EXPECT_EQ(p->wire_bytes(), 100u);
  EXPECT_EQ(p->ip_ttl_in, 64);
  EXPECT_FALSE(p->has_xcp());
  EXPECT_EQ(p->flow.src, s.src);
  EXPECT_EQ(p->flow.dst, s.dst);
  EXPECT_EQ(p->flow.sport, 1234);
  EXPECT_EQ(p->flow.dport, 5678);
  EXPECT_EQ(p->flow.proto, 17);
}

TEST(FrameParser, XcpShimAndTransportPortsBehindIt) {
  FrameSpec s;
  s.with_xcp = true;
  s.proto = 6;
  s.xcp.format = xcp::Format::kStandard;
  s.xcp.cwnd_bytes = 12345;
  s.xcp.rtt_us = 100000;
  s.xcp.feedback_bytes = -7;
  auto p = make_frame(s);
  const auto out = parse_frame(*p);
  ASSERT_EQ(out.verdict, ParseVerdict::kIpv4);
  EXPECT_FALSE(out.xcp_shim_malformed);
  ASSERT_TRUE(p->has_xcp());
  EXPECT_EQ(p->xcp_offset, 34);
  EXPECT_EQ(p->xcp.cwnd_bytes, 12345u);
  EXPECT_EQ(p->xcp.feedback_bytes, -7);
  EXPECT_EQ(p->xcp.next_protocol, 6);
  EXPECT_EQ(p->flow.proto, xcp::kIpProtoXcp);
  EXPECT_EQ(p->flow.sport, 1234);
  EXPECT_EQ(p->flow.dport, 5678);
}

TEST(FrameParser, MalformedShimIsForwardedAsNonXcp) {
  FrameSpec s;
  s.with_xcp = true;
  auto p = make_frame(s);
  p->data()[34 + 1] = 24;  // hdr_len inconsistent with the flags
  const auto out = parse_frame(*p);
  EXPECT_EQ(out.verdict, ParseVerdict::kIpv4);
  EXPECT_TRUE(out.xcp_shim_malformed);
  EXPECT_FALSE(p->has_xcp());
}

TEST(FrameParser, NonIpv4EtherTypes) {
  for (uint16_t et : {0x0806, 0x86DD, 0x8100}) {
    FrameSpec s;
    s.ethertype = et;
    auto p = make_frame(s);
    EXPECT_EQ(parse_frame(*p).verdict, ParseVerdict::kNonIpv4) << et;
  }
}

TEST(FrameParser, EthernetPaddingIsAllowed) {
  FrameSpec s;
  s.ip_total_len = 28;
  auto p = make_frame(s);
  p->frame_len = 60;  // minimum Ethernet frame, padded
  EXPECT_EQ(parse_frame(*p).verdict, ParseVerdict::kIpv4);
  EXPECT_EQ(p->wire_bytes(), 28u);
}

struct Corruption {
  const char* name;
  void (*apply)(Packet&);
};

class MalformedFrame : public ::testing::TestWithParam<Corruption> {};

TEST_P(MalformedFrame, IsRejected) {
  auto p = make_frame(FrameSpec{});
  GetParam().apply(*p);
  EXPECT_EQ(parse_frame(*p).verdict, ParseVerdict::kMalformed);
}

INSTANTIATE_TEST_SUITE_P(
    Corruptions, MalformedFrame,
    ::testing::Values(
        Corruption{"short_ethernet", [](Packet& p) { p.frame_len = 13; }},
        Corruption{"short_ip", [](Packet& p) { p.frame_len = 14 + 19; }},
        Corruption{"version6", [](Packet& p) { p.data()[14] = 0x65; }},
        Corruption{"ihl4", [](Packet& p) { p.data()[14] = 0x44; }},
        Corruption{"ihl_beyond_total", [](Packet& p) { p.data()[14] = 0x4F; p.data()[14 + 2] = 0; p.data()[14 + 3] = 40; }},
        Corruption{"total_beyond_frame", [](Packet& p) { p.frame_len = 14 + 99; }},
        Corruption{"total_below_header", [](Packet& p) { p.data()[14 + 2] = 0; p.data()[14 + 3] = 19; }},
        Corruption{"bad_checksum", [](Packet& p) { p.data()[14 + 11] ^= 1; }},
        Corruption{"empty", [](Packet& p) { p.frame_len = 0; }}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(FrameParser, LaterFragmentHasNoPorts) {
  auto p = make_frame(FrameSpec{});
  uint8_t* ip = p->data() + 14;
  ip[6] = 0x00;
  ip[7] = 0x10;  // fragment offset 16*8
  ip[10] = ip[11] = 0;
  const uint16_t c = internet_checksum(ip, 20);
  ip[10] = static_cast<uint8_t>(c >> 8);
  ip[11] = static_cast<uint8_t>(c);
  EXPECT_EQ(parse_frame(*p).verdict, ParseVerdict::kIpv4);
  EXPECT_EQ(p->flow.sport, 0);
  EXPECT_EQ(p->flow.dport, 0);
}

}  // namespace
}  // namespace xcprouter
