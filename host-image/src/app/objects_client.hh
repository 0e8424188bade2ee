// xcpperf client with --objects: plays the object schedule (one connection
// per object, app/object_player.hh), reports every -i seconds the flow's
// aggregate as one stream, each object as it concludes ("object" event with
// --json-stream) and all of them in the end section. Returns an exit code.
#pragma once

#include <vector>

#include "app/options.hh"

namespace xcphost {

int run_objects_client(const Options& o);
// Several --objects clients (parse_jobs) on one socket and I/O loop; each job reports
// and ends on its own. Returns the largest of the jobs' exit codes.
int run_objects_jobs(const std::vector<Job>& jobs);

}  // namespace xcphost
