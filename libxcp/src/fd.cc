#include "xcp/fd.hh"

#include <cerrno>
#include <cstring>
#include <unistd.h>

namespace xcp {

SystemError::SystemError(std::string_view action, int err)
    : std::runtime_error(std::string(action) + ": " + std::strerror(err)), errno_(err) {}

long check_syscall(std::string_view action, long rc) {
  if (rc < 0) throw SystemError(action, errno);
  return rc;
}

FileDescriptor::FileDescriptor(int fd) : fd_(fd) {
  if (fd_ < 0) throw SystemError("FileDescriptor", EBADF);
}

FileDescriptor::~FileDescriptor() { close(); }

FileDescriptor& FileDescriptor::operator=(FileDescriptor&& o) noexcept {
  if (this != &o) {
    close();
    fd_ = std::exchange(o.fd_, -1);
  }
  return *this;
}

void FileDescriptor::close() {
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
}

}  // namespace xcp
