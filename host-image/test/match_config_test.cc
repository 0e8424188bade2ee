#include "socket/match_config.hh"

#include <gtest/gtest.h>

#include "socket/xcpsock.h"

namespace xcpsock {
namespace {

constexpr uint32_t ip(uint32_t a, uint32_t b, uint32_t c, uint32_t d) { return a << 24 | b << 16 | c << 8 | d; }

MatchConfig parse_ok(const char* ports, const char* nets) {
  const auto p = parse_match_config(ports, nets, nullptr, nullptr);
  EXPECT_TRUE(p.config) << p.error;
  return p.config.value_or(MatchConfig{});
}

TEST(MatchConfig, NothingSetMatchesNothing) {
  const MatchConfig m = parse_ok(nullptr, nullptr);
  EXPECT_FALSE(m.enabled());
  EXPECT_FALSE(m.matches_connect(ip(10, 0, 0, 1), 80));
  EXPECT_FALSE(m.matches_listen(0, 80));
}

TEST(MatchConfig, PortsAndRangesChooseConnectAndListen) {
  const MatchConfig m = parse_ok("5201,8000-8099", nullptr);
  EXPECT_TRUE(m.matches_connect(ip(10, 0, 0, 1), 5201));
  EXPECT_TRUE(m.matches_connect(ip(10, 0, 0, 1), 8099));
  EXPECT_FALSE(m.matches_connect(ip(10, 0, 0, 1), 8100));
  EXPECT_TRUE(m.matches_listen(0, 8000));
  EXPECT_FALSE(m.matches_listen(0, 22));
}

TEST(MatchConfig, ConnectNeedsEveryListThatIsSet) {
  const MatchConfig m = parse_ok("80", "10.1.0.0/16,192.168.1.7");
  EXPECT_TRUE(m.matches_connect(ip(10, 1, 200, 3), 80));
  EXPECT_TRUE(m.matches_connect(ip(192, 168, 1, 7), 80));
  EXPECT_FALSE(m.matches_connect(ip(192, 168, 1, 8), 80));
  EXPECT_FALSE(m.matches_connect(ip(10, 1, 200, 3), 81));
  EXPECT_FALSE(m.matches_connect(ip(10, 2, 0, 1), 80));
}

TEST(MatchConfig, NetsAloneListenOnlyOnASpecificBoundAddress) {
  const MatchConfig m = parse_ok(nullptr, "10.0.0.0/8");
  EXPECT_TRUE(m.matches_connect(ip(10, 9, 9, 9), 443));
  EXPECT_FALSE(m.matches_listen(0, 443));  // INADDR_ANY would capture every server
  EXPECT_TRUE(m.matches_listen(ip(10, 0, 0, 2), 443));
}

TEST(MatchConfig, BadValuesNameTheVariableAndTheItem) {
  struct Case {
    const char *ports, *nets, *cc, *rate, *error;
  };
  const Case cases[] = {
      {"0", nullptr, nullptr, nullptr, "XCP_SOCKET_PORTS=0: '0' is not a port"},
      {"80-70", nullptr, nullptr, nullptr, "XCP_SOCKET_PORTS=80-70: '80-70'"},
      {"65536", nullptr, nullptr, nullptr, "XCP_SOCKET_PORTS=65536"},
      {"http", nullptr, nullptr, nullptr, "'http' is not a port"},
      {nullptr, "10.0.0.0/33", nullptr, nullptr, "XCP_SOCKET_NETS=10.0.0.0/33: '10.0.0.0/33' is not an IPv4"},
      {nullptr, "::1", nullptr, nullptr, "XCP_SOCKET_NETS=::1"},
      {"80", nullptr, "cubic", nullptr, "XCP_SOCKET_CC=cubic: not one of xcp, newreno, hstcp"},
      {"80", nullptr, nullptr, "10M", "XCP_SOCKET_RATE_BPS=10M: not a rate in bits/s"},
  };
  for (const Case& c : cases) {
    const auto p = parse_match_config(c.ports, c.nets, c.cc, c.rate);
    EXPECT_FALSE(p.config);
    EXPECT_NE(p.error.find(c.error), std::string::npos) << p.error;
  }
}

TEST(MatchConfig, ControllerAndRate) {
  const auto p = parse_match_config("80", nullptr, "hstcp", "20000000");
  ASSERT_TRUE(p.config);
  EXPECT_EQ(p.config->cc, XCPSOCK_CC_HSTCP);
  EXPECT_EQ(p.config->rate_bps, 20'000'000u);
}

}  // namespace
}  // namespace xcpsock
