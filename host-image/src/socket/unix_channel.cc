#include "socket/unix_channel.hh"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace xcpsock {
namespace {

// Fills `sa` for `address`; returns the address length or 0 (errno set).
socklen_t make_address(const char* address, sockaddr_un& sa) {
  std::memset(&sa, 0, sizeof sa);
  sa.sun_family = AF_UNIX;
  const size_t n = std::strlen(address);
  if (n == 0 || n >= sizeof sa.sun_path) {
    errno = ENAMETOOLONG;
    return 0;
  }
  std::memcpy(sa.sun_path, address, n);
  if (address[0] == '@') sa.sun_path[0] = '\0';  // abstract: per network namespace
  return static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + n);
}

}  // namespace

const char* stackd_address(const char* path) {
  if (path != nullptr && path[0] != '\0') return path;
  const char* env = std::getenv("XCP_STACKD_SOCKET");
  return env != nullptr && env[0] != '\0' ? env : "@xcp-stackd";
}

int listen_unix(const char* address) {
  sockaddr_un sa;
  const socklen_t len = make_address(address, sa);
  if (len == 0) return -1;
  const int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return -1;
  if (address[0] != '@') unlink(address);
  if (bind(fd, reinterpret_cast<sockaddr*>(&sa), len) != 0 || listen(fd, 128) != 0) {
    const int e = errno;
    close(fd);
    errno = e;
    return -1;
  }
  return fd;
}

int connect_unix(const char* address) {
  sockaddr_un sa;
  const socklen_t len = make_address(address, sa);
  if (len == 0) return -1;
  const int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  if (connect(fd, reinterpret_cast<sockaddr*>(&sa), len) != 0) {
    const int e = errno;
    close(fd);
    errno = e;
    return -1;
  }
  return fd;
}

ssize_t send_message(int sock, const void* buf, size_t len, int fd, int flags) {
  iovec iov{const_cast<void*>(buf), len};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  if (fd >= 0) {
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &fd, sizeof fd);
  }
  ssize_t n;
  do {
    n = sendmsg(sock, &msg, flags | MSG_NOSIGNAL);
  } while (n < 0 && errno == EINTR);
  return n;
}

ssize_t recv_message(int sock, void* buf, size_t len, int* fd, bool cloexec, int flags) {
  iovec iov{buf, len};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  *fd = -1;
  ssize_t n;
  do {
    n = recvmsg(sock, &msg, flags | (cloexec ? MSG_CMSG_CLOEXEC : 0));
  } while (n < 0 && errno == EINTR);
  if (n < 0) return n;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) std::memcpy(fd, CMSG_DATA(c), sizeof *fd);
  }
  return n;
}

}  // namespace xcpsock
