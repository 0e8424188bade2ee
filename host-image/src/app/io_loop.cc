#include "app/io_loop.hh"

#include <poll.h>

#include <algorithm>
#include <cerrno>

#include "xcp/fd.hh"

namespace xcphost {
namespace {
// Batches drained per iteration before timers and sending get their turn.
constexpr int kMaxRxBatchesPerIteration = 8;
// Upper bound on one sleep, so signals and caller deadlines stay responsive.
constexpr xcp::Duration kMaxSleep = xcp::Duration::milliseconds(50);
// With an AF_XDP socket the raw socket carries only what the XDP program
// passes (XCP-i control messages, fragments...): read it when poll said so,
// and at least this often while the loop never sleeps.
constexpr xcp::Duration kRawCheckInterval = xcp::Duration::milliseconds(1);
}  // namespace

void IoLoop::run(const Hooks& hooks) {
  XdpSocket* const xdp = rx_.xdp();
  bool raw_readable = true;
  xcp::Timestamp raw_read_at{};
  for (;;) {
    xcp::Timestamp now = clock_.now();
    size_t got = 0;
    const auto on_packet = [&](const RxPacket& p) {
      if (xcpi_ && xcpi_->on_packet(p.src, p.ttl, p.shim, p.ip_header_bytes, now, p.arrival)) return;
      ep_.on_packet(p.src, p.shim, now);
    };
    for (int i = 0; i < kMaxRxBatchesPerIteration; ++i) {
      size_t n = 0;
      if (xdp != nullptr) {
        n += rx_.receive_xdp(on_packet);
        if (raw_readable || now - raw_read_at >= kRawCheckInterval) {
          const size_t m = rx_.receive_packets(on_packet);
          raw_readable = m == rx_.batch_packets();
          raw_read_at = now;
          n += m;
        }
      } else {
        n = rx_.receive_packets(on_packet);
      }
      got += n;
      if (n == 0) break;
    }
    now = clock_.now();
    if (xcpi_) xcpi_->advance(now);
    ep_.service(now);
    tx_.flush();
    if (!hooks.step(now)) break;
    tx_.flush();
    if (got > 0) continue;  // more may be queued: poll again without sleeping

    xcp::Timestamp wake = std::min(ep_.next_deadline(), hooks.next_wake());
    if (xcpi_) wake = std::min(wake, xcpi_->next_deadline());
    const xcp::Duration sleep = std::clamp(wake - clock_.now(), xcp::Duration::zero(), kMaxSleep);
    // Input on the raw socket; room on whichever socket the first unsent
    // packet waits for (the raw or the packet socket, io/tx_batch.hh).
    const int out_fd = tx_.pending_fd();
    // And input on the AF_XDP socket, if any.
    pollfd pfd[3] = {{sock_.fd(), static_cast<short>(POLLIN | (out_fd == sock_.fd() ? POLLOUT : 0)), 0},
                     {-1, 0, 0}, {-1, 0, 0}};
    nfds_t nfds = 1;
    if (xdp != nullptr) {
      pfd[nfds++] = {xdp->fd(), static_cast<short>(POLLIN | (out_fd == xdp->fd() ? POLLOUT : 0)), 0};
    }
    if (out_fd >= 0 && out_fd != sock_.fd() && (xdp == nullptr || out_fd != xdp->fd())) pfd[nfds++] = {out_fd, POLLOUT, 0};
    const timespec ts{static_cast<time_t>(sleep.ns() / 1'000'000'000), static_cast<long>(sleep.ns() % 1'000'000'000)};
    if (ppoll(pfd, nfds, &ts, nullptr) < 0 && errno != EINTR) throw xcp::SystemError("ppoll", errno);
    raw_readable = (pfd[0].revents & POLLIN) != 0;
  }
}

}  // namespace xcphost
