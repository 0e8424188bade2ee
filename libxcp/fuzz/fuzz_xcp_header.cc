// libFuzzer target: the shim parser must never read out of bounds, and any
// header it accepts must re-encode to the same bytes.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "xcp/header.hh"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const xcp::ParseResult r = xcp::parse_header({data, size});
  if (r.ok()) {
    std::vector<uint8_t> out(xcp::kHeaderMaxLen);
    const size_t n = xcp::write_header(r.header, out);
    // Reserved bits of the XCP-i block are not preserved; compare the rest.
    if (n == 0 || n > size) abort();
    std::vector<uint8_t> in(data, data + n);
    if (r.header.has_xcpi()) { in[21] = in[22] = in[23] = 0; }
    if (std::memcmp(in.data(), out.data(), n) != 0) abort();
  }
  return 0;
}
