#include "core/route_table.hh"

#include <gtest/gtest.h>

namespace xcprouter {
namespace {

Ipv4Prefix P(const char* text) { return *Ipv4Prefix::parse(text, false); }
uint32_t A(const char* text) { return *parse_ipv4(text); }

TEST(RouteTable, LongestPrefixWins) {
  RouteTable t;
  t.add(P("0.0.0.0/0"), {0, {}});
  t.add(P("10.0.0.0/8"), {1, {}});
  t.add(P("10.1.0.0/16"), {2, {}});
  t.add(P("10.1.2.0/24"), {3, {}});
  t.add(P("10.1.2.3/32"), {4, {}});
  EXPECT_EQ(t.lookup(A("192.168.1.1"))->port, 0);
  EXPECT_EQ(t.lookup(A("10.200.0.1"))->port, 1);
  EXPECT_EQ(t.lookup(A("10.1.9.9"))->port, 2);
  EXPECT_EQ(t.lookup(A("10.1.2.4"))->port, 3);
  EXPECT_EQ(t.lookup(A("10.1.2.3"))->port, 4);
  EXPECT_EQ(t.size(), 5u);
}

TEST(RouteTable, NoDefaultMeansNoRoute) {
  RouteTable t;
  t.add(P("10.0.1.0/24"), {1, {}});
  EXPECT_EQ(t.lookup(A("10.0.2.1")), nullptr);
  EXPECT_NE(t.lookup(A("10.0.1.255")), nullptr);
}

TEST(RouteTable, InsertionOrderDoesNotMatter) {
  RouteTable t;
  t.add(P("10.1.2.0/24"), {3, {}});
  t.add(P("10.0.0.0/8"), {1, {}});
  EXPECT_EQ(t.lookup(A("10.1.2.7"))->port, 3);
  EXPECT_EQ(t.lookup(A("10.1.3.7"))->port, 1);
}

TEST(RouteTable, SamePrefixReplaces) {
  RouteTable t;
  t.add(P("10.0.0.0/8"), {1, {}});
  t.add(P("10.0.0.0/8"), {2, {}});
  EXPECT_EQ(t.lookup(A("10.9.9.9"))->port, 2);
  EXPECT_EQ(t.size(), 1u);
}

TEST(RouteTable, NonContiguousLengths) {
  RouteTable t;
  t.add(P("10.0.0.0/9"), {1, {}});
  t.add(P("10.0.0.0/23"), {2, {}});
  EXPECT_EQ(t.lookup(A("10.0.1.1"))->port, 2);
  EXPECT_EQ(t.lookup(A("10.0.2.1"))->port, 1);
  EXPECT_EQ(t.lookup(A("10.128.0.1")), nullptr);
}

}  // namespace
}  // namespace xcprouter
