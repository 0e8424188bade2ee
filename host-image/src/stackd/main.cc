// xcp-stackd: the XCP socket stack of one host (docs/socket-stack.md).
#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>

#include "app/signals.hh"
#include "io/icmp_filter.hh"
#include "stackd/stack_daemon.hh"

namespace {

constexpr const char* kUsage =
    "usage: xcp-stackd [--socket ADDR] [--cc xcp|newreno|hstcp] [--ttl N]\n"
    "                  [--max-connections N] [--max-backlog-bytes N] [--install-icmp-filter]\n"
    "                  [--max-send-buffer-bytes N] [--receive-buffer-bytes N] [--json-stream SECONDS]\n"
    "  --socket ADDR   where applications reach the stack (default $XCP_STACKD_SOCKET or\n"
    "                  @xcp-stackd; '@' = abstract, private to the network namespace)\n"
    "  --cc NAME       controller of sockets that choose none (default xcp)\n"
    "  --max-send-buffer-bytes N  most bytes a connection holds unacknowledged: the\n"
    "                  application's SO_SNDBUF, else twice its window, up to N (default 4194304)\n"
    "  --receive-buffer-bytes N   per connection: the advertised window is what of it the\n"
    "                  application has not left unread (default 4194304)\n"
    "  --json-stream SECONDS  JSON lines on stdout: start, each listen, every connection's\n"
    "                  cwnd/srtt/bytes/feedback every SECONDS (0.01..60), each close\n";

// Parses a positive integer no larger than `max`; exits with usage on error.
unsigned long number(std::string_view flag, const char* v, unsigned long max) {
  char* end = nullptr;
  const unsigned long n = v != nullptr ? std::strtoul(v, &end, 10) : 0;
  if (v == nullptr || *end != '\0' || n == 0 || n > max) {
    std::fprintf(stderr, "xcp-stackd: %.*s needs an integer in [1, %lu]\n%s", static_cast<int>(flag.size()),
                 flag.data(), max, kUsage);
    std::exit(2);
  }
  return n;
}

}  // namespace

int main(int argc, char** argv) {
  xcpstackd::DaemonConfig cfg;
  cfg.defaults.cc = xcphost::CcKind::kXcp;
  if (const char* env = std::getenv("XCP_STACKD_SOCKET"); env != nullptr && env[0] != '\0') cfg.address = env;
  bool icmp_filter = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : nullptr;
    if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (a == "--socket" && v != nullptr) {
      cfg.address = argv[++i];
    } else if (a == "--cc" && v != nullptr) {
      const auto k = xcphost::parse_cc_kind(argv[++i]);
      if (!k) {
        std::fprintf(stderr, "xcp-stackd: --cc %s: not one of xcp, newreno, hstcp\n", v);
        return 2;
      }
      cfg.defaults.cc = *k;
    } else if (a == "--ttl") {
      cfg.raw.ttl = static_cast<uint8_t>(number(a, v, 255));
      ++i;
    } else if (a == "--max-connections") {
      cfg.max_connections = number(a, v, 65536);
      ++i;
    } else if (a == "--max-backlog-bytes") {
      cfg.max_backlog_bytes = number(a, v, 1ul << 30);
      ++i;
    } else if (a == "--max-send-buffer-bytes") {
      cfg.max_send_buffer_bytes = std::max(number(a, v, 1ul << 30), 2ul * xcpsock::kMssBytes);
      ++i;
    } else if (a == "--receive-buffer-bytes") {
      cfg.receive_buffer_bytes = static_cast<uint32_t>(std::max(number(a, v, 1ul << 30), 2ul * xcpsock::kMssBytes));
      ++i;
    } else if (a == "--json-stream" && v != nullptr) {
      char* end = nullptr;
      const double sec = std::strtod(argv[++i], &end);
      if (*end != '\0' || !(sec >= 0.01 && sec <= 60)) {
        std::fprintf(stderr, "xcp-stackd: --json-stream %s: an interval in seconds, 0.01..60\n", v);
        return 2;
      }
      cfg.report_interval = xcp::Duration::seconds(sec);
    } else if (a == "--install-icmp-filter") {
      icmp_filter = true;
    } else {
      std::fprintf(stderr, "xcp-stackd: unknown or incomplete argument %s\n%s", argv[i], kUsage);
      return 2;
    }
  }
  if (cfg.max_backlog_bytes < cfg.receive_buffer_bytes) {
    std::fprintf(stderr, "xcp-stackd: --max-backlog-bytes %zu is below --receive-buffer-bytes %u: a reader that "
                 "sleeps would be reset before its window closes\n", cfg.max_backlog_bytes, cfg.receive_buffer_bytes);
    return 2;
  }
  try {
    if (icmp_filter) xcphost::install_icmp_filter();
    std::signal(SIGPIPE, SIG_IGN);
    xcphost::install_stop_signals();
    xcp::MonotonicClock clock;
    xcpstackd::StackDaemon d(cfg, clock);
    if (cfg.report_interval > xcp::Duration::zero()) {
      d.report_started();
    } else {
      std::printf("xcp-stackd listening on %s\n", cfg.address.c_str());
      std::fflush(stdout);
    }
    d.run([] { return xcphost::stop_requested(); });
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "xcp-stackd: error: %s\n", e.what());
    return 1;
  }
}
