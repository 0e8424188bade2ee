// Small helpers for the AF_UNIX channel to xcp-stackd: the address (abstract
// when it starts with '@'), and one message with an optional descriptor.
// They return -1 with errno set, never throw: the interposer calls them from
// inside unmodified programs.
#pragma once

#include <sys/types.h>

#include <cstddef>

namespace xcpsock {

// Where the daemon listens: `path`, else $XCP_STACKD_SOCKET, else "@xcp-stackd".
const char* stackd_address(const char* path);
// A listening SOCK_SEQPACKET socket at `address` (the daemon's side).
int listen_unix(const char* address);
// A SOCK_SEQPACKET connection to `address` (CLOEXEC, blocking).
int connect_unix(const char* address);
// Sends `len` bytes and, when `fd` >= 0, the descriptor. MSG_NOSIGNAL.
ssize_t send_message(int sock, const void* buf, size_t len, int fd, int flags = 0);
// Receives one message; a descriptor that came with it goes to *fd (else -1),
// with O_CLOEXEC when `cloexec`. MSG_TRUNC/short messages are the caller's check.
ssize_t recv_message(int sock, void* buf, size_t len, int* fd, bool cloexec, int flags = 0);

}  // namespace xcpsock
