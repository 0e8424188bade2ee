// libFuzzer target: the XCP-i control-message parser never reads out of
// bounds, and any message it accepts re-encodes to the same bytes (the body's
// reserved bytes and the padding are written as zero, so compare the rest).
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "xcp/control_message.hh"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto m = xcp::parse_control({data, size});
  if (m) {
    std::vector<uint8_t> out(xcp::kControlMessageLen);
    if (xcp::write_control(*m, out) != xcp::kControlMessageLen || size < out.size()) abort();
    std::vector<uint8_t> in(data, data + out.size());
    in[xcp::kHeaderBaseLen + 2] = in[xcp::kHeaderBaseLen + 3] = 0;
    for (size_t i = 4; i < xcp::kHeaderBaseLen; ++i) in[i] = 0;  // base words are not part of a control message
    if (std::memcmp(in.data(), out.data(), out.size()) != 0) abort();
    if (xcp::parse_control(out) != m) abort();
  }
  return 0;
}
