// XCP-i estimation control messages (docs/protocol.md §4, shim Format 3): the one
// definition shared by the router engine, the host stack and (through
// testvectors/xcp_control.json) the Python decoder.
//
// A control message is an IPv4 packet of protocol 253 whose shim has format 3,
// no optional blocks, next_protocol = kNextProtoControl and all four base
// words zero (routers never modify a Format 3 shim). The body follows:
//
//   0  type(8) | body_version(8)=1 | reserved(16)
//   4  session(32)   chosen by the requesting router R, echoed by U
//   8  seq(32)       REQUEST/ACK: attempt number; PROBE: chirp number
//   12 aux(32)       REQUEST: chirps wanted (0 = only acknowledge: oracle mode)
//                    ACK: chirps U will send; PROBE: index(16) | count(16)
//   16 value(64)     PROBE: send offset from the chirp's first packet, ns
//                    (others: 0)
//   24 ... zero padding (PROBE packets are padded to the probe size)
//
// Why the estimate never travels back from U: the chirp's analysis needs the
// probes' arrival times, which only the receiver R has (pathChirp analyses at
// its receiver), and R is the one that stores and uses BW_U. So U's duty
// ends with acknowledging and sending the chirps.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "xcp/header.hh"

namespace xcp {

// next_protocol of a Format 3 shim: the control body follows.
inline constexpr uint8_t kNextProtoControl = 0xFD;
inline constexpr uint8_t kControlBodyVersion = 1;
inline constexpr size_t kControlBodyLen = 24;
// Shim + body: the smallest control message after the IPv4 header.
inline constexpr size_t kControlMessageLen = kHeaderBaseLen + kControlBodyLen;

enum class ControlType : uint8_t {
  kRequest = 1,  // R -> U: please estimate U->R (and acknowledge)
  kAck = 2,      // U -> R: request seen
  kProbe = 3,    // U -> R: one packet of a chirp
};

std::string_view to_string(ControlType t);

struct ControlMessage {
  ControlType type = ControlType::kRequest;
  uint32_t session = 0;
  uint32_t seq = 0;
  uint32_t aux = 0;
  uint64_t value = 0;

  // PROBE's aux packs the packet's index in its chirp and the chirp's size.
  uint16_t probe_index() const { return static_cast<uint16_t>(aux >> 16); }
  uint16_t probe_count() const { return static_cast<uint16_t>(aux & 0xFFFF); }
  static uint32_t probe_aux(uint16_t index, uint16_t count) { return (uint32_t{index} << 16) | count; }
  bool operator==(const ControlMessage&) const = default;
};

// Decodes shim + body at the start of `bytes` (what follows the IPv4 header).
// nullopt unless the shim is a valid Format 3 shim with next_protocol
// kNextProtoControl and the body is complete with a known type and version.
std::optional<ControlMessage> parse_control(std::span<const uint8_t> bytes);

// Encodes shim + body into `out`, zero-padding up to `out.size()`. Returns
// bytes written (out.size()), or 0 when `out` is smaller than kControlMessageLen.
size_t write_control(const ControlMessage& m, std::span<uint8_t> out);

}  // namespace xcp
