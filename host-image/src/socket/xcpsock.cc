// The C API of socket/xcpsock.h: each call is one request to xcp-stackd.
#include "socket/xcpsock.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "socket/stackd_protocol.hh"
#include "socket/unix_channel.hh"

namespace {

using xcpsock::Reply;
using xcpsock::Request;

// Closes `fd` keeping errno.
void close_keep_errno(int fd) {
  const int e = errno;
  close(fd);
  errno = e;
}

void fill(sockaddr_in* out, uint32_t addr, uint16_t port) {
  if (out == nullptr) return;
  std::memset(out, 0, sizeof *out);
  out->sin_family = AF_INET;
  out->sin_addr.s_addr = htonl(addr);
  out->sin_port = htons(port);
}

Request base_request(xcpsock::Op op, const xcpsock_options* o) {
  Request r;
  r.op = op;
  if (o != nullptr) {
    r.cc = o->cc;
    r.rate_bps = o->rate_bps;
    r.sndbuf = o->sndbuf_bytes;
  }
  return r;
}

// Reads the daemon's reply on `ctl`; `wait` false: EINPROGRESS when none yet.
int read_reply(int ctl, Reply& rep, bool wait) {
  int got_fd = -1;
  const ssize_t n = xcpsock::recv_message(ctl, &rep, sizeof rep, &got_fd, true, wait ? 0 : MSG_DONTWAIT);
  if (got_fd >= 0) close(got_fd);
  if (n < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK) errno = EINPROGRESS;
    return -1;
  }
  if (n != static_cast<ssize_t>(sizeof rep)) {
    errno = n == 0 ? ECONNRESET : EPROTO;  // daemon gone, or a different version
    return -1;
  }
  if (rep.err != 0) {
    errno = rep.err;
    return -1;
  }
  return 0;
}

// Sends `req` (with `fd` when >= 0) on `ctl` and waits for the reply.
int exchange(int ctl, const Request& req, int fd, Reply& rep) {
  if (xcpsock::send_message(ctl, &req, sizeof req, fd) != static_cast<ssize_t>(sizeof req)) return -1;
  return read_reply(ctl, rep, true);
}

// One request about an established connection (local, peer) on a fresh control
// connection; `req` comes with its op and op-specific fields set.
int connection_request(const char* stackd, const sockaddr_in* local, const sockaddr_in* peer,
                       Request& req, Reply& rep) {
  if (local == nullptr || peer == nullptr) {
    errno = EINVAL;
    return -1;
  }
  const int ctl = xcpsock::connect_unix(xcpsock::stackd_address(stackd));
  if (ctl < 0) return -1;
  req.addr = ntohl(peer->sin_addr.s_addr);
  req.port = ntohs(peer->sin_port);
  req.local_port = ntohs(local->sin_port);
  const int rc = exchange(ctl, req, -1, rep);
  close_keep_errno(ctl);
  return rc;
}

// Fills `fd`'s send buffer (non-blocking writes until EAGAIN) so that it
// polls unwritable; returns the bytes written or -1.
ssize_t fill_until_unwritable(int fd) {
  const int fl = fcntl(fd, F_GETFL);
  if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) != 0) return -1;
  static const char zeros[4096] = {};
  ssize_t total = 0;
  for (;;) {
    const ssize_t n = send(fd, zeros, sizeof zeros, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      total += n;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    return -1;
  }
  return fcntl(fd, F_SETFL, fl) == 0 ? total : -1;
}

// What both connects start with: the socketpair whose end pair[0] becomes the
// application's descriptor (made unwritable first when `unwritable`: a non-blocking
// connect in progress), the control connection to the daemon (returned), and the
// connect request for `dst`. -1 with both ends closed.
int begin_connect(const char* stackd, const sockaddr_in* dst, const xcpsock_options* o, bool unwritable,
                  int pair[2], Request& req) {
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) return -1;
  const ssize_t filler = unwritable ? fill_until_unwritable(pair[0]) : 0;
  const int ctl = filler < 0 ? -1 : xcpsock::connect_unix(xcpsock::stackd_address(stackd));
  if (ctl < 0) {
    close_keep_errno(pair[0]);
    close_keep_errno(pair[1]);
    return -1;
  }
  req = base_request(xcpsock::Op::kConnect, o);
  req.addr = ntohl(dst->sin_addr.s_addr);
  req.port = ntohs(dst->sin_port);
  req.filler = static_cast<uint32_t>(filler);
  return ctl;
}

}  // namespace

extern "C" {

void xcpsock_options_init(xcpsock_options* o) {
  o->cc = XCPSOCK_CC_DEFAULT;
  o->rate_bps = 0;
  o->sndbuf_bytes = 0;
}

int xcpsock_cc_from_name(const char* name) {
  if (name == nullptr) return -1;
  if (std::strcmp(name, "xcp") == 0) return XCPSOCK_CC_XCP;
  if (std::strcmp(name, "newreno") == 0 || std::strcmp(name, "reno") == 0) return XCPSOCK_CC_NEWRENO;
  if (std::strcmp(name, "hstcp") == 0 || std::strcmp(name, "highspeed") == 0) return XCPSOCK_CC_HSTCP;
  return -1;
}

const char* xcpsock_cc_name(int cc) {
  switch (cc) {
    case XCPSOCK_CC_XCP: return "xcp";
    case XCPSOCK_CC_NEWRENO: return "newreno";
    case XCPSOCK_CC_HSTCP: return "hstcp";
    default: return "default";
  }
}

int xcpsock_connect(const char* stackd, const sockaddr_in* dst, const xcpsock_options* o, sockaddr_in* local) {
  if (dst == nullptr || dst->sin_family != AF_INET) {
    errno = EAFNOSUPPORT;
    return -1;
  }
  int pair[2];
  Request req;
  const int ctl = begin_connect(stackd, dst, o, false, pair, req);
  if (ctl < 0) return -1;
  Reply rep;
  const int rc = exchange(ctl, req, pair[1], rep);
  close_keep_errno(pair[1]);
  close_keep_errno(ctl);
  if (rc != 0) {
    close_keep_errno(pair[0]);
    return -1;
  }
  fill(local, rep.local_addr, rep.local_port);
  return pair[0];
}

int xcpsock_connect_start(const char* stackd, const sockaddr_in* dst, const xcpsock_options* o, int* pending,
                          sockaddr_in* local) {
  if (dst == nullptr || dst->sin_family != AF_INET || pending == nullptr) {
    errno = dst == nullptr || pending == nullptr ? EINVAL : EAFNOSUPPORT;
    return -1;
  }
  int pair[2];
  Request req;
  const int ctl = begin_connect(stackd, dst, o, true, pair, req);
  if (ctl < 0) return -1;
  const bool sent = xcpsock::send_message(ctl, &req, sizeof req, pair[1]) == static_cast<ssize_t>(sizeof req);
  close_keep_errno(pair[1]);
  // The daemon answers at once: EINPROGRESS with the port it chose, or why not.
  Reply rep;
  const int rc = sent ? read_reply(ctl, rep, true) : -1;
  if (rc == 0 || rep.err != EINPROGRESS) {
    if (rc == 0) errno = EPROTO;  // connected without a first answer: another version
    close_keep_errno(ctl);
    close_keep_errno(pair[0]);
    return -1;
  }
  fill(local, rep.local_addr, rep.local_port);
  *pending = ctl;
  return pair[0];
}

int xcpsock_connect_result(int pending, int wait, sockaddr_in* local) {
  Reply rep;
  if (read_reply(pending, rep, wait != 0) != 0) return -1;
  fill(local, rep.local_addr, rep.local_port);
  return 0;
}

int xcpsock_fate(const char* stackd, const sockaddr_in* local, const sockaddr_in* peer) {
  Request req = base_request(xcpsock::Op::kFate, nullptr);
  Reply rep;
  const int rc = connection_request(stackd, local, peer, req, rep);
  return rc == 0 ? 0 : rep.err != 0 ? rep.err : -1;
}

int xcpsock_set_sndbuf(const char* stackd, const sockaddr_in* local, const sockaddr_in* peer, uint32_t bytes) {
  Request req = base_request(xcpsock::Op::kSetSndbuf, nullptr);
  req.sndbuf = bytes;
  Reply rep;
  return connection_request(stackd, local, peer, req, rep);
}

int xcpsock_listen(const char* stackd, const sockaddr_in* local, const xcpsock_options* o, int backlog) {
  if (local == nullptr || local->sin_family != AF_INET || local->sin_port == 0) {
    errno = EINVAL;  // the stack has no ephemeral listening ports
    return -1;
  }
  const int ctl = xcpsock::connect_unix(xcpsock::stackd_address(stackd));
  if (ctl < 0) return -1;
  Request req = base_request(xcpsock::Op::kListen, o);
  req.addr = ntohl(local->sin_addr.s_addr);
  req.port = ntohs(local->sin_port);
  req.backlog = backlog <= 0 ? 1 : static_cast<uint32_t>(backlog);
  Reply rep;
  if (exchange(ctl, req, -1, rep) != 0) {
    close_keep_errno(ctl);
    return -1;
  }
  return ctl;
}

int xcpsock_accept(int listen_fd, sockaddr_in* peer, sockaddr_in* local, int flags) {
  const int fl = fcntl(listen_fd, F_GETFL);
  if (fl < 0) return -1;
  Reply rep;
  int fd = -1;
  const ssize_t n = xcpsock::recv_message(listen_fd, &rep, sizeof rep, &fd, (flags & SOCK_CLOEXEC) != 0,
                                          (fl & O_NONBLOCK) ? MSG_DONTWAIT : 0);
  if (n < 0) return -1;
  if (n != static_cast<ssize_t>(sizeof rep) || fd < 0) {
    if (fd >= 0) close(fd);
    errno = n == 0 ? EINVAL : EPROTO;  // n == 0: the daemon stopped listening
    return -1;
  }
  if ((flags & SOCK_NONBLOCK) && fcntl(fd, F_SETFL, O_NONBLOCK) != 0) {
    close_keep_errno(fd);
    return -1;
  }
  fill(peer, rep.remote_addr, rep.remote_port);
  fill(local, rep.local_addr, rep.local_port);
  return fd;
}

int xcpsock_info(const char* stackd, const sockaddr_in* local, const sockaddr_in* peer, struct xcpsock_info* out) {
  if (out == nullptr) {
    errno = EINVAL;
    return -1;
  }
  Request req = base_request(xcpsock::Op::kInfo, nullptr);
  Reply rep;
  const int rc = connection_request(stackd, local, peer, req, rep);
  if (rc == 0) *out = rep.info;
  return rc;
}

}  // extern "C"
