// xcpperf server: accepts streams on -p PORT from any number of clients,
// counts and (with the client's verify flag) checks every byte, answers each
// client FIN with a report and its own FIN. Runs until SIGINT/SIGTERM, or
// with --one-off until the first client's streams are finished.
#pragma once

#include "app/options.hh"

namespace xcphost {

int run_server(const Options& o);

}  // namespace xcphost
