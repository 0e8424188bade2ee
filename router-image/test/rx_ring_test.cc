// The receive ring is sized from the port's link rate (issue 17: a 1000-port
// engine held 4 GiB of rings and took 17 s to start), within the bound
// engine.rx_ring_slots, and open_many() opens many ports at once.
#include "core/rx_ring.hh"

#include <gtest/gtest.h>

#include <fcntl.h>

#include <algorithm>
#include <cerrno>
#include <stdexcept>

#include "core/port.hh"

namespace xcprouter {
namespace {

xcp::Rate mbps(double m) { return xcp::Rate::from_megabits_per_s(m); }

TEST(RxRingSizing, FollowsTheLinkRateWithinTheBound) {
  EXPECT_EQ(RxRing::slots_for(mbps(0.001)), RxRing::kMinSlots);
  EXPECT_EQ(RxRing::slots_for(mbps(10)), 64u);     // 8.3 frames of 1500 B in 10 ms -> the floor
  EXPECT_EQ(RxRing::slots_for(mbps(100)), 96u);    // 83.3 -> 3 blocks of 32
  EXPECT_EQ(RxRing::slots_for(mbps(1000)), 864u);  // 833.3 -> 27 blocks
  EXPECT_EQ(RxRing::slots_for(mbps(10000)), RxRing::kMaxSlots);
  EXPECT_EQ(RxRing::slots_for(xcp::Rate::zero()), RxRing::kMaxSlots);  // unknown: the largest
  // At least what the emulated ingress queue holds: an 80 Mb/s access link with a
  // 200-packet buffer (fig2c's) needs 224 slots, not 10 ms's 96; never past the bound.
  EXPECT_EQ(RxRing::slots_for(mbps(80), 200), 224u);
  EXPECT_EQ(RxRing::slots_for(mbps(80), 10), 96u);
  EXPECT_EQ(RxRing::slots_for(mbps(80), 100000), RxRing::kMaxSlots);
  // A queue limit in frames: its packets, or its bytes in 1500 B frames (rounded up).
  EXPECT_EQ(RxRing::frames_held(200, 0), 200u);
  EXPECT_EQ(RxRing::frames_held(0, 300000), 200u);
  EXPECT_EQ(RxRing::frames_held(0, 300001), 201u);
  EXPECT_EQ(RxRing::frames_held(0, 0), 0u);
  EXPECT_EQ(RxRing::kMinSlots, 64u);
  EXPECT_EQ(RxRing::kMaxSlots, 2048u);
}

TEST(RxRingSizing, IsMonotoneAndAlwaysWholeBlocks) {
  size_t last = 0;
  for (double m = 0.01; m < 1e5; m *= 1.3) {
    const size_t s = RxRing::slots_for(mbps(m));
    EXPECT_GE(s, last);
    EXPECT_EQ(s % RxRing::kFramesPerBlock, 0u);
    EXPECT_GE(static_cast<double>(s) * RxRing::kSizingFrameBytes,
              std::min(static_cast<double>(RxRing::kMaxSlots) * RxRing::kSizingFrameBytes,
                       mbps(m).bytes_per_s() * RxRing::kSizingWindow.seconds_f()));
    last = s;
  }
}

TEST(RxRingSizing, RefusesSlotsOutsideTheBound) {
  EXPECT_THROW(RxRing(-1, 32), std::invalid_argument);
  EXPECT_THROW(RxRing(-1, 100), std::invalid_argument);
  EXPECT_THROW(RxRing(-1, 4096), std::invalid_argument);
}

// Real AF_PACKET sockets on the loopback interface (root, as the engine's
// tests run): the kernel maps exactly the ring the rate asks for.
TEST(PortOpenMany, OpensEachPortWithTheRingOfItsRate) {
  const std::vector<PortRequest> req = {
      {"", "lo", mbps(10)}, {"", "lo", mbps(1000)}, {"", "lo", xcp::Rate::zero()}};
  const auto ports = Port::open_many(req);
  ASSERT_EQ(ports.size(), 3u);
  for (const auto& p : ports) {
    ASSERT_TRUE(p);
    if (!p->uses_rx_ring()) GTEST_SKIP() << "kernel refused PACKET_RX_RING";
  }
  EXPECT_EQ(ports[0]->rx_ring_bytes(), 64u * RxRing::kFrameSize);
  EXPECT_EQ(ports[1]->rx_ring_bytes(), 864u * RxRing::kFrameSize);
  EXPECT_EQ(ports[2]->rx_ring_bytes(), 2048u * RxRing::kFrameSize);
}

TEST(PortOpenMany, NamesTheFirstPortThatFailed) {
  const std::vector<PortRequest> req = {{"", "lo", mbps(10)}, {"", "xcplab-nosuch0", mbps(10)},
                                        {"/nonexistent/netns", "lo", mbps(10)}};
  try {
    Port::open_many(req);
    FAIL() << "opened a missing interface";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("xcplab-nosuch0"), std::string::npos) << e.what();
  }
}

// close_many closes every socket (the engine's exit: one after another, 280
// ports took 7 s of kernel grace periods).
TEST(PortCloseMany, ClosesEveryPortAndEmptiesTheVector) {
  std::vector<PortRequest> req(40, PortRequest{"", "lo", mbps(10)});
  auto ports = Port::open_many(req);
  std::vector<int> fds;
  for (const auto& p : ports) fds.push_back(p->fd());
  for (int fd : fds) ASSERT_NE(::fcntl(fd, F_GETFD), -1);
  Port::close_many(ports);
  EXPECT_TRUE(ports.empty());
  for (int fd : fds) {
    errno = 0;
    EXPECT_EQ(::fcntl(fd, F_GETFD), -1) << "fd " << fd << " still open";
    EXPECT_EQ(errno, EBADF);
  }
  std::vector<std::unique_ptr<Port>> none;
  Port::close_many(none);  // nothing to close: no threads, no error
  EXPECT_TRUE(none.empty());
}

}  // namespace
}  // namespace xcprouter
