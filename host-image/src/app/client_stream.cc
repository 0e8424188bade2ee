#include "app/client_stream.hh"

#include <algorithm>
#include <cstring>

#include "app/pattern.hh"

namespace xcphost {
namespace {
constexpr size_t kChunkBytes = 64 * 1024;
}

ClientStream::ClientStream(bool verify, std::optional<uint64_t> payload_limit)
    : verify_(verify), limit_(payload_limit), chunk_(kChunkBytes, 0) {}

void ClientStream::on_send_space(Connection& c) {
  if (written_ < kPreambleBytes) {
    const auto pre = encode_preamble(Preamble{verify_});
    written_ += c.write(std::span<const uint8_t>(pre).subspan(static_cast<size_t>(written_)));
    if (written_ < kPreambleBytes) return;
  }
  const uint64_t end = limit_ ? kPreambleBytes + *limit_ : UINT64_MAX;
  while (written_ < end && c.send_space() > 0) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>({kChunkBytes, end - written_, c.send_space()}));
    const std::span<uint8_t> buf(chunk_.data(), n);
    if (verify_) fill_pattern(written_ - kPreambleBytes, buf);  // zeros otherwise: no cost per byte
    written_ += c.write(buf);
  }
  if (written_ == end) c.close();
}

void ClientStream::on_data(Connection&, std::span<const uint8_t> d) {
  const size_t n = std::min(d.size(), kReportBytes - report_fill_);
  std::memcpy(report_buf_.data() + report_fill_, d.data(), n);
  report_fill_ += n;
}

std::optional<ServerReport> ClientStream::report() const {
  if (report_fill_ < kReportBytes) return std::nullopt;
  return decode_report(std::span<const uint8_t, kReportBytes>(report_buf_));
}

}  // namespace xcphost
