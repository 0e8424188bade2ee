#include "app/server_stream.hh"

#include <algorithm>
#include <cstring>

#include "app/pattern.hh"

namespace xcphost {

void ServerStream::on_data(Connection& c, std::span<const uint8_t> d) {
  report_.bytes_received += d.size();
  if (pre_fill_ < kPreambleBytes) {
    const size_t n = std::min(d.size(), kPreambleBytes - pre_fill_);
    std::memcpy(pre_.data() + pre_fill_, d.data(), n);
    pre_fill_ += n;
    d = d.subspan(n);
    if (pre_fill_ < kPreambleBytes) return;
    const auto p = decode_preamble(std::span<const uint8_t, kPreambleBytes>(pre_));
    if (!p) {
      bad_preamble_ = true;  // not an xcpperf client: refuse the stream
      c.abort(xcp::Timestamp::zero(), ConnError::kReset);
      return;
    }
    verify_ = p->verify;
    report_.verify = verify_ ? VerifyStatus::kOk : VerifyStatus::kOff;
  }
  if (verify_ && report_.verify == VerifyStatus::kOk && !d.empty()) {
    const uint64_t offset = report_.bytes_received - d.size() - kPreambleBytes;
    const size_t bad = first_pattern_mismatch(offset, d);
    if (bad != d.size()) {
      report_.verify = VerifyStatus::kMismatch;
      report_.first_mismatch_offset = offset + bad;
    }
  }
}

void ServerStream::on_peer_fin(Connection& c) {
  const auto bytes = encode_report(report_);
  c.write(bytes);
  c.close();
}

}  // namespace xcphost
