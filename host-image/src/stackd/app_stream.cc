#include "stackd/app_stream.hh"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>

namespace xcpstackd {
namespace {
// Bytes moved from the application per read(): a few segments' worth, so one
// busy connection cannot hold the loop for long.
constexpr size_t kReadChunk = 64 * 1024;
// The automatic send limit is twice the congestion window (Linux's
// tcp_sndbuf_expand: two windows, so the next one is buffered while one is
// in flight), at least this much so slow start is never held back.
constexpr size_t kMinAutoSendBytes = 64 * 1024;
}  // namespace

AppStream::AppStream(xcp::FileDescriptor app, size_t max_backlog, size_t max_send)
    : app_(std::move(app)), max_backlog_(max_backlog), max_send_(max_send) {
  if (app_.valid()) xcp::check_syscall("fcntl(O_NONBLOCK)", fcntl(app_.get(), F_SETFL, O_NONBLOCK));
}

size_t AppStream::send_limit() const {
  if (sndbuf_ > 0) return std::min(sndbuf_, max_send_);
  const size_t cwnd = conn_ != nullptr ? static_cast<size_t>(conn_->controller().cwnd_bytes()) : 0;
  return std::min(std::max(2 * cwnd, kMinAutoSendBytes), max_send_);
}

size_t AppStream::send_room() const {
  if (conn_ == nullptr || closed_) return 0;
  const size_t held = conn_->send_buffered(), limit = send_limit();
  return held >= limit ? 0 : std::min(limit - held, conn_->send_space());
}

bool AppStream::drop_filler() {
  std::array<uint8_t, 4096> buf;
  while (discard_ > 0) {
    const ssize_t n = read(app_.get(), buf.data(), std::min(discard_, buf.size()));
    if (n > 0) {
      discard_ -= static_cast<size_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      if (n == 0) discard_ = 0;  // the application closed before it could write anything
      return discard_ == 0;
    }
  }
  return true;
}

void AppStream::on_data(xcphost::Connection&, std::span<const uint8_t> d) {
  if (app_gone_) return;
  if (backlog_bytes() + d.size() > max_backlog_) {
    overflow_ = true;  // the daemon resets the connection after this iteration
    return;
  }
  if (to_app_off_ == to_app_.size()) {
    to_app_.clear();
    to_app_off_ = 0;
  }
  to_app_.insert(to_app_.end(), d.begin(), d.end());
}

void AppStream::on_closed(xcphost::Connection& c) {
  closed_ = true;
  error_ = c.error();
  final_ = snapshot_of(c, xcphost::CcKind::kNewReno);  // the daemon knows the cc
}

void AppStream::on_send_space(xcphost::Connection& c) {
  if (app_eof_ || !drop_filler()) return;
  std::array<uint8_t, kReadChunk> buf;
  size_t space = std::min(send_room(), c.send_space());
  while (space > 0) {
    const ssize_t n = read(app_.get(), buf.data(), std::min(space, buf.size()));
    if (n > 0) {
      const size_t put = c.write(std::span<const uint8_t>(buf.data(), static_cast<size_t>(n)));
      space -= put;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    app_eof_ = true;
    if (n < 0 && errno == ECONNRESET) {
      app_reset_ = true;  // the daemon resets the connection after this iteration
      return;
    }
    // EOF, or the application end failed: send our FIN
    c.close();
    return;
  }
}

short AppStream::poll_events() const {
  short ev = 0;
  // Read from the application only when the connection can take bytes;
  // otherwise level-triggered poll would spin.
  if (established_ && !closed_ && !app_eof_ && (discard_ > 0 || send_room() > 0)) ev |= POLLIN;
  if (!app_gone_ && backlog_bytes() > 0) ev |= POLLOUT;
  return ev;
}

void AppStream::flush_to_app() {
  while (!app_gone_ && to_app_off_ < to_app_.size()) {
    const ssize_t n = send(app_.get(), to_app_.data() + to_app_off_, to_app_.size() - to_app_off_,
                           MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      to_app_off_ += static_cast<size_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      return;
    } else {
      app_gone_ = true;  // EPIPE: the application closed its end
    }
  }
  if (to_app_off_ == to_app_.size() && !to_app_.empty()) {
    to_app_.clear();
    to_app_off_ = 0;
  } else if (to_app_off_ > kReadChunk && to_app_off_ * 2 > to_app_.size()) {
    // Compact: the held bytes stay at most twice the backlog.
    to_app_.erase(to_app_.begin(), to_app_.begin() + static_cast<std::ptrdiff_t>(to_app_off_));
    to_app_off_ = 0;
  }
  if ((peer_fin_ || closed_) && !shut_wr_ && backlog_bytes() == 0) {
    shutdown(app_.get(), SHUT_WR);  // the application reads EOF
    shut_wr_ = true;
  }
}

}  // namespace xcpstackd
