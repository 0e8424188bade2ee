// How a connection detects and repairs losses (xcpperf --loss-recovery).
// The congestion controller's window rules are the same in every mode; only
// the transport's loss detection and retransmission differ.
//
//   kSack     SACK blocks (negotiated on the SYN), RFC 6675 scoreboard
//             recovery, tail-loss probe, lost-retransmission detection.
//   kNewReno  no SACK (the peer is told not to send blocks; any received are
//             ignored), no probe: fast retransmit on 3 duplicate ACKs, RFC 6582
//             partial ACKs retransmit the next hole and recovery lasts until
//             the recovery point is acknowledged.
//   kReno     no SACK, no probe: RFC 5681 Reno. Recovery ends with the first
//             ACK of new data, partial or not; a further hole of the same
//             window waits for the RTO, because 3 more duplicate ACKs below the
//             old recovery point do not start a new fast retransmit (RFC 6582
//             `recover` check, ns-2's bug_fix_). This is the sender of ns-2's
//             Reno-derived XcpAgent that seeds 000 and 002 used: several losses
//             in one window end in a timeout.
#pragma once

#include <optional>
#include <string_view>

namespace xcphost {

enum class LossRecovery { kSack, kNewReno, kReno };

// Parses "sack" | "newreno" | "reno"; nullopt otherwise.
std::optional<LossRecovery> parse_loss_recovery(std::string_view name);
std::string_view to_string(LossRecovery m);
// For error messages: the accepted names.
inline constexpr std::string_view kLossRecoveryNames = "sack, newreno, reno";

}  // namespace xcphost
