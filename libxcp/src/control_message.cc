#include "xcp/control_message.hh"

#include <algorithm>

#include "xcp/byte_order.hh"

namespace xcp {
namespace {

bool known_type(uint8_t t) { return t >= 1 && t <= 3; }

}  // namespace

std::string_view to_string(ControlType t) {
  switch (t) {
    case ControlType::kRequest: return "request";
    case ControlType::kAck: return "ack";
    case ControlType::kProbe: return "probe";
  }
  return "unknown";
}

std::optional<ControlMessage> parse_control(std::span<const uint8_t> bytes) {
  const ParseResult shim = parse_header(bytes);
  if (!shim.ok() || shim.header.format != Format::kControl || shim.header.flags != 0 ||
      shim.header.next_protocol != kNextProtoControl) {
    return std::nullopt;
  }
  if (bytes.size() < kControlMessageLen) return std::nullopt;
  const uint8_t* b = bytes.data() + kHeaderBaseLen;
  if (!known_type(b[0]) || b[1] != kControlBodyVersion) return std::nullopt;
  ControlMessage m;
  m.type = static_cast<ControlType>(b[0]);
  m.session = load_be32(b + 4);
  m.seq = load_be32(b + 8);
  m.aux = load_be32(b + 12);
  m.value = (uint64_t{load_be32(b + 16)} << 32) | load_be32(b + 20);
  return m;
}

size_t write_control(const ControlMessage& m, std::span<uint8_t> out) {
  if (out.size() < kControlMessageLen) return 0;
  std::fill(out.begin(), out.end(), uint8_t{0});
  XcpHeader h;
  h.next_protocol = kNextProtoControl;
  h.format = Format::kControl;
  write_header(h, out);
  uint8_t* b = out.data() + kHeaderBaseLen;
  b[0] = static_cast<uint8_t>(m.type);
  b[1] = kControlBodyVersion;
  store_be32(b + 4, m.session);
  store_be32(b + 8, m.seq);
  store_be32(b + 12, m.aux);
  store_be32(b + 16, static_cast<uint32_t>(m.value >> 32));
  store_be32(b + 20, static_cast<uint32_t>(m.value));
  return out.size();
}

}  // namespace xcp
