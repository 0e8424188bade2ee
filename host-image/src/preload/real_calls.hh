// The C library's own functions behind the ones the interposer replaces
// (dlsym(RTLD_NEXT)), and helpers shared by the interposed calls.
#pragma once

#include <dlfcn.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <optional>

#include "preload/fd_table.hh"
#include "socket/match_config.hh"

namespace xcppreload {

template <typename F>
F real(const char* name) {
  return reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
}

#define XCPPRELOAD_REAL(name) \
  static const auto real_##name = ::xcppreload::real<decltype(&::name)>(#name)

// The environment's configuration, parsed once; a bad value ends the program
// with "xcpsock: VAR=value: reason" (exit 2) before it does anything.
const xcpsock::MatchConfig& config();

// Reads a non-blocking connect's outcome once it arrived: the local address
// on success, else the error kept for SO_ERROR / a second connect(). The
// descriptor's info after that (empty when it is not moved).
std::optional<FdInfo> fd_settle(int fd);

// Copies `addr` into the caller's (addr, len) buffer as `family` sees it:
// AF_INET6 gets the IPv4-mapped address. Truncates like the kernel does.
void write_address(const sockaddr_in& addr, int family, sockaddr* out, socklen_t* len);
// An IPv4 destination from an AF_INET address or an IPv4-mapped AF_INET6 one.
bool ipv4_of(const sockaddr* addr, socklen_t len, sockaddr_in& out);

}  // namespace xcppreload
