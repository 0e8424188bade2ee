/* The XCP socket stack's C API (docs/socket-stack.md).
 *
 * Connections are made by the host's stack daemon, xcp-stackd, which owns the
 * raw protocol-253 socket and the transport. What an application gets back is
 * an ordinary kernel file descriptor (one end of an AF_UNIX stream socketpair
 * whose other end the daemon bridges to the XCP connection), so sending and
 * receiving are read/write/send/recv/readv/writev/sendfile, readiness is
 * poll/select/epoll, non-blocking mode is fcntl(O_NONBLOCK), half-close is
 * shutdown(SHUT_WR) and close is close(). A listening socket is an AF_UNIX
 * SOCK_SEQPACKET descriptor that turns readable when a connection is ready
 * to be accepted.
 *
 * Every function returns -1 and sets errno on failure (ECONNREFUSED: the peer
 * reset the handshake; ETIMEDOUT: no answer within the connect timeout;
 * EADDRINUSE: the port already listens; ENOENT/ECONNREFUSED from reaching the
 * daemon: no xcp-stackd runs in this network namespace). */
#ifndef XCPSOCK_H
#define XCPSOCK_H

#include <netinet/in.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Congestion controllers of the stack (host-image/CC.md). */
enum xcpsock_cc {
  XCPSOCK_CC_DEFAULT = 0, /* the daemon's --cc */
  XCPSOCK_CC_XCP = 1,
  XCPSOCK_CC_NEWRENO = 2,
  XCPSOCK_CC_HSTCP = 3
};

struct xcpsock_options {
  int cc;                /* enum xcpsock_cc */
  uint64_t rate_bps;     /* XCP desired rate (bits/s); 0 = unlimited */
  uint32_t sndbuf_bytes; /* most bytes the stack holds unacknowledged; 0 = automatic
                            (twice the congestion window, within the daemon's bound) */
};

/* Per-connection state as the daemon sees it (units in the names). */
struct xcpsock_info {
  uint32_t cwnd_bytes;
  uint32_t srtt_us;
  uint64_t bytes_sent;
  uint64_t bytes_acked;
  uint64_t bytes_received;
  uint64_t retransmits;
  int64_t feedback_bytes; /* sum of XCP feedback received */
  int32_t cc;             /* enum xcpsock_cc */
  int32_t state;          /* 0 connecting, 1 established, 2 closed, 3 failed */
};

/* `stackd`: the daemon's Unix socket address; NULL means $XCP_STACKD_SOCKET,
 * else "@xcp-stackd". A leading '@' names an abstract socket, which is
 * private to the network namespace: each emulated host has its own daemon. */

void xcpsock_options_init(struct xcpsock_options* o);
/* XCPSOCK_CC_* for "xcp", "newreno" (or "reno"), "hstcp" (or "highspeed"); -1 otherwise. */
int xcpsock_cc_from_name(const char* name);
const char* xcpsock_cc_name(int cc);

/* Blocks until the handshake completes or fails. Returns the connection's
 * descriptor (O_CLOEXEC, blocking); `local` (may be NULL) gets our address. */
int xcpsock_connect(const char* stackd, const struct sockaddr_in* dst, const struct xcpsock_options* o,
                    struct sockaddr_in* local);
/* Starts a connection without waiting (a non-blocking connect): returns its
 * descriptor at once, made unwritable until the handshake ends, then
 * writable (poll/select/epoll POLLOUT) whether it succeeded or failed;
 * `*pending` gets a descriptor (O_CLOEXEC) that xcpsock_connect_result()
 * reads the outcome from. `local` (may be NULL) gets our address at once,
 * as getsockname() answers after a kernel's EINPROGRESS. */
int xcpsock_connect_start(const char* stackd, const struct sockaddr_in* dst, const struct xcpsock_options* o,
                          int* pending, struct sockaddr_in* local);
/* The outcome of xcpsock_connect_start(): 0 (connected; `local` may be
 * NULL), -1 with errno EINPROGRESS while the handshake runs (when
 * `wait` is 0), else -1 with the connection's error (ECONNREFUSED,
 * ETIMEDOUT, ...). Once it returned 0 or an error, close `pending`. */
int xcpsock_connect_result(int pending, int wait, struct sockaddr_in* local);
/* How the connection ended, once its descriptor read end-of-file: an errno
 * value (ECONNRESET: the peer reset it; ETIMEDOUT: it was lost), 0 when it
 * closed cleanly (or the daemon does not know it), -1 when the daemon
 * cannot be asked. */
int xcpsock_fate(const char* stackd, const struct sockaddr_in* local, const struct sockaddr_in* peer);
/* SO_SNDBUF of a live connection (the value as the kernel stores it). */
int xcpsock_set_sndbuf(const char* stackd, const struct sockaddr_in* local, const struct sockaddr_in* peer,
                       uint32_t bytes);
/* Listens on `local`'s port (any address). Returns the listening descriptor. */
int xcpsock_listen(const char* stackd, const struct sockaddr_in* local, const struct xcpsock_options* o,
                   int backlog);
/* Takes one established connection; blocks unless `listen_fd` is O_NONBLOCK
 * (then EAGAIN). `flags`: SOCK_NONBLOCK | SOCK_CLOEXEC as for accept4(). */
int xcpsock_accept(int listen_fd, struct sockaddr_in* peer, struct sockaddr_in* local, int flags);
/* State of the connection with local port `local_port` and peer `peer`. */
int xcpsock_info(const char* stackd, const struct sockaddr_in* local, const struct sockaddr_in* peer,
                 struct xcpsock_info* out);

#ifdef __cplusplus
}
#endif

#endif /* XCPSOCK_H */
