#include "xcp/event_loop.hh"

#include <gtest/gtest.h>
#include <fcntl.h>
#include <unistd.h>

#include <vector>

namespace xcp {
namespace {

TEST(EventLoop, TimersFireInDeadlineOrderAndCancelWorks) {
  MonotonicClock clock;
  EventLoop loop(clock);
  std::vector<int> order;
  const Timestamp t0 = clock.now();
  loop.schedule(t0 + Duration::milliseconds(3), [&] { order.push_back(3); loop.stop(); });
  loop.schedule(t0 + Duration::milliseconds(1), [&] { order.push_back(1); });
  const auto id = loop.schedule(t0 + Duration::milliseconds(2), [&] { order.push_back(2); });
  loop.cancel(id);
  loop.run();
  EXPECT_EQ(order, (std::vector<int>{1, 3}));
  EXPECT_GE(clock.now() - t0, Duration::milliseconds(3));
}

TEST(EventLoop, ReaderIsCalledWhenReadable) {
  MonotonicClock clock;
  EventLoop loop(clock);
  int fds[2];
  ASSERT_EQ(pipe2(fds, O_CLOEXEC | O_NONBLOCK), 0);
  FileDescriptor r(fds[0]), w(fds[1]);
  char got = 0;
  loop.add_reader(r.get(), [&] {
    ASSERT_EQ(::read(r.get(), &got, 1), 1);
    loop.stop();
  });
  ASSERT_EQ(::write(w.get(), "x", 1), 1);
  loop.run();
  EXPECT_EQ(got, 'x');
  loop.remove_reader(r.get());
}

}  // namespace
}  // namespace xcp
