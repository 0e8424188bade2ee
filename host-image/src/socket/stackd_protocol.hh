// What an application (through socket/xcpsock.cc) and xcp-stackd say to each
// other over the daemon's AF_UNIX SOCK_SEQPACKET socket. One request per
// control connection, one fixed-size message each way; a connect request
// carries the daemon's end of the application's socketpair (SCM_RIGHTS).
// A listen request's control connection stays open and becomes the listening
// descriptor: the daemon sends one Accepted message (with the connection's
// descriptor) per established connection. SEQPACKET keeps each message whole
// even when forked processes share the listening descriptor.
#pragma once

#include <cstdint>

#include "socket/xcpsock.h"

namespace xcpsock {

inline constexpr uint32_t kMagic = 0x58435053;  // "XCPS"
inline constexpr uint32_t kVersion = 2;
// Largest listen backlog the daemon queues (bounds its memory per listener).
inline constexpr uint32_t kMaxBacklog = 1024;

// Payload bytes per segment of every stack connection (ConnectionConfig's
// default for a 1500-byte MTU; stack_daemon.cc checks they agree). The
// interposer answers TCP_MAXSEG with it.
inline constexpr uint32_t kMssBytes = 1424;

// kSetSndbuf: the application set SO_SNDBUF on a connection (addressed as kInfo).
// kFate: how a connection the application read EOF on ended (Reply::err:
// ECONNRESET, ETIMEDOUT, or 0 for a clean close / unknown).
enum class Op : uint32_t { kConnect = 1, kListen = 2, kInfo = 3, kSetSndbuf = 4, kFate = 5 };

struct Request {
  uint32_t magic = kMagic;
  uint32_t version = kVersion;
  Op op = Op::kConnect;
  uint32_t addr = 0;         // IPv4, host order: connect destination / info peer
  uint16_t port = 0;         // connect destination / listen port / info peer
  uint16_t local_port = 0;   // info: our port
  uint32_t backlog = 0;      // listen
  int32_t cc = XCPSOCK_CC_DEFAULT;
  uint32_t sndbuf = 0;       // connect/listen/kSetSndbuf: SO_SNDBUF as stored (0 = automatic)
  uint64_t rate_bps = 0;
  // connect: bytes the application wrote into its end to keep it unwritable
  // until the handshake ends (non-blocking connect); the daemon drops them.
  uint32_t filler = 0;
  uint32_t reserved = 0;
};

// The daemon's answer to a request, and each Accepted message on a listener.
struct Reply {
  int32_t err = 0;  // errno value; 0 = success
  uint32_t local_addr = 0;
  uint32_t remote_addr = 0;
  uint16_t local_port = 0;
  uint16_t remote_port = 0;
  struct ::xcpsock_info info{};  // kInfo
};

}  // namespace xcpsock
