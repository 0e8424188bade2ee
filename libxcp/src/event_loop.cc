#include "xcp/event_loop.hh"

#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <vector>

namespace xcp {

EventLoop::EventLoop(const Clock& clock)
    : clock_(clock),
      epoll_(static_cast<int>(check_syscall("epoll_create1", epoll_create1(EPOLL_CLOEXEC)))),
      timerfd_(static_cast<int>(check_syscall(
          "timerfd_create", timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK)))) {
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = timerfd_.get();
  check_syscall("epoll_ctl(timerfd)", epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, timerfd_.get(), &ev));
}

void EventLoop::add_reader(int fd, Callback on_readable) {
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = fd;
  check_syscall("epoll_ctl(add)", epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, fd, &ev));
  readers_[fd] = std::move(on_readable);
}

void EventLoop::remove_reader(int fd) {
  if (readers_.erase(fd) > 0) epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, fd, nullptr);
}

EventLoop::TimerId EventLoop::schedule(Timestamp deadline, Callback cb) {
  const TimerId id = next_id_++;
  timers_.emplace(std::make_pair(deadline, id), std::move(cb));
  timer_deadlines_.emplace(id, deadline);
  if (deadline < armed_at_) arm_timerfd();
  return id;
}

void EventLoop::cancel(TimerId id) {
  auto it = timer_deadlines_.find(id);
  if (it == timer_deadlines_.end()) return;
  timers_.erase({it->second, id});
  timer_deadlines_.erase(it);
}

void EventLoop::arm_timerfd() {
  itimerspec spec{};
  if (timers_.empty()) {
    armed_at_ = Timestamp::max();
  } else {
    armed_at_ = timers_.begin()->first.first;
    // A zero it_value disarms; an already-due deadline must still fire.
    const int64_t ns = std::max<int64_t>(armed_at_.ns(), 1);
    spec.it_value.tv_sec = ns / 1'000'000'000;
    spec.it_value.tv_nsec = ns % 1'000'000'000;
  }
  check_syscall("timerfd_settime",
                timerfd_settime(timerfd_.get(), TFD_TIMER_ABSTIME, &spec, nullptr));
}

void EventLoop::fire_due_timers() {
  uint64_t expirations = 0;
  while (::read(timerfd_.get(), &expirations, sizeof expirations) > 0) {
  }
  const Timestamp now = clock_.now();
  while (!timers_.empty() && timers_.begin()->first.first <= now) {
    auto node = timers_.extract(timers_.begin());
    timer_deadlines_.erase(node.key().second);
    const Duration late = now - node.key().first;
    if (late > lateness_threshold_) ++late_timers_;
    lateness_.record(late);
    node.mapped()();
  }
  arm_timerfd();
}

void EventLoop::run_once(Duration max_wait) {
  std::array<epoll_event, 64> events{};
  // epoll_pwait2: a nanosecond timeout (epoll_wait's milliseconds would turn
  // a 300 us wait into a busy poll), and no timerfd to reprogram per wait.
  const int64_t wait_ns = max_wait.is_infinite() ? 0 : std::max<int64_t>(max_wait.ns(), 0);
  const timespec timeout{static_cast<time_t>(wait_ns / 1'000'000'000), static_cast<long>(wait_ns % 1'000'000'000)};
  const int n = epoll_pwait2(epoll_.get(), events.data(), static_cast<int>(events.size()),
                             max_wait.is_infinite() ? nullptr : &timeout, nullptr);
  if (n < 0) {
    if (errno == EINTR) return;
    throw SystemError("epoll_pwait2", errno);
  }
  for (int i = 0; i < n; ++i) {
    const int fd = events[static_cast<size_t>(i)].data.fd;
    if (fd == timerfd_.get()) {
      fire_due_timers();
      continue;
    }
    auto it = readers_.find(fd);
    if (it != readers_.end()) {
      Callback cb = it->second;  // the callback may remove itself
      cb();
    }
  }
  // Timers can fall due while readers run; do not wait a wakeup for them.
  if (!timers_.empty() && timers_.begin()->first.first <= clock_.now()) fire_due_timers();
}

void EventLoop::run() {
  stopped_ = false;
  while (!stopped_) run_once(Duration::infinite());
}

}  // namespace xcp
