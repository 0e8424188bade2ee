// parse_cc_kind / to_string / make_congestion_controller: the one place that
// maps a controller name to a class.
#include "cc/congestion_controller.hh"
#include "cc/hstcp.hh"
#include "cc/newreno.hh"
#include "cc/xcp_window_control.hh"

namespace xcphost {

std::optional<CcKind> parse_cc_kind(std::string_view name) {
  if (name == "xcp") return CcKind::kXcp;
  if (name == "newreno") return CcKind::kNewReno;
  if (name == "hstcp") return CcKind::kHighSpeed;
  return std::nullopt;
}

std::string_view to_string(CcKind k) {
  switch (k) {
    case CcKind::kXcp: return "xcp";
    case CcKind::kNewReno: return "newreno";
    case CcKind::kHighSpeed: return "hstcp";
  }
  return "unknown";
}

std::unique_ptr<CongestionController> make_congestion_controller(CcKind kind, const CcConfig& cfg) {
  switch (kind) {
    case CcKind::kXcp: return std::make_unique<XcpWindowControl>(cfg);
    case CcKind::kNewReno: return std::make_unique<NewReno>(cfg);
    case CcKind::kHighSpeed: return std::make_unique<Hstcp>(cfg);
  }
  return nullptr;
}

}  // namespace xcphost
