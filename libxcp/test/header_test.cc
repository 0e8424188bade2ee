#include "xcp/header.hh"

#include <gtest/gtest.h>

#include "hex.hh"

#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace xcp {
namespace {

using xcp::testing::from_hex;

uint32_t parse_ipv4(const std::string& s) {
  unsigned a, b, c, d;
  EXPECT_EQ(std::sscanf(s.c_str(), "%u.%u.%u.%u", &a, &b, &c, &d), 4);
  return (a << 24) | (b << 16) | (c << 8) | d;
}

nlohmann::json load_vectors() {
  std::ifstream in(std::string(XCP_TESTVECTORS) + "/xcp_header.json");
  EXPECT_TRUE(in.good());
  return nlohmann::json::parse(in)["vectors"];
}

XcpHeader header_from_fields(const nlohmann::json& f) {
  XcpHeader h;
  h.next_protocol = f["next_protocol"];
  h.format = static_cast<Format>(f["format"].get<int>());
  h.flags = f["flags"];
  h.cwnd_bytes = f["cwnd_bytes"];
  h.rtt_us = f["rtt_us"];
  h.feedback_bytes = f["feedback_bytes"];
  h.reverse_feedback_bytes = f["reverse_feedback_bytes"];
  if (f.contains("xcp_ttl")) {
    h.xcp_ttl = f["xcp_ttl"];
    h.last_xcp_router = parse_ipv4(f["last_xcp_router"]);
  }
  if (f.contains("bottleneck_id")) {
    h.bottleneck_id = f["bottleneck_id"];
    h.next_bottleneck_id = f["next_bottleneck_id"];
  }
  return h;
}

TEST(XcpHeader, VectorsDecodeToTheirFieldsAndStatus) {
  const auto vectors = load_vectors();
  ASSERT_GE(vectors.size(), 10u);
  for (const auto& v : vectors) {
    SCOPED_TRACE(v["name"].get<std::string>());
    const auto bytes = from_hex(v["hex"]);
    const ParseResult r = parse_header(bytes);
    EXPECT_EQ(std::string(to_string(r.status)), v["status"].get<std::string>());
    if (r.ok()) {
      EXPECT_EQ(r.header, header_from_fields(v["fields"]));
    }
  }
}

TEST(XcpHeader, FieldsEncodeToTheVectorBytes) {
  for (const auto& v : load_vectors()) {
    if (v["status"] != "ok") continue;
    SCOPED_TRACE(v["name"].get<std::string>());
    const XcpHeader h = header_from_fields(v["fields"]);
    std::vector<uint8_t> out(kHeaderMaxLen, 0xaa);
    const size_t n = write_header(h, out);
    out.resize(n);
    EXPECT_EQ(out, from_hex(v["hex"]));
  }
}

TEST(XcpHeader, WriteRefusesShortBuffer) {
  XcpHeader h;
  h.flags = flags::kXcpi | flags::kIxcp;
  std::vector<uint8_t> out(35);
  EXPECT_EQ(write_header(h, out), 0u);
}

TEST(XcpHeader, InPlaceStoresMatchFullEncode) {
  XcpHeader h;
  h.flags = flags::kXcpi | flags::kIxcp;
  h.feedback_bytes = 1000;
  std::vector<uint8_t> buf(kHeaderMaxLen);
  write_header(h, buf);
  store_feedback(buf, -42);
  store_xcpi_block(buf, 17, 0x0a000001);
  store_next_bottleneck_id(buf, 0xcafef00d);
  const ParseResult r = parse_header(buf);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.header.feedback_bytes, -42);
  EXPECT_EQ(r.header.xcp_ttl, 17);
  EXPECT_EQ(r.header.last_xcp_router, 0x0a000001u);
  EXPECT_EQ(r.header.next_bottleneck_id, 0xcafef00du);
}

TEST(XcpHeader, StochasticRoundingIsUnbiasedAndSaturates) {
  EXPECT_EQ(round_feedback(2.25, 0.0), 2);
  EXPECT_EQ(round_feedback(2.25, 0.74), 2);
  EXPECT_EQ(round_feedback(2.25, 0.75), 3);
  EXPECT_EQ(round_feedback(-2.25, 0.0), -3);
  EXPECT_EQ(round_feedback(-2.25, 0.25), -2);
  EXPECT_EQ(round_feedback(1e12, 0.5), std::numeric_limits<int32_t>::max());
  EXPECT_EQ(round_feedback(-1e12, 0.5), std::numeric_limits<int32_t>::min());
  // Mean over a uniform grid of u equals the real value.
  double sum = 0;
  const int n = 1000;
  for (int i = 0; i < n; ++i) sum += round_feedback(0.3, (i + 0.5) / n);
  EXPECT_NEAR(sum / n, 0.3, 1e-9);
}

}  // namespace
}  // namespace xcp
