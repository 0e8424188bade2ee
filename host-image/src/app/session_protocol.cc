#include "app/session_protocol.hh"

namespace xcphost {
namespace {

constexpr uint32_t kPreambleMagic = 0x58505246;  // "XPRF"
constexpr uint32_t kReportMagic = 0x58505253;    // "XPRS"
constexpr uint32_t kVersion = 1;

void put(uint8_t* p, uint64_t v, int n) {
  for (int i = n - 1; i >= 0; --i, v >>= 8) p[i] = static_cast<uint8_t>(v);
}
uint64_t get(const uint8_t* p, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; ++i) v = (v << 8) | p[i];
  return v;
}

}  // namespace

const char* to_string(VerifyStatus v) {
  switch (v) {
    case VerifyStatus::kOff: return "off";
    case VerifyStatus::kOk: return "ok";
    case VerifyStatus::kMismatch: return "mismatch";
  }
  return "unknown";
}

std::array<uint8_t, kPreambleBytes> encode_preamble(const Preamble& p) {
  std::array<uint8_t, kPreambleBytes> b{};
  put(&b[0], kPreambleMagic, 4);
  put(&b[4], kVersion, 4);
  put(&b[8], p.verify ? 1 : 0, 4);
  return b;
}

std::optional<Preamble> decode_preamble(std::span<const uint8_t, kPreambleBytes> b) {
  if (get(&b[0], 4) != kPreambleMagic || get(&b[4], 4) != kVersion) return std::nullopt;
  return Preamble{(get(&b[8], 4) & 1) != 0};
}

std::array<uint8_t, kReportBytes> encode_report(const ServerReport& r) {
  std::array<uint8_t, kReportBytes> b{};
  put(&b[0], kReportMagic, 4);
  put(&b[4], kVersion, 4);
  put(&b[8], r.bytes_received, 8);
  put(&b[16], static_cast<uint32_t>(r.verify), 4);
  put(&b[24], r.first_mismatch_offset, 8);
  return b;
}

std::optional<ServerReport> decode_report(std::span<const uint8_t, kReportBytes> b) {
  if (get(&b[0], 4) != kReportMagic || get(&b[4], 4) != kVersion) return std::nullopt;
  const uint64_t v = get(&b[16], 4);
  if (v > 2) return std::nullopt;
  return ServerReport{get(&b[8], 8), static_cast<VerifyStatus>(v), get(&b[24], 8)};
}

}  // namespace xcphost
