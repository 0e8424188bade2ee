#include "io/icmp_filter.hh"

#include <sys/wait.h>

#include <cstdio>
#include <stdexcept>
#include <string>

namespace xcphost {

void install_icmp_filter() {
  FILE* p = popen("nft -f - 2>&1", "w");
  if (p == nullptr) throw std::runtime_error("install ICMP filter: cannot start `nft`");
  fwrite(kIcmpFilterRuleset.data(), 1, kIcmpFilterRuleset.size(), p);
  const int status = pclose(p);
  if (status != 0) {
    throw std::runtime_error("install ICMP filter: `nft -f -` failed (status " + std::to_string(status) +
                             "); is nftables installed and are we root?");
  }
}

}  // namespace xcphost
