// xcp-port-open: opens N ports the way the engine does and reports the wall
// time and the process's RSS, for bench/bench_engine_scale.py (issue 17).
//   xcp-port-open NETNS_PATH PREFIX COUNT RATE_BPS [serial|many]
// opens PREFIX0..PREFIX{COUNT-1} in NETNS_PATH with rings sized for RATE_BPS
// (0: unknown, the largest), one after another (serial, as the engine's
// Port(ifname) loop does) or with Port::open_many, closes them the same way
// (destructors in turn, or Port::close_many), then prints one JSON line.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include <chrono>

#include "core/port.hh"
#include "util/netns_guard.hh"

namespace {

long rss_kb() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::strtol(line.c_str() + 6, nullptr, 10);
  }
  return -1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: %s NETNS_PATH PREFIX COUNT RATE_BPS [serial|many]\n", argv[0]);
    return 2;
  }
  const std::string netns = argv[1], prefix = argv[2];
  const long count = std::strtol(argv[3], nullptr, 10);
  const xcp::Rate rate = xcp::Rate::from_bits_per_s(std::strtod(argv[4], nullptr));
  const bool serial = argc > 5 && std::string(argv[5]) == "serial";
  if (count < 1 || count > 100000) {
    std::fprintf(stderr, "COUNT must be in [1, 100000]\n");
    return 2;
  }
  const long before = rss_kb();
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::unique_ptr<xcprouter::Port>> ports;
  if (serial) {
    xcprouter::NetnsGuard in_namespace(netns);
    for (long i = 0; i < count; ++i) ports.push_back(std::make_unique<xcprouter::Port>(prefix + std::to_string(i), rate));
  } else {
    std::vector<xcprouter::PortRequest> req;
    for (long i = 0; i < count; ++i) req.push_back({netns, prefix + std::to_string(i), rate});
    ports = xcprouter::Port::open_many(req);
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const long rss = rss_kb();
  const size_t ring_bytes = ports.front()->rx_ring_bytes();
  // Closing waits out kernel grace periods per socket too (the engine's exit).
  const auto t1 = std::chrono::steady_clock::now();
  if (serial) {
    ports.clear();
  } else {
    xcprouter::Port::close_many(ports);
  }
  const double c = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
  std::printf("{\"ports\": %ld, \"open_s\": %.3f, \"close_s\": %.3f, \"rss_kb\": %ld, \"rss_kb_before\": %ld, "
              "\"ring_bytes\": %zu}\n", count, s, c, rss, before, ring_bytes);
  return 0;
}
