// A single-threaded event loop: epoll for readiness, one timerfd armed at the
// earliest pending deadline (absolute CLOCK_MONOTONIC, nanosecond resolution).
// Timer deadlines are Timestamps of the MonotonicClock.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <unordered_map>

#include "xcp/clock.hh"
#include "xcp/fd.hh"
#include "xcp/lateness_histogram.hh"

namespace xcp {

class EventLoop {
 public:
  using Callback = std::function<void()>;
  using TimerId = uint64_t;

  explicit EventLoop(const Clock& clock);
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  // Calls `on_readable` whenever `fd` is readable (level-triggered). The
  // caller keeps ownership of the fd and must remove it before closing it.
  void add_reader(int fd, Callback on_readable);
  void remove_reader(int fd);

  // Runs `cb` once at or after `deadline`. Returns an id for cancel().
  TimerId schedule(Timestamp deadline, Callback cb);
  void cancel(TimerId id);

  // Dispatches events until stop() is called. Exceptions from callbacks propagate.
  void run();
  // Dispatches what is ready, waiting at most `max_wait` (zero: poll only).
  void run_once(Duration max_wait);
  void stop() { stopped_ = true; }

  const Clock& clock() const { return clock_; }
  // Timer callbacks that ran later than their deadline by more than this are
  // counted in late_timers(): an emulation-fidelity signal.
  void set_lateness_threshold(Duration d) { lateness_threshold_ = d; }
  uint64_t late_timers() const { return late_timers_; }
  Duration max_lateness() const { return lateness_.max(); }
  // Every fired timer's lateness, whatever the threshold.
  const LatenessHistogram& lateness() const { return lateness_; }

 private:
  void arm_timerfd();
  void fire_due_timers();

  const Clock& clock_;
  FileDescriptor epoll_;
  FileDescriptor timerfd_;
  std::unordered_map<int, Callback> readers_;
  // Ordered by (deadline, id) so equal deadlines fire in scheduling order.
  std::map<std::pair<Timestamp, TimerId>, Callback> timers_;
  std::unordered_map<TimerId, Timestamp> timer_deadlines_;
  TimerId next_id_ = 1;
  Timestamp armed_at_ = Timestamp::max();
  bool stopped_ = false;
  Duration lateness_threshold_ = Duration::microseconds(500);
  uint64_t late_timers_ = 0;
  LatenessHistogram lateness_;
};

}  // namespace xcp
