#include "util/netns_guard.hh"

#include <fcntl.h>
#include <sched.h>

#include <cstdio>
#include <cstdlib>

namespace xcprouter {

NetnsGuard::NetnsGuard(const std::string& netns_path) {
  if (netns_path.empty()) return;
  original_ = xcp::FileDescriptor(static_cast<int>(
      xcp::check_syscall("open(/proc/self/ns/net)", ::open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC))));
  xcp::FileDescriptor target(static_cast<int>(
      xcp::check_syscall("open(" + netns_path + ")", ::open(netns_path.c_str(), O_RDONLY | O_CLOEXEC))));
  xcp::check_syscall("setns(" + netns_path + ")", ::setns(target.get(), CLONE_NEWNET));
}

NetnsGuard::~NetnsGuard() {
  if (!original_.valid()) return;
  // Failing to return would silently open later sockets in the wrong
  // namespace; there is no way to recover, so say it loudly.
  if (::setns(original_.get(), CLONE_NEWNET) != 0) {
    std::perror("xcp-router: setns back to the original network namespace");
    std::abort();
  }
}

}  // namespace xcprouter
