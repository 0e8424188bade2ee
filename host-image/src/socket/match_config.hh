// Which TCP sockets of a program the interposer moves to the XCP stack,
// from the environment (docs/socket-stack.md):
//   XCP_SOCKET_PORTS  "5201,8000-8099": destination ports of connect(), ports of listen()
//   XCP_SOCKET_NETS   "10.0.0.0/8,192.168.1.7": destinations of connect() (IPv4 CIDR)
//   XCP_SOCKET_CC     xcp | newreno | hstcp (default: the daemon's)
//   XCP_SOCKET_RATE_BPS  XCP desired rate in bits/s (default unlimited)
// A connect() goes to XCP when its destination is in every list that is set;
// a listen() when its port is in XCP_SOCKET_PORTS (or, without that list,
// when it is bound to a specific address in XCP_SOCKET_NETS).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace xcpsock {

struct MatchConfig {
  std::vector<std::pair<uint16_t, uint16_t>> ports;  // inclusive ranges
  std::vector<std::pair<uint32_t, uint32_t>> nets;   // (network, mask), host order
  int cc = 0;                                        // XCPSOCK_CC_*
  uint64_t rate_bps = 0;

  bool enabled() const { return !ports.empty() || !nets.empty(); }
  bool matches_connect(uint32_t addr, uint16_t port) const;
  bool matches_listen(uint32_t addr, uint16_t port) const;
};

// Parses the four variables (nullptr = unset). On error: "VAR=value: reason".
struct ParsedMatch {
  std::optional<MatchConfig> config;
  std::string error;
};
ParsedMatch parse_match_config(const char* ports, const char* nets, const char* cc, const char* rate);
// The same, from getenv().
ParsedMatch match_config_from_env();

}  // namespace xcpsock
