// xcpperf: the iperf3 of the xcplab host stack (host-image/README.md).
#include <algorithm>
#include <cstdio>
#include <exception>
#include <string>
#include <variant>
#include <vector>

#include "app/client.hh"
#include "app/objects_client.hh"
#include "app/options.hh"
#include "app/server.hh"

int main(int argc, char** argv) {
  using namespace xcphost;
  const std::vector<std::string_view> args(argv + 1, argv + argc);
  for (auto a : args) {
    if (a == "-h" || a == "--help") {
      std::fputs(std::string(usage_text()).c_str(), stdout);
      return kExitOk;
    }
    if (a == "-v" || a == "--version") {
      std::printf("xcpperf %s\n", XCPLAB_VERSION);
      return kExitOk;
    }
  }
  if (std::find(args.begin(), args.end(), "--job") != args.end()) {
    const ParsedJobs jobs = parse_jobs(args);
    if (const auto* err = std::get_if<std::string>(&jobs)) {
      std::fprintf(stderr, "xcpperf: %s\n%s", err->c_str(), std::string(usage_text()).c_str());
      return kExitUsage;
    }
    try {
      return run_objects_jobs(std::get<std::vector<Job>>(jobs));
    } catch (const std::exception& e) {
      std::fprintf(stderr, "xcpperf: error: %s\n", e.what());
      return kExitError;
    }
  }
  const ParsedOptions parsed = parse_options(args);
  if (const auto* err = std::get_if<std::string>(&parsed)) {
    std::fprintf(stderr, "xcpperf: %s\n%s", err->c_str(), std::string(usage_text()).c_str());
    return kExitUsage;
  }
  const Options& o = std::get<Options>(parsed);
  try {
    if (o.mode == Options::Mode::kServer) return run_server(o);
    return o.objects.empty() ? run_client(o) : run_objects_client(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "xcpperf: error: %s\n", e.what());
    return kExitError;
  }
}
