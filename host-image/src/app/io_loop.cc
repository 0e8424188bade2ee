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
}  // namespace

void IoLoop::run(const Hooks& hooks) {
  for (;;) {
    xcp::Timestamp now = clock_.now();
    size_t got = 0;
    const auto on_packet = [&](const RxPacket& p) {
      if (xcpi_ && xcpi_->on_packet(p.src, p.ttl, p.shim, p.ip_header_bytes, now, p.arrival)) return;
      ep_.on_packet(p.src, p.shim, now);
    };
    for (int i = 0; i < kMaxRxBatchesPerIteration; ++i) {
      const size_t n = rx_.receive_packets(on_packet);
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
    pollfd pfd[2] = {{sock_.fd(), static_cast<short>(POLLIN | (out_fd == sock_.fd() ? POLLOUT : 0)), 0},
                     {out_fd, POLLOUT, 0}};
    const nfds_t nfds = out_fd >= 0 && out_fd != sock_.fd() ? 2 : 1;
    const timespec ts{static_cast<time_t>(sleep.ns() / 1'000'000'000), static_cast<long>(sleep.ns() % 1'000'000'000)};
    if (ppoll(pfd, nfds, &ts, nullptr) < 0 && errno != EINTR) throw xcp::SystemError("ppoll", errno);
  }
}

}  // namespace xcphost
