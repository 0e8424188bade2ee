#include "util/net_address.hh"

#include <charconv>
#include <cstdio>

namespace xcprouter {

namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::optional<MacAddress> MacAddress::parse(std::string_view text) {
  if (text.size() != 17) return std::nullopt;
  MacAddress m;
  for (size_t i = 0; i < 6; ++i) {
    const int hi = hex_digit(text[i * 3]), lo = hex_digit(text[i * 3 + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    if (i < 5 && text[i * 3 + 2] != ':') return std::nullopt;
    m.bytes[i] = static_cast<uint8_t>(hi * 16 + lo);
  }
  return m;
}

std::string MacAddress::to_string() const {
  char buf[18];
  std::snprintf(buf, sizeof buf, "%02x:%02x:%02x:%02x:%02x:%02x", bytes[0], bytes[1], bytes[2],
                bytes[3], bytes[4], bytes[5]);
  return buf;
}

std::optional<uint32_t> parse_ipv4(std::string_view text) {
  uint32_t addr = 0;
  const char* p = text.data();
  const char* end = text.data() + text.size();
  for (int i = 0; i < 4; ++i) {
    if (i > 0) {
      if (p == end || *p != '.') return std::nullopt;
      ++p;
    }
    unsigned v = 0;
    auto [next, ec] = std::from_chars(p, end, v);
    if (ec != std::errc{} || next == p || next - p > 3 || v > 255) return std::nullopt;
    addr = (addr << 8) | v;
    p = next;
  }
  if (p != end) return std::nullopt;
  return addr;
}

std::string ipv4_to_string(uint32_t a) {
  return std::to_string(a >> 24) + "." + std::to_string((a >> 16) & 255) + "." +
         std::to_string((a >> 8) & 255) + "." + std::to_string(a & 255);
}

std::optional<Ipv4Prefix> Ipv4Prefix::parse(std::string_view text, bool allow_host_bits) {
  const size_t slash = text.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  auto addr = parse_ipv4(text.substr(0, slash));
  if (!addr) return std::nullopt;
  const std::string_view len_text = text.substr(slash + 1);
  unsigned len = 0;
  auto [next, ec] = std::from_chars(len_text.data(), len_text.data() + len_text.size(), len);
  if (ec != std::errc{} || next != len_text.data() + len_text.size() || len_text.empty() || len > 32) {
    return std::nullopt;
  }
  Ipv4Prefix p{*addr, static_cast<uint8_t>(len)};
  if (!allow_host_bits && (p.addr & ~p.mask()) != 0) return std::nullopt;
  return p;
}

std::string Ipv4Prefix::to_string() const { return ipv4_to_string(addr) + "/" + std::to_string(len); }

}  // namespace xcprouter
