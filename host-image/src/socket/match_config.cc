#include "socket/match_config.hh"

#include <arpa/inet.h>

#include <charconv>
#include <cstdlib>

#include "socket/xcpsock.h"

namespace xcpsock {
namespace {

bool in_nets(const MatchConfig& m, uint32_t addr) {
  for (const auto& [net, mask] : m.nets) {
    if ((addr & mask) == net) return true;
  }
  return false;
}

bool in_ports(const MatchConfig& m, uint16_t port) {
  for (const auto& [lo, hi] : m.ports) {
    if (port >= lo && port <= hi) return true;
  }
  return false;
}

std::optional<uint64_t> to_number(std::string_view s, uint64_t max) {
  uint64_t v = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || s.empty() || v > max) return std::nullopt;
  return v;
}

// Splits on ',' and hands each non-empty item to `f`; stops at the first error.
template <typename F>
std::string for_items(std::string_view list, F f) {
  while (!list.empty()) {
    const size_t comma = list.find(',');
    const std::string_view item = list.substr(0, comma);
    if (!item.empty()) {
      std::string err = f(item);
      if (!err.empty()) return err;
    }
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return {};
}

std::string parse_ports(std::string_view list, MatchConfig& m) {
  return for_items(list, [&](std::string_view item) -> std::string {
    const size_t dash = item.find('-');
    const auto lo = to_number(item.substr(0, dash), 65535);
    const auto hi = dash == std::string_view::npos ? lo : to_number(item.substr(dash + 1), 65535);
    if (!lo || !hi || *lo == 0 || *lo > *hi) return "'" + std::string(item) + "' is not a port or LOW-HIGH range in 1-65535";
    m.ports.emplace_back(static_cast<uint16_t>(*lo), static_cast<uint16_t>(*hi));
    return {};
  });
}

std::string parse_nets(std::string_view list, MatchConfig& m) {
  return for_items(list, [&](std::string_view item) -> std::string {
    const size_t slash = item.find('/');
    const std::string addr(item.substr(0, slash));
    const auto bits = slash == std::string_view::npos ? std::optional<uint64_t>(32) : to_number(item.substr(slash + 1), 32);
    in_addr a{};
    if (!bits || inet_pton(AF_INET, addr.c_str(), &a) != 1) {
      return "'" + std::string(item) + "' is not an IPv4 address or CIDR prefix";
    }
    const uint32_t mask = *bits == 0 ? 0 : ~uint32_t{0} << (32 - *bits);
    m.nets.emplace_back(ntohl(a.s_addr) & mask, mask);
    return {};
  });
}

}  // namespace

bool MatchConfig::matches_connect(uint32_t addr, uint16_t port) const {
  if (!enabled()) return false;
  return (ports.empty() || in_ports(*this, port)) && (nets.empty() || in_nets(*this, addr));
}

bool MatchConfig::matches_listen(uint32_t addr, uint16_t port) const {
  if (!ports.empty()) return in_ports(*this, port) && (nets.empty() || addr == INADDR_ANY || in_nets(*this, addr));
  return addr != INADDR_ANY && in_nets(*this, addr);
}

ParsedMatch parse_match_config(const char* ports, const char* nets, const char* cc, const char* rate) {
  MatchConfig m;
  std::string err;
  if (ports != nullptr && !(err = parse_ports(ports, m)).empty()) {
    return {std::nullopt, "XCP_SOCKET_PORTS=" + std::string(ports) + ": " + err};
  }
  if (nets != nullptr && !(err = parse_nets(nets, m)).empty()) {
    return {std::nullopt, "XCP_SOCKET_NETS=" + std::string(nets) + ": " + err};
  }
  if (cc != nullptr && cc[0] != '\0') {
    m.cc = xcpsock_cc_from_name(cc);
    if (m.cc < 0) return {std::nullopt, "XCP_SOCKET_CC=" + std::string(cc) + ": not one of xcp, newreno, hstcp"};
  }
  if (rate != nullptr && rate[0] != '\0') {
    const auto r = to_number(rate, uint64_t{1} << 50);
    if (!r) return {std::nullopt, "XCP_SOCKET_RATE_BPS=" + std::string(rate) + ": not a rate in bits/s"};
    m.rate_bps = *r;
  }
  return {m, {}};
}

ParsedMatch match_config_from_env() {
  return parse_match_config(std::getenv("XCP_SOCKET_PORTS"), std::getenv("XCP_SOCKET_NETS"),
                            std::getenv("XCP_SOCKET_CC"), std::getenv("XCP_SOCKET_RATE_BPS"));
}

}  // namespace xcpsock
