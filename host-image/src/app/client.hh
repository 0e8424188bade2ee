// xcpperf client: opens -P streams to the server, sends for -t seconds or
// -n bytes, reports every -i seconds and at the end. Returns an exit code.
#pragma once

#include "app/options.hh"

namespace xcphost {

int run_client(const Options& o);

}  // namespace xcphost
