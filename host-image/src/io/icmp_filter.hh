// Keeps the kernel from answering protocol-253 packets with ICMP
// "protocol unreachable". While any raw socket for protocol 253 is open in a
// network namespace the kernel does not send it; between runs, or after a
// client exits while its peer still retransmits, it would. The orchestrator
// applies kIcmpFilterRuleset in each host namespace (host-image/README.md);
// `xcpperf --install-icmp-filter` applies it itself.
#pragma once

#include <string_view>

namespace xcphost {

// nft ruleset (idempotent: the table is recreated).
inline constexpr std::string_view kIcmpFilterRuleset =
    "table ip xcplab_host\n"
    "delete table ip xcplab_host\n"
    "table ip xcplab_host {\n"
    "  chain out {\n"
    "    type filter hook output priority 0; policy accept;\n"
    "    icmp type destination-unreachable icmp code prot-unreachable drop\n"
    "  }\n"
    "}\n";

// Pipes kIcmpFilterRuleset into `nft -f -`; throws std::runtime_error with
// nft's exit status when it fails (nft missing, not root).
void install_icmp_filter();

}  // namespace xcphost
