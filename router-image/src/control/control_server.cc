#include "control/control_server.hh"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace xcprouter {

ControlServer::ControlServer(xcp::EventLoop& loop, std::string path, Handler handler)
    : loop_(loop), path_(std::move(path)), handler_(std::move(handler)) {
  sockaddr_un addr{};
  if (path_.size() >= sizeof addr.sun_path) throw std::invalid_argument("control socket path too long: " + path_);
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path_.c_str(), path_.size() + 1);
  listener_ = xcp::FileDescriptor(static_cast<int>(xcp::check_syscall(
      "socket(AF_UNIX)", ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0))));
  ::unlink(path_.c_str());  // a stale socket from a previous run
  xcp::check_syscall("bind(" + path_ + ")", ::bind(listener_.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr));
  xcp::check_syscall("listen(" + path_ + ")", ::listen(listener_.get(), 16));
  loop_.add_reader(listener_.get(), [this] { on_accept(); });
}

ControlServer::~ControlServer() {
  for (auto& [fd, c] : clients_) loop_.remove_reader(fd);
  loop_.remove_reader(listener_.get());
  ::unlink(path_.c_str());
}

void ControlServer::on_accept() {
  for (;;) {
    const int fd = ::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) return;  // EAGAIN, or a client that vanished
    Client c;
    c.fd = xcp::FileDescriptor(fd);
    clients_.emplace(fd, std::move(c));
    loop_.add_reader(fd, [this, fd] { on_readable(fd); });
  }
}

void ControlServer::on_readable(int fd) {
  auto it = clients_.find(fd);
  if (it == clients_.end()) return;
  Client& c = it->second;
  char buf[16384];
  const ssize_t n = ::read(fd, buf, sizeof buf);
  if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
    drop_client(fd);
    return;
  }
  if (n < 0) return;
  c.in.append(buf, static_cast<size_t>(n));
  size_t start = 0;
  for (size_t nl; (nl = c.in.find('\n', start)) != std::string::npos; start = nl + 1) {
    std::string line = c.in.substr(start, nl - start);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    c.out += handler_(line);
    c.out += '\n';
  }
  c.in.erase(0, start);
  if (c.in.size() > kMaxLine || c.out.size() > kMaxPendingOutput) {
    drop_client(fd);  // a client that floods or never reads: cut it off, keep forwarding
    return;
  }
  write_some(c);
}

void ControlServer::write_some(Client& c) {
  while (!c.out.empty()) {
    const ssize_t n = ::send(c.fd.get(), c.out.data(), c.out.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n <= 0) return;  // EAGAIN: retried by flush_pending(); errors surface on the next read
    c.out.erase(0, static_cast<size_t>(n));
  }
}

void ControlServer::flush_pending() {
  for (auto& [fd, c] : clients_) {
    if (!c.out.empty()) write_some(c);
  }
}

void ControlServer::drop_client(int fd) {
  loop_.remove_reader(fd);
  clients_.erase(fd);
}

}  // namespace xcprouter
