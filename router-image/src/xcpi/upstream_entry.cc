#include "xcpi/upstream_entry.hh"

namespace xcprouter {

namespace {

std::unique_ptr<EstimatedSpareBandwidth> make_spare(EstimatedSpareBandwidth*& out) {
  auto s = std::make_unique<EstimatedSpareBandwidth>();
  out = s.get();
  return s;
}

}  // namespace

UpstreamEntry::UpstreamEntry(uint32_t u, const XcpiConfig& config, const XcpParams& params,
                             uint32_t session_id, uint64_t seed)
    : upstream(u), session(config, session_id), spare(nullptr), v(params, make_spare(spare), seed) {}

}  // namespace xcprouter
