#include "transport/loss_recovery.hh"

namespace xcphost {

std::optional<LossRecovery> parse_loss_recovery(std::string_view name) {
  if (name == "sack") return LossRecovery::kSack;
  if (name == "newreno") return LossRecovery::kNewReno;
  if (name == "reno") return LossRecovery::kReno;
  return std::nullopt;
}

std::string_view to_string(LossRecovery m) {
  switch (m) {
    case LossRecovery::kSack: return "sack";
    case LossRecovery::kNewReno: return "newreno";
    case LossRecovery::kReno: return "reno";
  }
  return "unknown";
}

}  // namespace xcphost
