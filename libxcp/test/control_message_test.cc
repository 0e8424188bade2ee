#include "xcp/control_message.hh"

#include <gtest/gtest.h>

#include "hex.hh"

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace xcp {
namespace {

using xcp::testing::from_hex;

nlohmann::json load_vectors() {
  std::ifstream in(std::string(XCP_TESTVECTORS) + "/xcp_control.json");
  EXPECT_TRUE(in.good());
  return nlohmann::json::parse(in)["vectors"];
}

TEST(ControlMessage, VectorsDecodeAndReencodeByteForByte) {
  const auto vectors = load_vectors();
  ASSERT_GE(vectors.size(), 8u);
  int valid = 0;
  for (const auto& v : vectors) {
    SCOPED_TRACE(v["name"].get<std::string>());
    const auto bytes = from_hex(v["hex"]);
    const auto m = parse_control(bytes);
    if (v["status"] == "invalid") {
      EXPECT_FALSE(m.has_value());
      continue;
    }
    ++valid;
    ASSERT_TRUE(m.has_value());
    const auto& f = v["fields"];
    EXPECT_EQ(static_cast<int>(m->type), f["type"].get<int>());
    EXPECT_EQ(m->session, f["session"].get<uint32_t>());
    EXPECT_EQ(m->seq, f["seq"].get<uint32_t>());
    EXPECT_EQ(m->aux, f["aux"].get<uint32_t>());
    EXPECT_EQ(m->value, f["value"].get<uint64_t>());
    std::vector<uint8_t> out(bytes.size(), 0xEE);
    ASSERT_EQ(write_control(*m, out), bytes.size());
    EXPECT_EQ(out, bytes);
  }
  EXPECT_GE(valid, 4);
}

TEST(ControlMessage, ProbeAuxPacksIndexAndCount) {
  ControlMessage m{ControlType::kProbe, 1, 2, ControlMessage::probe_aux(17, 23), 0};
  EXPECT_EQ(m.probe_index(), 17);
  EXPECT_EQ(m.probe_count(), 23);
}

TEST(ControlMessage, RefusesABufferTooSmallAndAShimWithoutBody) {
  ControlMessage m;
  std::vector<uint8_t> small(kControlMessageLen - 1);
  EXPECT_EQ(write_control(m, small), 0u);
  std::vector<uint8_t> ok(kControlMessageLen);
  ASSERT_EQ(write_control(m, ok), kControlMessageLen);
  EXPECT_FALSE(parse_control(std::span<const uint8_t>(ok).first(kHeaderBaseLen)).has_value());
  // The shim alone is a valid Format 3 header: routers see a control packet.
  EXPECT_TRUE(parse_header(ok).ok());
  EXPECT_EQ(parse_header(ok).header.format, Format::kControl);
}

}  // namespace
}  // namespace xcp
