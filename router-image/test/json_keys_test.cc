#include "util/json_keys.hh"

#include <gtest/gtest.h>

namespace xcprouter {
namespace {

TEST(JsonKeys, KnownKeysPass) {
  EXPECT_FALSE(find_unknown_key(nlohmann::json{{"a", 1}, {"b", 2}}, {"a", "b", "c"}));
  EXPECT_FALSE(find_unknown_key(nlohmann::json::object(), {"a"}));
}

TEST(JsonKeys, FirstUnknownKeyIsNamedWithTheValidOnes) {
  const auto u = find_unknown_key(nlohmann::json{{"a", 1}, {"capcity_bps", 2}}, {"a", "capacity_bps"});
  ASSERT_TRUE(u);
  EXPECT_EQ(u->key, "capcity_bps");
  EXPECT_EQ(u->valid, "a, capacity_bps");
}

}  // namespace
}  // namespace xcprouter
