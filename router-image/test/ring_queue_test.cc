#include "util/ring_queue.hh"

#include <gtest/gtest.h>

#include <deque>
#include <random>

namespace xcprouter {
namespace {

TEST(RingQueue, BehavesLikeADequeAcrossGrowth) {
  RingQueue<int> q(2);
  std::deque<int> ref;
  std::mt19937 rng(3);
  for (int i = 0; i < 100000; ++i) {
    if (ref.empty() || rng() % 3 != 0) {
      q.push_back(i);
      ref.push_back(i);
    } else {
      ASSERT_EQ(q.front(), ref.front());
      ASSERT_EQ(q.pop_front(), ref.front());
      ref.pop_front();
    }
    ASSERT_EQ(q.size(), ref.size());
  }
}

}  // namespace
}  // namespace xcprouter
