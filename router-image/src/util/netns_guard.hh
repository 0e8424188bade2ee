// Enters a network namespace for the lifetime of the guard and returns to
// the original one in the destructor: sockets created meanwhile stay bound
// to the namespace they were opened in. Single-threaded use only (setns
// changes the calling thread's namespace).
#pragma once

#include <string>

#include "xcp/fd.hh"

namespace xcprouter {

class NetnsGuard {
 public:
  // Empty path: no-op (stay in the current namespace).
  explicit NetnsGuard(const std::string& netns_path);
  ~NetnsGuard();
  NetnsGuard(const NetnsGuard&) = delete;
  NetnsGuard& operator=(const NetnsGuard&) = delete;

 private:
  xcp::FileDescriptor original_;
};

}  // namespace xcprouter
