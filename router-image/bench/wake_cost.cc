// xcp-wake-cost: what one sleep-and-wake-up costs on this machine, the floor
// under the engine's CPU whenever events are farther apart than a wake-up
// (issue 22: one wake per emulated departure at 100 Mb/s is 8.3k wakes/s).
//   xcp-wake-cost PERIOD_US COUNT [SCHED_FIFO_PRIORITY]
// For each of the sleeps an event loop can use (clock_nanosleep with an
// absolute deadline, epoll_pwait2 with a timeout, a timerfd armed with
// TFD_TIMER_ABSTIME and read), sleeps to COUNT absolute deadlines PERIOD_US
// apart and doing nothing else, then prints one JSON line per primitive: the
// process CPU per wake-up (user + system, as the engine's busy fraction
// counts it) and how late the wake-ups came back (mean, p99, max).
#include <sched.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

int64_t now_ns(clockid_t c) {
  timespec t{};
  ::clock_gettime(c, &t);
  return static_cast<int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

timespec to_ts(int64_t ns) { return {static_cast<time_t>(ns / 1'000'000'000), static_cast<long>(ns % 1'000'000'000)}; }

// Sleeps until the absolute CLOCK_MONOTONIC time `at` with one primitive.
struct Sleeper {
  int epfd = -1, tfd = -1;
  Sleeper() {
    epfd = ::epoll_create1(EPOLL_CLOEXEC);
    tfd = ::timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = tfd;
    if (epfd < 0 || tfd < 0 || ::epoll_ctl(epfd, EPOLL_CTL_ADD, tfd, &ev) != 0) {
      std::perror("xcp-wake-cost: epoll/timerfd");
      std::exit(1);
    }
  }
  void sleep(const std::string& how, int64_t at) const {
    if (how == "clock_nanosleep") {
      const timespec d = to_ts(at);
      while (::clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &d, nullptr) != 0) {
      }
    } else if (how == "epoll_pwait2") {
      // The set holds only the timerfd, not armed yet: the timeout ends the wait.
      const timespec d = to_ts(std::max<int64_t>(at - now_ns(CLOCK_MONOTONIC), 0));
      epoll_event e{};
      // A kernel without epoll_pwait2 (ENOSYS) would return at once: the loop would
      // spin and report a near-zero cost that the bench's min() then picks.
      if (::epoll_pwait2(epfd, &e, 1, &d, nullptr) < 0 && errno != EINTR) {
        std::perror("xcp-wake-cost: epoll_pwait2");
        std::exit(1);
      }
    } else {  // timerfd
      itimerspec spec{};
      spec.it_value = to_ts(std::max<int64_t>(at, 1));
      ::timerfd_settime(tfd, TFD_TIMER_ABSTIME, &spec, nullptr);
      uint64_t expirations = 0;
      while (::read(tfd, &expirations, sizeof expirations) < 0) {
      }
    }
  }
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s PERIOD_US COUNT [SCHED_FIFO_PRIORITY]\n", argv[0]);
    return 2;
  }
  const long period_us = std::strtol(argv[1], nullptr, 10);
  const long count = std::strtol(argv[2], nullptr, 10);
  const long prio = argc > 3 ? std::strtol(argv[3], nullptr, 10) : 0;
  // Bounds: the run lasts period x count x 3 primitives; at most about a minute.
  if (period_us < 1 || period_us > 1'000'000 || count < 10 || count > 1'000'000 ||
      period_us * count > 20'000'000 || prio < 0 || prio > 99) {
    std::fprintf(stderr,
                 "xcp-wake-cost: PERIOD_US must be 1..1000000, COUNT 10..1000000 with PERIOD_US x COUNT "
                 "<= 20 s, SCHED_FIFO_PRIORITY 0..99; got %s %s %s\n",
                 argv[1], argv[2], argc > 3 ? argv[3] : "0");
    return 2;
  }
  // As the engine: no timer slack (the default 50 us would blur every deadline).
  ::prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
  if (prio > 0) {
    sched_param sp{};
    sp.sched_priority = static_cast<int>(prio);
    if (::sched_setscheduler(0, SCHED_FIFO, &sp) != 0) {
      std::perror("xcp-wake-cost: sched_setscheduler(SCHED_FIFO)");
      return 1;
    }
  }
  const Sleeper s;
  std::vector<int64_t> late(static_cast<size_t>(count));
  for (const char* how : {"clock_nanosleep", "epoll_pwait2", "timerfd"}) {
    const int64_t c0 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
    const int64_t w0 = now_ns(CLOCK_MONOTONIC);
    int64_t at = w0;
    for (long i = 0; i < count; ++i) {
      at += period_us * 1000;
      s.sleep(how, at);
      late[static_cast<size_t>(i)] = std::max<int64_t>(now_ns(CLOCK_MONOTONIC) - at, 0);
    }
    const int64_t cpu = now_ns(CLOCK_PROCESS_CPUTIME_ID) - c0;
    const int64_t wall = now_ns(CLOCK_MONOTONIC) - w0;
    double sum = 0;
    for (int64_t l : late) sum += static_cast<double>(l);
    std::vector<int64_t> sorted = late;
    std::sort(sorted.begin(), sorted.end());
    const int64_t p99 = sorted[static_cast<size_t>(static_cast<double>(count - 1) * 0.99)];
    std::printf(
        "{\"primitive\": \"%s\", \"period_us\": %ld, \"wakes\": %ld, \"cpu_us_per_wake\": %.3f, "
        "\"cpu_fraction\": %.4f, \"late_mean_us\": %.2f, \"late_p99_us\": %.2f, \"late_max_us\": %.2f}\n",
        how, period_us, count, static_cast<double>(cpu) / 1e3 / static_cast<double>(count),
        static_cast<double>(cpu) / static_cast<double>(wall), sum / 1e3 / static_cast<double>(count),
        static_cast<double>(p99) / 1e3, static_cast<double>(sorted.back()) / 1e3);
    std::fflush(stdout);
  }
  return 0;
}
