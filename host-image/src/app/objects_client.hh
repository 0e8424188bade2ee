// xcpperf client with --objects: plays the object schedule (one connection
// per object, app/object_player.hh), reports every -i seconds the flow's
// aggregate as one stream, each object as it concludes ("object" event with
// --json-stream) and all of them in the end section. Returns an exit code.
#pragma once

#include "app/options.hh"

namespace xcphost {

int run_objects_client(const Options& o);

}  // namespace xcphost
