// xcpperf's in-band session protocol, carried inside each stream:
//   client -> server: a 16-byte preamble, then the payload;
//   server -> client: after the client's FIN, a 32-byte report, then FIN.
// Preamble: magic "XPRF" | version(32)=1 | flags(32) bit0 = verify | reserved(32)
// Report:   magic "XPRS" | version(32)=1 | bytes_received(64) | verify(32) |
//           reserved(32) | first_mismatch_offset(64)
// All big-endian. With verify on, payload byte at stream offset o is
// pattern byte o - kPreambleBytes (app/pattern.hh).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>

namespace xcphost {

inline constexpr size_t kPreambleBytes = 16;
inline constexpr size_t kReportBytes = 32;

enum class VerifyStatus : uint32_t { kOff = 0, kOk = 1, kMismatch = 2 };
const char* to_string(VerifyStatus v);

struct Preamble {
  bool verify = false;
};

struct ServerReport {
  uint64_t bytes_received = 0;  // whole stream, preamble included
  VerifyStatus verify = VerifyStatus::kOff;
  uint64_t first_mismatch_offset = 0;  // payload offset, valid when verify == kMismatch
};

std::array<uint8_t, kPreambleBytes> encode_preamble(const Preamble& p);
std::optional<Preamble> decode_preamble(std::span<const uint8_t, kPreambleBytes> b);
std::array<uint8_t, kReportBytes> encode_report(const ServerReport& r);
std::optional<ServerReport> decode_report(std::span<const uint8_t, kReportBytes> b);

}  // namespace xcphost
