// xcp-router: the userspace XCP forwarding engine and link emulator.
//   xcp-router --config FILE [--check]   run (or only validate) a configuration
//   xcp-router --version
//   xcp-router --list-queue-kinds        the queue kinds built in, one a line
// Configuration: router-image/CONFIG.md; control socket: router-image/CONTROL.md.
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

#include "control/config_loader.hh"
#include "core/engine.hh"
#include "qdisc/qdisc_factory.hh"
#include "xcp/fd.hh"

namespace {

void usage(FILE* out) {
  std::fprintf(out, "usage: xcp-router --config FILE [--check] | --version | --list-queue-kinds\n");
}

int run(const std::string& config_path, bool check_only) {
  const xcprouter::EngineConfig config = xcprouter::load_config(config_path);
  // SIGTERM/SIGINT arrive as a readable fd in the loop: the exit is clean
  // (sockets closed, control socket removed), never mid-packet.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  xcp::check_syscall("sigprocmask", sigprocmask(SIG_BLOCK, &signals, nullptr));
  xcp::FileDescriptor sigfd(static_cast<int>(
      xcp::check_syscall("signalfd", signalfd(-1, &signals, SFD_CLOEXEC | SFD_NONBLOCK))));

  const xcp::MonotonicClock clock;
  // --check opens everything too (namespaces, interfaces, MACs) but does
  // not serve: a config that passes --check starts.
  xcprouter::EngineConfig checked = config;
  if (check_only) checked.control_socket = "/tmp/xcp-router-check-" + std::to_string(getpid()) + ".sock";
  xcprouter::Engine engine(checked, clock);
  if (check_only) {
    std::printf("%s: ok (%zu routers)\n", config_path.c_str(), config.routers.size());
    return 0;
  }
  engine.loop().add_reader(sigfd.get(), [&] { engine.stop(); });
  std::printf("ready\n");
  std::fflush(stdout);
  engine.run();
  engine.loop().remove_reader(sigfd.get());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string config_path;
  bool check_only = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--version") {
      std::printf("xcp-router %s\n", XCPLAB_VERSION);
      return 0;
    } else if (arg == "--list-queue-kinds") {
      // the files of src/qdisc/kinds/ this binary was built with (the planner's and
      // the tests' view of what the engine accepts)
      std::string kinds(xcprouter::qdisc_kinds());
      for (size_t at = 0; (at = kinds.find(", ", at)) != std::string::npos;) kinds.replace(at, 2, "\n");
      std::printf("%s\n", kinds.c_str());
      return 0;
    } else if (arg == "--config" && i + 1 < argc) {
      config_path = argv[++i];
    } else if (arg == "--check") {
      check_only = true;
    } else if (arg == "--help" || arg == "-h") {
      usage(stdout);
      return 0;
    } else {
      std::fprintf(stderr, "xcp-router: unknown argument '%s'\n", arg.c_str());
      usage(stderr);
      return 2;
    }
  }
  if (config_path.empty()) {
    usage(stderr);
    return 2;
  }
  try {
    return run(config_path, check_only);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "xcp-router: %s\n", e.what());
    return 1;
  }
}
