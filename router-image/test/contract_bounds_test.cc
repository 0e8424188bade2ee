// contract_bounds.hh is generated from xcplab_contract/bounds.json at build time; the
// spec validator reads the same file. This reads the file again and checks that every
// row reached the engine unchanged, so the two sides cannot drift.
#include "contract_bounds.hh"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

namespace xcprouter {
namespace {

TEST(ContractBounds, EveryRowOfTheTableIsInTheGeneratedHeader) {
  std::ifstream in(XCPLAB_BOUNDS_JSON);
  ASSERT_TRUE(in) << XCPLAB_BOUNDS_JSON;
  const auto table = nlohmann::json::parse(in)["bounds"];
  const std::map<std::string, const Bound*> generated = {
      {"link.capacity_bps", &bounds::kLinkCapacityBps}, {"link.delay_s", &bounds::kLinkDelayS},
      {"link.limit_packets", &bounds::kLinkLimitPackets}, {"link.limit_bytes", &bounds::kLinkLimitBytes},
      {"xcp.alpha", &bounds::kXcpAlpha}, {"xcp.interval_s", &bounds::kXcpIntervalS},
      {"xcp.capacity_bps", &bounds::kXcpCapacityBps}, {"red.max_p", &bounds::kRedMaxP},
      {"fairness.zombie_entries", &bounds::kFairnessZombieEntries}, {"xcpi.timer_s", &bounds::kXcpiTimerS}};
  for (const auto& [name, b] : generated) {
    ASSERT_TRUE(table.contains(name)) << name;
    const auto& row = table[name];
    EXPECT_EQ(b->lo, row["lo"].get<double>()) << name;
    EXPECT_EQ(b->hi, row["hi"].get<double>()) << name;
    EXPECT_EQ(b->integer, row.value("integer", false)) << name;
    EXPECT_EQ(std::string(b->unit), row["unit"].get<std::string>()) << name;
    EXPECT_EQ(std::string(b->why), row["why"].get<std::string>()) << name;
    EXPECT_EQ(std::string(b->name), name);
  }
}

TEST(ContractBounds, ContainsHonoursTheIntegerFlag) {
  EXPECT_TRUE(bounds::kLinkLimitPackets.contains(1));
  EXPECT_FALSE(bounds::kLinkLimitPackets.contains(1.5));
  EXPECT_FALSE(bounds::kLinkLimitPackets.contains(bounds::kLinkLimitPackets.hi + 1));
  EXPECT_TRUE(bounds::kXcpGamma.contains(0.5));
  EXPECT_NE(bounds::kXcpIntervalS.describe().find("[0.001, 10] s ("), std::string::npos)
      << bounds::kXcpIntervalS.describe();
}

}  // namespace
}  // namespace xcprouter
