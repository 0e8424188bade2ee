// Ownership of OS handles and syscall error reporting.
// Every fd has exactly one owner, is CLOEXEC from birth (callers pass
// *_CLOEXEC flags) and is closed by its owner's destructor.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace xcp {

// A failed system call, naming the action that failed and errno's text.
class SystemError : public std::runtime_error {
 public:
  SystemError(std::string_view action, int err);
  int error_code() const { return errno_; }

 private:
  int errno_;
};

// Returns `rc` when it is not negative, else throws SystemError(action, errno).
long check_syscall(std::string_view action, long rc);

class FileDescriptor {
 public:
  FileDescriptor() = default;
  explicit FileDescriptor(int fd);  // takes ownership; throws if fd < 0
  ~FileDescriptor();
  FileDescriptor(FileDescriptor&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  FileDescriptor& operator=(FileDescriptor&& o) noexcept;
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  void close();

 private:
  int fd_ = -1;
};

}  // namespace xcp
