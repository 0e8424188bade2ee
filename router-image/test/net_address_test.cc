#include "util/net_address.hh"

#include <gtest/gtest.h>

namespace xcprouter {
namespace {

TEST(NetAddress, MacRoundTrip) {
  auto m = MacAddress::parse("02:00:AB:cd:01:ff");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->to_string(), "02:00:ab:cd:01:ff");
  for (const char* bad : {"", "02:00:ab:cd:01", "02-00-ab-cd-01-ff", "02:00:ab:cd:01:fg", "02:00:ab:cd:01:ff:"}) {
    EXPECT_FALSE(MacAddress::parse(bad)) << bad;
  }
}

TEST(NetAddress, Ipv4) {
  EXPECT_EQ(*parse_ipv4("10.0.1.2"), 0x0A000102u);
  EXPECT_EQ(ipv4_to_string(0x0A000102u), "10.0.1.2");
  for (const char* bad : {"10.0.1", "10.0.1.256", "10.0.1.2.3", "a.b.c.d", "10.0.1.2 ", "1000.0.0.1"}) {
    EXPECT_FALSE(parse_ipv4(bad)) << bad;
  }
}

TEST(NetAddress, Prefix) {
  auto p = Ipv4Prefix::parse("10.0.2.0/24", false);
  ASSERT_TRUE(p);
  EXPECT_TRUE(p->contains(*parse_ipv4("10.0.2.77")));
  EXPECT_FALSE(p->contains(*parse_ipv4("10.0.3.1")));
  EXPECT_FALSE(Ipv4Prefix::parse("10.0.2.1/24", false));  // host bits
  EXPECT_TRUE(Ipv4Prefix::parse("10.0.2.1/24", true));
  EXPECT_FALSE(Ipv4Prefix::parse("10.0.2.0/33", false));
  EXPECT_FALSE(Ipv4Prefix::parse("10.0.2.0", false));
  EXPECT_EQ(Ipv4Prefix::parse("0.0.0.0/0", false)->mask(), 0u);
}

}  // namespace
}  // namespace xcprouter
