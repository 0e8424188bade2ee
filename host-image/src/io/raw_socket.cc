#include "io/raw_socket.hh"

#include <netinet/in.h>
#include <sys/socket.h>

#include "xcp/header.hh"

namespace xcphost {
namespace {

// Tries the privileged FORCE option first (ignores net.core.{w,r}mem_max).
int set_buffer(int fd, int force_opt, int opt, int bytes, const char* what) {
  if (setsockopt(fd, SOL_SOCKET, force_opt, &bytes, sizeof bytes) != 0) {
    xcp::check_syscall(what, setsockopt(fd, SOL_SOCKET, opt, &bytes, sizeof bytes));
  }
  int got = 0;
  socklen_t len = sizeof got;
  xcp::check_syscall(what, getsockopt(fd, SOL_SOCKET, opt, &got, &len));
  return got;
}

}  // namespace

RawSocket::RawSocket(const RawSocketConfig& cfg)
    : fd_(static_cast<int>(xcp::check_syscall(
          "socket(AF_INET, SOCK_RAW, 253) (needs root or CAP_NET_RAW)",
          socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, xcp::kIpProtoXcp)))) {
  sndbuf_ = set_buffer(fd_.get(), SO_SNDBUFFORCE, SO_SNDBUF, cfg.buffer_bytes, "setsockopt(SO_SNDBUF)");
  rcvbuf_ = set_buffer(fd_.get(), SO_RCVBUFFORCE, SO_RCVBUF, cfg.buffer_bytes, "setsockopt(SO_RCVBUF)");
  if (cfg.ttl != 0) {
    const int ttl = cfg.ttl;
    xcp::check_syscall("setsockopt(IP_TTL)", setsockopt(fd_.get(), IPPROTO_IP, IP_TTL, &ttl, sizeof ttl));
  }
  // Never fragment: segments are sized to the MTU; a too-large one is an
  // error to report (EMSGSIZE), not something to split silently.
  const int pmtu = IP_PMTUDISC_PROBE;
  xcp::check_syscall("setsockopt(IP_MTU_DISCOVER)",
                     setsockopt(fd_.get(), IPPROTO_IP, IP_MTU_DISCOVER, &pmtu, sizeof pmtu));
}

}  // namespace xcphost
