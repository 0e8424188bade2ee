// Discrete-event core of the simulated-time tests: timed callbacks in
// (time, insertion) order plus "deadline sources" polled before every event,
// which is how a queue discipline's next_deadline()/on_deadline() are driven
// exactly as the engine's event loop drives them.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <queue>
#include <vector>

#include "xcp/units.hh"

namespace xcprouter::sim {

// A simulated instant `s` seconds after time zero, for the tests' schedules.
inline xcp::Timestamp at_s(double s) { return xcp::Timestamp::zero() + xcp::Duration::seconds(s); }

class EventQueue {
 public:
  using Fn = std::function<void(xcp::Timestamp)>;

  void at(xcp::Timestamp t, Fn fn) { events_.push(Event{t, seq_++, std::move(fn)}); }

  void add_deadline_source(std::function<std::optional<xcp::Timestamp>()> next, Fn fire) {
    sources_.push_back({std::move(next), std::move(fire)});
  }

  // Runs everything due up to and including `end`; now() is `end` afterwards.
  void run_until(xcp::Timestamp end) {
    for (;;) {
      xcp::Timestamp t_event = events_.empty() ? xcp::Timestamp::max() : events_.top().t;
      // A deadline source due no later than the next event fires first.
      const Source* due = nullptr;
      xcp::Timestamp t_due = xcp::Timestamp::max();
      for (const auto& s : sources_) {
        if (auto d = s.next(); d && *d < t_due) {
          t_due = *d;
          due = &s;
        }
      }
      if (due && t_due <= t_event && t_due <= end) {
        now_ = std::max(now_, t_due);
        due->fire(now_);
        continue;
      }
      if (t_event > end) break;
      Event e = events_.top();
      events_.pop();
      now_ = e.t;
      e.fn(now_);
    }
    now_ = end;
  }

  xcp::Timestamp now() const { return now_; }

 private:
  struct Event {
    xcp::Timestamp t;
    uint64_t seq;
    Fn fn;
    bool operator>(const Event& o) const { return t != o.t ? t > o.t : seq > o.seq; }
  };
  struct Source {
    std::function<std::optional<xcp::Timestamp>()> next;
    Fn fire;
  };
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
  std::vector<Source> sources_;
  uint64_t seq_ = 0;
  xcp::Timestamp now_{};
};

}  // namespace xcprouter::sim
